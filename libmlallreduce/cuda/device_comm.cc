#include "libmlallreduce/cuda/device_comm.h"

#include <cstring>
#include <vector>

#include "libmlallreduce/cuda/cuda_util.h"

namespace mla::lib {
namespace cuda {
namespace {

void FreeDeviceComm(void* state) { delete static_cast<DeviceComm*>(state); }

int Build(MPI_Comm comm, const Topology& topo, int device, DeviceComm* dc) {
  dc->device = device;
  cudaDeviceProp prop;
  MLA_CUDA_TRY("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, device));
  std::memcpy(dc->uuid, prop.uuid.bytes, 16);
  MLA_CUDA_TRY("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&dc->stream, cudaStreamNonBlocking));

  // GPU groups: node ranks with the same UUID; the group's color is its
  // first member's node rank.
  std::vector<unsigned char> uuids(static_cast<size_t>(topo.node_size) * 16);
  MLA_MPI_TRY(PMPI_Allgather(dc->uuid, 16, MPI_BYTE, uuids.data(), 16, MPI_BYTE, topo.node));
  int color = topo.node_rank;
  for (int r = 0; r < topo.node_size; ++r) {
    if (std::memcmp(&uuids[r * 16], dc->uuid, 16) == 0) {
      color = r;
      break;
    }
  }
  MLA_MPI_TRY(PMPI_Comm_split(topo.node, color, topo.node_rank, &dc->gpu_group));
  PMPI_Comm_rank(dc->gpu_group, &dc->gpu_rank);
  PMPI_Comm_size(dc->gpu_group, &dc->ppg);
  // Every GPU group of the communicator must hold the same number of ranks:
  // {max, -min} of the group size in one call.
  int shape[2] = {dc->ppg, -dc->ppg};
  MLA_MPI_TRY(PMPI_Allreduce(MPI_IN_PLACE, shape, 2, MPI_INT, MPI_MAX, comm));
  dc->gpus_regular = topo.regular && shape[0] == -shape[1];
  if (!dc->gpus_regular) {
    dc->irregular_reason = topo.regular ? "GPUs shared by different numbers of ranks (" + std::to_string(-shape[1]) +
                                              " to " + std::to_string(shape[0]) + ")"
                                        : topo.irregular_reason;
  }
  MLA_MPI_TRY(PMPI_Comm_split(comm, dc->gpu_rank, topo.rank, &dc->slice));
  PMPI_Comm_size(dc->slice, &dc->slice_size);
  return MPI_SUCCESS;
}

}  // namespace

DeviceComm::~DeviceComm() {
  if (gpu_group != MPI_COMM_NULL) PMPI_Comm_free(&gpu_group);
  if (slice != MPI_COMM_NULL) PMPI_Comm_free(&slice);
  if (stream != nullptr) cudaStreamDestroy(stream);
}

int GetDeviceComm(MPI_Comm comm, const Topology& topo, int device, DeviceComm** out) {
  if (topo.device_state != nullptr) {
    *out = static_cast<DeviceComm*>(topo.device_state);
    return MPI_SUCCESS;
  }
  auto* dc = new DeviceComm();
  int rc = Build(comm, topo, device, dc);
  if (rc != MPI_SUCCESS) {
    delete dc;
    return rc;
  }
  topo.device_state = dc;
  topo.free_device_state = FreeDeviceComm;
  *out = dc;
  return MPI_SUCCESS;
}

}  // namespace cuda
}  // namespace mla::lib
