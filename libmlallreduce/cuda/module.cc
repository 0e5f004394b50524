// module.cc: the entry point of libmlallreduce_cuda.so.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "libmlallreduce/device/device_module.h"
#include "libmlallreduce/cuda/device_allreduce.h"
#include "libmlallreduce/cuda/flag_group.h"
#include "libmlallreduce/cuda/ipc_cache.h"
#include "libmlallreduce/cuda/staging.h"

namespace mla::lib {
namespace cuda {

const HostServices* g_services = nullptr;

namespace {

// Kind of one pointer: 0 host-like (unregistered or pinned host memory,
// managed memory, or a pointer the driver does not know), 1 device memory
// (cudaMalloc), with its ordinal.  Every call asks this of its buffers: one
// driver query for the three attributes, which on host memory answers in
// half the time of cudaPointerGetAttributes (about 107 against 213 ns on the
// H100 host) and, unlike it, never sets up the runtime.  Never cached: an
// answer kept for an address is wrong once the host memory there is freed and
// the driver maps device memory at the same address, and nothing cheaper than
// this query tells the library that happened (docs/gpu.md, "Why the buffers'
// kind is asked on every call").
int PointerKind(const void* ptr, int* device) {
  unsigned type = 0, managed = 0;
  int ordinal = -1;
  CUpointer_attribute attributes[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                       CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* values[3] = {&type, &managed, &ordinal};
  if (cuPointerGetAttributes(3, attributes, values, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) return 0;
  if (type != CU_MEMORYTYPE_DEVICE || managed != 0) return 0;
  *device = ordinal;
  return 1;
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
              DeviceRun* run) {
  int device = -1;
  PointerKind(call->recvbuf, &device);
  int send_device = device;
  if (call->sendbuf != MPI_IN_PLACE) PointerKind(call->sendbuf, &send_device);
  if (device < 0 || send_device != device) {
    *run = DeviceRun{};
    return StagedAllreduce(call->sendbuf, call->recvbuf, call->count, call->datatype, call->op, comm);
  }
  return DeviceAllreduce(*call, comm, *topo, device, *choice, run);
}

void IpcStats(uint64_t* opened, uint64_t* hits, uint64_t* closed) {
  IpcCacheStats s = GetIpcCacheStats();
  *opened = s.opened;
  *hits = s.hits;
  *closed = s.closed;
}

void FlagStats(uint64_t* calls, uint64_t* one_shot) {
  *calls = FlagGroup::CallsRun();
  *one_shot = FlagGroup::OneShotCallsRun();
}

int RanksPerGpu(const void* recvbuf, MPI_Comm comm, const Topology* topo, int* ppg) {
  int device = -1;
  PointerKind(recvbuf, &device);
  // Every rank must take part in building the groups: a rank whose buffer is
  // not device memory (which the caller has ruled out) uses device 0's UUID.
  if (device < 0) device = 0;
  return DeviceRanksPerGpu(comm, *topo, device, ppg);
}

int GpuCount(int* count) {
  *count = 0;
  const cudaError_t e = cudaGetDeviceCount(count);
  if (e != cudaSuccess) cudaGetLastError();
  return static_cast<int>(e);
}

int BufferAlloc(int device, size_t bytes, void** ptr) {
  *ptr = nullptr;
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaMalloc(ptr, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *ptr = nullptr;
  }
  return static_cast<int>(e);
}

int BufferFree(void* ptr) { return static_cast<int>(cudaFree(ptr)); }

int BufferCopy(void* dst, const void* src, size_t bytes) {
  cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) cudaGetLastError();
  return static_cast<int>(e);
}

const DeviceModule kModule = {kDeviceModuleAbi, Classify,    Allreduce,  StagedAllreduce, IpcStats, RanksPerGpu,
                              GpuCount,         BufferAlloc, BufferFree, BufferCopy,      FlagStats};

}  // namespace
}  // namespace cuda
}  // namespace mla::lib

extern "C" __attribute__((visibility("default"))) const mla::lib::DeviceModule* mla_device_module_init(
    const mla::lib::HostServices* services) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return nullptr;
  }
  mla::lib::cuda::g_services = services;
  return &mla::lib::cuda::kModule;
}
