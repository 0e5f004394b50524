// device_module.h: the interface between libmlallreduce.so and its CUDA
// module, libmlallreduce_cuda.so, which the library loads (dlopen) on the
// first call made by a process that has CUDA loaded.  Both sides are built
// from this header in one build; kDeviceModuleAbi guards against mixing builds.
#ifndef MLA_DEVICE_MODULE_H_
#define MLA_DEVICE_MODULE_H_

#include <mpi.h>

#include "libmlallreduce/algorithms/algorithms.h"
#include "mlallreduce.h"
#include "libmlallreduce/algorithms/topology.h"

namespace mla::lib {

constexpr int kDeviceModuleAbi = 4;

// What the module can ask of the library.
struct HostServices {
  void (*warn_once)(const char* message);  // one line from world rank 0
  int verbose;
  // MULTILANE_DEVICE_SYNC=stream: order device work after the legacy default
  // stream (and every blocking stream) instead of the whole device.
  int sync_on_stream;
  // MULTILANE_DEVICE_FLAG_MAX: largest message (bytes) of the flag path; 0 = off.
  size_t flag_max_bytes;
};

// What DeviceModule::allreduce did: the algorithm that ran, how the data
// moved (mla_device_path), and whether a requested NCCL transport fell back
// to MPI staging.  The same on every rank of the communicator.
struct DeviceRun {
  mla_algo algo = MLA_ALGO_PASSTHROUGH;
  int path = MLA_PATH_STAGED;
  bool nccl_fallback = false;
};

// Buffer kinds of one call, as DeviceModule::classify reports them.
// kBuffersUnknown is never returned by the module: it is the library's own
// verdict when CUDA is in the process but the module is not (buffer_kinds.h).
enum BufferKinds { kBuffersHost = 0, kBuffersDevice = 1, kBuffersMixed = 2, kBuffersUnknown = 3 };

struct DeviceModule {
  int abi;
  // kBuffersDevice when recvbuf (and sendbuf unless MPI_IN_PLACE) are device
  // memory from cudaMalloc, kBuffersMixed when only one of them is,
  // kBuffersHost otherwise (host, pinned host or managed memory).
  int (*classify)(const void* sendbuf, const void* recvbuf);
  // Runs a checked call (count > 0, contiguous datatype, commutative op,
  // intracommunicator of 2 or more ranks, regular topology) on device buffers
  // with `choice`.  Falls back to staging where the choice cannot run and
  // fills *run with what did run.  Collective over comm.
  int (*allreduce)(const AllreduceCall* call, MPI_Comm comm, const Topology* topo, const mla_choice* choice,
                   DeviceRun* run);
  // Any allreduce with device (or mixed) buffers, through pinned host memory
  // and PMPI_Allreduce: the system MPI path for device buffers.  Waits for
  // the device first, so work queued on any stream before the call is done.
  int (*staged)(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
  // IPC handle cache counters: allocations opened, lookups served from cache,
  // allocations closed to stay within the cache's limit.
  void (*ipc_stats)(uint64_t* opened, uint64_t* hits, uint64_t* closed);
  // Sets *ppg to the number of ranks of this rank's node in `comm` whose
  // buffers are on the same GPU as `recvbuf` (same device UUID): the ranks
  // per GPU a profile's `ppg=` is matched against on device buffers.
  // Collective over comm on the first call for a communicator (it builds the
  // GPU groups).  `topo` must be regular.  Returns an MPI error code.
  int (*ranks_per_gpu)(const void* recvbuf, MPI_Comm comm, const Topology* topo, int* ppg);

  // For multilane's own tools (mlprobe, tool_device.h), so that they use
  // device memory without linking CUDA themselves.  Each returns 0 on
  // success, else a CUDA error code (and leaves *ptr null).
  // The number of GPUs this process sees.
  int (*gpu_count)(int* count);
  // cudaSetDevice(device), then cudaMalloc of `bytes` on it.
  int (*buffer_alloc)(int device, size_t bytes, void** ptr);
  // cudaFree.
  int (*buffer_free)(void* ptr);
  // cudaMemcpy of `bytes` (either side host or device), complete on return.
  int (*buffer_copy)(void* dst, const void* src, size_t bytes);
  // Calls run on the flag path (GPU-side synchronisation, docs/gpu.md) in
  // this process, and how many of them one-shot.
  void (*flag_stats)(uint64_t* calls, uint64_t* one_shot);
};

}  // namespace mla::lib

// The module's one exported symbol.  Returns nullptr when CUDA cannot be used
// in this process (no device, driver too old).
extern "C" const mla::lib::DeviceModule* mla_device_module_init(const mla::lib::HostServices* services);

#endif  // MLA_DEVICE_MODULE_H_
