// staging.h: moving device data through the system MPI: pinned host buffers,
// chunks pipelined so that device-to-host copies, MPI and host-to-device
// copies overlap.
#ifndef MLA_CUDA_STAGING_H_
#define MLA_CUDA_STAGING_H_

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstddef>

namespace mla::lib {
namespace cuda {

// Default piece of a message one pipeline step moves.
constexpr size_t kDefaultChunkBytes = 4u << 20;

// Pinned buffers, streams and events for one pipeline; one per communicator
// state, used by one call at a time.
class StagingPipeline {
 public:
  StagingPipeline() = default;
  ~StagingPipeline();
  StagingPipeline(const StagingPipeline&) = delete;
  StagingPipeline& operator=(const StagingPipeline&) = delete;

  // dst[0..n) = allreduce over `comm` of src[0..n) (device memory of the
  // current device; src may equal dst), `elem_size` bytes per element of the
  // contiguous `datatype`.  Starts after the work already queued on `after`
  // and makes `after` wait for the result.  Returns an MPI error code.
  int Allreduce(const void* src, void* dst, size_t n, size_t elem_size, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                size_t chunk_bytes, cudaStream_t after);

 private:
  static constexpr int kDepth = 3;
  int Ensure(size_t slot_bytes);

  void* host_[kDepth] = {nullptr, nullptr, nullptr};
  size_t slot_bytes_ = 0;
  cudaStream_t d2h_ = nullptr, h2d_ = nullptr;
  cudaEvent_t d2h_done_[kDepth] = {}, h2d_done_[kDepth] = {};
  cudaEvent_t start_ = nullptr, end_ = nullptr;
};

// Any allreduce whose buffers are (partly) device memory, through pinned host
// memory and one PMPI_Allreduce: for datatypes, ops and communicators the
// multilane algorithms do not take.  Waits for the device first (work queued
// on any stream before the call is complete).  Thread-safe.
int StagedAllreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_STAGING_H_
