// device_comm.h: what the CUDA module keeps per communicator: this rank's GPU,
// the GPU groups found from device UUIDs, a stream, the staging pipeline and
// the NCCL lanes.  Hung on the communicator's Topology and freed with it.
#ifndef MLA_CUDA_DEVICE_COMM_H_
#define MLA_CUDA_DEVICE_COMM_H_

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "libmlallreduce/algorithms/topology.h"
#include "libmlallreduce/cuda/flag_group.h"
#include "libmlallreduce/cuda/ipc_cache.h"
#include "libmlallreduce/cuda/nccl_lane.h"
#include "libmlallreduce/cuda/staging.h"

namespace mla::lib {
namespace cuda {

// What one rank sends its IPC group about a call's buffers.
struct Exchange {
  ExportedBuffer send;
  ExportedBuffer recv;
};

// The last exchange of an IPC group, kept so that a call on the same buffers
// as the group's previous call skips the exchange (device_allreduce.cc).
struct ExchangeCache {
  bool valid = false;
  Exchange mine{};
  std::vector<Exchange> all;  // every member's, by group rank
};

struct DeviceComm {
  int device = -1;              // CUDA ordinal of this rank's buffers
  unsigned char uuid[16] = {};  // of that device
  // GPU group: the ranks of this node on the same GPU (same UUID).
  MPI_Comm gpu_group = MPI_COMM_NULL;
  int gpu_rank = 0;
  int ppg = 1;
  // slice: the ranks with this gpu_rank on every GPU of every node.
  MPI_Comm slice = MPI_COMM_NULL;
  int slice_size = 0;
  // Every GPU group of the communicator holds ppg ranks.
  bool gpus_regular = false;
  std::string irregular_reason;
  cudaStream_t stream = nullptr;
  StagingPipeline staging;
  NcclLane lane_nccl;   // over Topology::lane (one rank per node)
  NcclLane slice_nccl;  // over slice (one rank per GPU)
  // The last buffer exchange over the node (lane, hier) and over the GPU
  // group (split).
  ExchangeCache node_exchange;
  ExchangeCache gpu_exchange;
  // The flag path over the node, built on the first call that may take it;
  // null when it cannot run here (flags_off says why).
  bool flags_built = false;
  std::unique_ptr<FlagGroup> flags;
  std::string flags_off;

  ~DeviceComm();
};

// Returns the device state of `comm` (whose topology is `topo`) for buffers on
// `device`, building it on first use (collective over comm).  Returns an MPI
// error code.
int GetDeviceComm(MPI_Comm comm, const Topology& topo, int device, DeviceComm** out);

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_DEVICE_COMM_H_
