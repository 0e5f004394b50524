// module.cc: the entry point of libmlallreduce_cuda.so.
#include <cuda_runtime_api.h>

#include "../device_module.h"
#include "device_allreduce.h"
#include "ipc_cache.h"
#include "staging.h"

namespace mla {
namespace cuda {

const HostServices* g_services = nullptr;

namespace {

// Kind of one pointer: 0 host-like, 1 device memory (cudaMalloc), with its ordinal.
int PointerKind(const void* ptr, int* device) {
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  if (attr.type == cudaMemoryTypeDevice) {
    *device = attr.device;
    return 1;
  }
  return 0;  // unregistered or pinned host memory, or managed memory (CPU-accessible)
}

int Classify(const void* sendbuf, const void* recvbuf) {
  int device = -1;
  const int recv = PointerKind(recvbuf, &device);
  const int send = sendbuf == MPI_IN_PLACE ? recv : PointerKind(sendbuf, &device);
  if (recv && send) return kBuffersDevice;
  if (recv || send) return kBuffersMixed;
  return kBuffersHost;
}

int Allreduce(const AllreduceCall* call, MPI_Comm comm, const Topology* topo, const mla_choice* choice,
              mla_algo* ran) {
  int device = -1;
  PointerKind(call->recvbuf, &device);
  int send_device = device;
  if (call->sendbuf != MPI_IN_PLACE) PointerKind(call->sendbuf, &send_device);
  if (device < 0 || send_device != device) {
    *ran = MLA_ALGO_PASSTHROUGH;
    return StagedAllreduce(call->sendbuf, call->recvbuf, call->count, call->datatype, call->op, comm);
  }
  return DeviceAllreduce(*call, comm, *topo, device, *choice, ran);
}

void IpcStats(uint64_t* opened, uint64_t* hits) {
  IpcCacheStats s = GetIpcCacheStats();
  *opened = s.opened;
  *hits = s.hits;
}

const DeviceModule kModule = {kDeviceModuleAbi, Classify, Allreduce, StagedAllreduce, IpcStats};

}  // namespace
}  // namespace cuda
}  // namespace mla

extern "C" __attribute__((visibility("default"))) const mla::DeviceModule* mla_device_module_init(
    const mla::HostServices* services) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return nullptr;
  }
  mla::cuda::g_services = services;
  return &mla::cuda::kModule;
}
