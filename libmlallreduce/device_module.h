// device_module.h: the interface between libmlallreduce.so and its CUDA
// module, libmlallreduce_cuda.so, which the library loads (dlopen) on the
// first call made by a process that has CUDA loaded.  Both sides are built
// from this header in one build; kDeviceModuleAbi guards against mixing builds.
#ifndef MLA_DEVICE_MODULE_H_
#define MLA_DEVICE_MODULE_H_

#include <mpi.h>

#include "algorithms.h"
#include "mlallreduce.h"
#include "topology.h"

namespace mla {

constexpr int kDeviceModuleAbi = 1;

// What the module can ask of the library.
struct HostServices {
  void (*warn_once)(const char* message);  // one line from world rank 0
  int verbose;
};

// Buffer kinds of one call, as DeviceModule::classify reports them.
enum BufferKinds { kBuffersHost = 0, kBuffersDevice = 1, kBuffersMixed = 2 };

struct DeviceModule {
  int abi;
  // kBuffersDevice when recvbuf (and sendbuf unless MPI_IN_PLACE) are device
  // memory from cudaMalloc, kBuffersMixed when only one of them is,
  // kBuffersHost otherwise (host, pinned host or managed memory).
  int (*classify)(const void* sendbuf, const void* recvbuf);
  // Runs a checked call (count > 0, contiguous datatype, commutative op,
  // intracommunicator of 2 or more ranks, regular topology) on device buffers
  // with `choice`.  Falls back to staging where the choice cannot run and
  // sets *ran to the algorithm that did run.  Collective over comm.
  int (*allreduce)(const AllreduceCall* call, MPI_Comm comm, const Topology* topo, const mla_choice* choice,
                   mla_algo* ran);
  // Any allreduce with device (or mixed) buffers, through pinned host memory
  // and PMPI_Allreduce: the system MPI path for device buffers.
  int (*staged)(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
  // IPC handle cache counters: allocations opened, lookups served from cache.
  void (*ipc_stats)(uint64_t* opened, uint64_t* hits);
};

}  // namespace mla

// The module's one exported symbol.  Returns nullptr when CUDA cannot be used
// in this process (no device, driver too old).
extern "C" const mla::DeviceModule* mla_device_module_init(const mla::HostServices* services);

#endif  // MLA_DEVICE_MODULE_H_
