#include "libmlallreduce/cuda/staging.h"

#include <algorithm>
#include <cstring>

#include "libmlallreduce/cuda/cuda_util.h"

namespace mla::lib {
namespace cuda {

StagingPipeline::~StagingPipeline() {
  // Errors are ignored: the context may already be gone at exit.
  for (int i = 0; i < kDepth; ++i) {
    if (host_[i]) cudaFreeHost(host_[i]);
    if (d2h_done_[i]) cudaEventDestroy(d2h_done_[i]);
    if (h2d_done_[i]) cudaEventDestroy(h2d_done_[i]);
  }
  if (start_) cudaEventDestroy(start_);
  if (end_) cudaEventDestroy(end_);
  if (d2h_) cudaStreamDestroy(d2h_);
  if (h2d_) cudaStreamDestroy(h2d_);
}

int StagingPipeline::Ensure(size_t slot_bytes) {
  if (d2h_ == nullptr) {
    MLA_CUDA_TRY("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&d2h_, cudaStreamNonBlocking));
    MLA_CUDA_TRY("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&h2d_, cudaStreamNonBlocking));
    for (int i = 0; i < kDepth; ++i) {
      MLA_CUDA_TRY("cudaEventCreate", cudaEventCreateWithFlags(&d2h_done_[i], cudaEventDisableTiming));
      MLA_CUDA_TRY("cudaEventCreate", cudaEventCreateWithFlags(&h2d_done_[i], cudaEventDisableTiming));
    }
    MLA_CUDA_TRY("cudaEventCreate", cudaEventCreateWithFlags(&start_, cudaEventDisableTiming));
    MLA_CUDA_TRY("cudaEventCreate", cudaEventCreateWithFlags(&end_, cudaEventDisableTiming));
  }
  if (slot_bytes > slot_bytes_) {
    for (int i = 0; i < kDepth; ++i) {
      if (host_[i]) cudaFreeHost(host_[i]);
      host_[i] = nullptr;
    }
    slot_bytes_ = 0;
    for (int i = 0; i < kDepth; ++i) {
      MLA_CUDA_TRY("cudaHostAlloc (pinned staging buffer)", cudaHostAlloc(&host_[i], slot_bytes, cudaHostAllocDefault));
    }
    slot_bytes_ = slot_bytes;
  }
  return MPI_SUCCESS;
}

int StagingPipeline::Allreduce(const void* src, void* dst, size_t n, size_t elem_size, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, size_t chunk_bytes, cudaStream_t after) {
  if (n == 0) return MPI_SUCCESS;
  if (chunk_bytes == 0) chunk_bytes = kDefaultChunkBytes;
  // Whole elements per chunk, and no chunk over INT_MAX elements for MPI.
  size_t chunk_elems = std::max<size_t>(1, chunk_bytes / elem_size);
  chunk_elems = std::min<size_t>(chunk_elems, 1u << 30);
  chunk_elems = std::min(chunk_elems, n);
  const size_t chunks = (n + chunk_elems - 1) / chunk_elems;
  MLA_MPI_TRY(Ensure(chunk_elems * elem_size));

  const char* in = static_cast<const char*>(src);
  char* out = static_cast<char*>(dst);
  const int depth = static_cast<int>(std::min<size_t>(kDepth, chunks));
  auto length = [&](size_t k) { return std::min(chunk_elems, n - k * chunk_elems); };

  // The source was written by work queued on `after`.
  MLA_CUDA_TRY("cudaEventRecord", cudaEventRecord(start_, after));
  MLA_CUDA_TRY("cudaStreamWaitEvent", cudaStreamWaitEvent(d2h_, start_, 0));
  auto issue_copy_out = [&](size_t k) -> int {
    const int slot = static_cast<int>(k % depth);
    if (k >= static_cast<size_t>(depth)) {
      // The slot's previous chunk must have reached the device first.
      MLA_CUDA_TRY("cudaStreamWaitEvent", cudaStreamWaitEvent(d2h_, h2d_done_[slot], 0));
    }
    MLA_CUDA_TRY("cudaMemcpyAsync (device to host)",
                 cudaMemcpyAsync(host_[slot], in + k * chunk_elems * elem_size, length(k) * elem_size,
                                 cudaMemcpyDeviceToHost, d2h_));
    MLA_CUDA_TRY("cudaEventRecord", cudaEventRecord(d2h_done_[slot], d2h_));
    return MPI_SUCCESS;
  };
  for (int k = 0; k < depth; ++k) MLA_MPI_TRY(issue_copy_out(k));
  for (size_t k = 0; k < chunks; ++k) {
    const int slot = static_cast<int>(k % depth);
    MLA_CUDA_TRY("cudaEventSynchronize", cudaEventSynchronize(d2h_done_[slot]));
    MLA_MPI_TRY(PMPI_Allreduce(MPI_IN_PLACE, host_[slot], static_cast<int>(length(k)), datatype, op, comm));
    MLA_CUDA_TRY("cudaMemcpyAsync (host to device)",
                 cudaMemcpyAsync(out + k * chunk_elems * elem_size, host_[slot], length(k) * elem_size,
                                 cudaMemcpyHostToDevice, h2d_));
    MLA_CUDA_TRY("cudaEventRecord", cudaEventRecord(h2d_done_[slot], h2d_));
    if (k + depth < chunks) MLA_MPI_TRY(issue_copy_out(k + depth));
  }
  MLA_CUDA_TRY("cudaEventRecord", cudaEventRecord(end_, h2d_));
  MLA_CUDA_TRY("cudaStreamWaitEvent", cudaStreamWaitEvent(after, end_, 0));
  return MPI_SUCCESS;
}

namespace {

// Pinned memory for StagedAllreduce, one pair per thread, grown as needed.
struct PinnedPair {
  void* send = nullptr;
  void* recv = nullptr;
  size_t bytes = 0;
  ~PinnedPair() {
    if (send) cudaFreeHost(send);
    if (recv) cudaFreeHost(recv);
  }
};

}  // namespace

int StagedAllreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (count <= 0) return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  // cudaMemcpy below runs on the legacy default stream, which does not wait
  // for streams made with cudaStreamNonBlocking: wait for the whole device so
  // that work the application queued on any stream before the call is done.
  MLA_CUDA_TRY("cudaDeviceSynchronize", cudaDeviceSynchronize());
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MLA_MPI_TRY(PMPI_Type_get_extent(datatype, &lb, &extent));
  MLA_MPI_TRY(PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent));
  // The bytes `count` elements touch, from the first to the last.
  const size_t span = static_cast<size_t>(true_extent + static_cast<MPI_Aint>(count - 1) * extent);
  thread_local PinnedPair pinned;
  if (pinned.bytes < span) {
    if (pinned.send) cudaFreeHost(pinned.send);
    if (pinned.recv) cudaFreeHost(pinned.recv);
    pinned.send = pinned.recv = nullptr;
    pinned.bytes = 0;
    MLA_CUDA_TRY("cudaHostAlloc (pinned staging buffer)", cudaHostAlloc(&pinned.send, span, cudaHostAllocDefault));
    MLA_CUDA_TRY("cudaHostAlloc (pinned staging buffer)", cudaHostAlloc(&pinned.recv, span, cudaHostAllocDefault));
    pinned.bytes = span;
  }
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const char* src = static_cast<const char*>(in_place ? recvbuf : sendbuf) + true_lb;
  char* dst = static_cast<char*>(recvbuf) + true_lb;
  // cudaMemcpyDefault reads the pointer kinds itself, so mixed calls work.
  MLA_CUDA_TRY("cudaMemcpy (stage in)", cudaMemcpy(in_place ? pinned.recv : pinned.send, src, span, cudaMemcpyDefault));
  if (!in_place) {
    // The receive span may hold bytes outside the datatype's map: keep them.
    MLA_CUDA_TRY("cudaMemcpy (stage in)", cudaMemcpy(pinned.recv, dst, span, cudaMemcpyDefault));
  }
  char* host_recv = static_cast<char*>(pinned.recv) - true_lb;
  const char* host_send = static_cast<const char*>(pinned.send) - true_lb;
  MLA_MPI_TRY(PMPI_Allreduce(in_place ? MPI_IN_PLACE : host_send, host_recv, count, datatype, op, comm));
  MLA_CUDA_TRY("cudaMemcpy (stage out)", cudaMemcpy(dst, pinned.recv, span, cudaMemcpyDefault));
  return MPI_SUCCESS;
}

}  // namespace cuda
}  // namespace mla::lib
