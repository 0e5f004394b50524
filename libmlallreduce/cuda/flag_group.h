// flag_group.h: the state of the flag path (flag_kernels.h) for the ranks of
// one node of a communicator: each rank's signal and scratch allocation,
// exchanged once with CUDA IPC and kept until the communicator is freed, and
// the per-group call number.  A call on the flag path makes no MPI call and
// no host-side handshake: the ranks meet on the GPU (docs/gpu.md).
#ifndef MLA_CUDA_FLAG_GROUP_H_
#define MLA_CUDA_FLAG_GROUP_H_

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "libmlallreduce/cuda/flag_kernels.h"

namespace mla::lib {
namespace cuda {

// How the library makes sure it sees the application's writes to the send
// buffer (MULTILANE_DEVICE_SYNC, docs/gpu.md "Stream rule").
enum class SyncRule {
  kDevice,  // cudaDeviceSynchronize: every stream of the process
  kStream,  // an event on the legacy default stream, waited for on the GPU:
            // the legacy stream and every blocking stream (per-thread
            // default streams included), never a non-blocking stream
};

class FlagGroup {
 public:
  // Builds the flag path over `node` (the ranks of one node; collective over
  // it) with room for messages of up to max_bytes.  Every rank gets the same
  // answer: a group, or nullptr and *why saying why the flag path is off here
  // (one rank, more than kFlagMaxRanks ranks, ranks sharing a GPU without MPS,
  // or a CUDA failure on any rank).  `shares_gpu`: this rank's GPU serves other
  // ranks of the node too.  Returns an MPI error code.
  static int Create(MPI_Comm node, bool shares_gpu, size_t max_bytes, std::unique_ptr<FlagGroup>* out,
                    std::string* why);

  // Waits (PMPI_Barrier) until no rank can still read this rank's memory,
  // then frees it.  Collective over the node, as MPI_Comm_free is.
  ~FlagGroup();

  FlagGroup(const FlagGroup&) = delete;
  FlagGroup& operator=(const FlagGroup&) = delete;

  // Largest message (bytes) the flag path takes.
  size_t max_bytes() const { return args_.area_bytes; }

  // recv = allreduce of send over the group (n elements, n * size <=
  // max_bytes), complete on return; one kernel on `stream`, ordered after the
  // application's work by `rule`.  Collective over the group.  Returns a CUDA
  // error code.
  cudaError_t Allreduce(DType type, DOp op, const void* send, void* recv, size_t n, bool two_shot, SyncRule rule,
                        cudaStream_t stream);

  // Calls run on the flag path in this process, and how many were one-shot.
  static uint64_t CallsRun();
  static uint64_t OneShotCallsRun();

 private:
  FlagGroup() = default;
  // Waits until the `blocks` blocks of the current call stored its number
  // in done_ (spinning on host memory, which is quicker than synchronising
  // the stream); a kernel that failed is reported with its error.
  cudaError_t WaitDone(int blocks, cudaStream_t stream);

  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate of the node communicator
  FlagArgs args_;
  void* own_ = nullptr;             // this rank's allocation (args_.base[rank])
  cudaEvent_t app_done_ = nullptr;  // recorded on the legacy stream (SyncRule::kStream)
  unsigned int* done_ = nullptr;    // host-mapped, kFlagMaxBlocks words (FlagArgs::done)
  uint32_t calls_ = 0;
};

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_FLAG_GROUP_H_
