// flag_group.cc: building, running and freeing the flag path (flag_group.h).
//
// Why one allocation exchanged once is enough, and why the calls need no host
// handshake (the full argument is in docs/gpu.md):
//  - a rank reads only its peers' areas, never their user buffers, so new or
//    reallocated user buffers change nothing that peers hold;
//  - a rank writes into its own input area of parity c % 2 in call c before
//    the call's first barrier.  Peers read that area in call c only.  A rank
//    reaches call c + 2 only after passing the barrier of call c + 1, which
//    every peer reaches only after its kernel of call c finished (one stream
//    per rank, kernels in order): nobody still reads it;
//  - the call returns once every block of its kernel stored the call number
//    into host memory after a system-wide fence, i.e. after the kernel's
//    last read of the user's send buffer and of peers' areas and its last
//    write into the user's receive buffer: nothing touches the user's
//    buffers after the return.
#include "libmlallreduce/cuda/flag_group.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "libmlallreduce/cuda/cuda_util.h"

namespace mla::lib {
namespace cuda {
namespace {

std::atomic<uint64_t> g_calls{0};
std::atomic<uint64_t> g_one_shot{0};

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Whether this rank's kernels can run at the same time as the kernels of the
// ranks it shares its GPU with: only under MPS (without it, the contexts of
// several processes take turns on the GPU, and a kernel waiting for a peer's
// flag would hold the GPU until the driver switches contexts).
bool RunsConcurrently(bool shares_gpu, std::string* why) {
  if (!shares_gpu) return true;
  int device = 0, mps = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&mps, cudaDevAttrMpsEnabled, device) != cudaSuccess) {
    cudaGetLastError();
    mps = 0;
  }
  if (!mps) *why = "ranks share a GPU without MPS";
  return mps != 0;
}

}  // namespace

int FlagGroup::Create(MPI_Comm node, bool shares_gpu, size_t max_bytes, std::unique_ptr<FlagGroup>* out,
                      std::string* why) {
  out->reset();
  int size = 0, rank = 0;
  PMPI_Comm_size(node, &size);
  PMPI_Comm_rank(node, &rank);
  if (size < 2) {
    *why = "one rank on the node";
    return MPI_SUCCESS;
  }
  if (size > kFlagMaxRanks) {
    *why = "more than " + std::to_string(kFlagMaxRanks) + " ranks on the node";
    return MPI_SUCCESS;
  }
  // Every rank must be able to run its kernel alongside the others'.
  std::string local_why;
  int ok = RunsConcurrently(shares_gpu, &local_why) ? 1 : 0;
  MLA_MPI_TRY(PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node));
  if (!ok) {
    *why = local_why.empty() ? "ranks share a GPU without MPS" : local_why;
    return MPI_SUCCESS;
  }

  std::unique_ptr<FlagGroup> g(new FlagGroup());
  g->args_.nranks = size;
  g->args_.rank = rank;
  g->args_.area_bytes = RoundUp(max_bytes, 256);
  // A whole number of 2 MiB pages: a smaller allocation may share its pages
  // with another one, and CUDA IPC cannot open the second of two
  // allocations of one page in a process.
  const size_t bytes = RoundUp(kFlagSignalBytes + 4 * g->args_.area_bytes, size_t{2} << 20);
  cudaIpcMemHandle_t handle{};
  cudaError_t err = cudaMalloc(&g->own_, bytes);
  if (err == cudaSuccess) err = cudaMemset(g->own_, 0, kFlagSignalBytes);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaIpcGetMemHandle(&handle, g->own_);
  if (err == cudaSuccess) err = cudaEventCreateWithFlags(&g->app_done_, cudaEventDisableTiming);
  if (err == cudaSuccess)
    err =
        cudaHostAlloc(reinterpret_cast<void**>(&g->done_), sizeof(unsigned int) * kFlagMaxBlocks, cudaHostAllocMapped);
  if (err == cudaSuccess) {
    std::memset(g->done_, 0, sizeof(unsigned int) * kFlagMaxBlocks);
    err = cudaHostGetDevicePointer(reinterpret_cast<void**>(&g->args_.done), g->done_, 0);
  }
  if (err != cudaSuccess) cudaGetLastError();
  std::vector<cudaIpcMemHandle_t> handles(static_cast<size_t>(size));
  MLA_MPI_TRY(PMPI_Allgather(&handle, sizeof(handle), MPI_BYTE, handles.data(), sizeof(handle), MPI_BYTE, node));
  // Open every peer's allocation (only if every rank got its own).
  ok = err == cudaSuccess ? 1 : 0;
  MLA_MPI_TRY(PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node));
  for (int r = 0; ok && r < size; ++r) {
    if (r == rank) {
      g->args_.base[r] = static_cast<char*>(g->own_);
      continue;
    }
    void* peer = nullptr;
    err = cudaIpcOpenMemHandle(&peer, handles[r], cudaIpcMemLazyEnablePeerAccess);
    if (err != cudaSuccess) {
      cudaGetLastError();
      break;
    }
    g->args_.base[r] = static_cast<char*>(peer);
  }
  ok = err == cudaSuccess ? 1 : 0;
  MLA_MPI_TRY(PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node));
  if (ok) MLA_MPI_TRY(PMPI_Comm_dup(node, &g->comm_));
  if (!ok) {
    *why = std::string("CUDA IPC of the flag memory failed (") + cudaGetErrorString(err) + ")";
    // Nobody mapped anything of ours that it will use: the destructor frees
    // it without the barrier (there is no communicator yet).
    return MPI_SUCCESS;
  }
  *out = std::move(g);
  return MPI_SUCCESS;
}

FlagGroup::~FlagGroup() {
  if (comm_ != MPI_COMM_NULL) {
    PMPI_Barrier(comm_);  // every peer's last kernel, which may read our memory, is done
    PMPI_Comm_free(&comm_);
  }
  for (int r = 0; r < args_.nranks; ++r)
    if (r != args_.rank && args_.base[r] != nullptr) cudaIpcCloseMemHandle(args_.base[r]);
  if (app_done_ != nullptr) cudaEventDestroy(app_done_);
  if (done_ != nullptr) cudaFreeHost(done_);
  if (own_ != nullptr) cudaFree(own_);
}

cudaError_t FlagGroup::Allreduce(DType type, DOp op, const void* send, void* recv, size_t n, bool two_shot,
                                 SyncRule rule, cudaStream_t stream) {
  cudaError_t err;
  if (rule == SyncRule::kDevice) {
    err = cudaDeviceSynchronize();
  } else {
    // The legacy stream waits for every blocking stream's earlier work; our
    // stream waits for the legacy stream's, on the GPU.
    err = cudaEventRecord(app_done_, cudaStreamLegacy);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(stream, app_done_, 0);
  }
  if (err != cudaSuccess) return err;
  ++calls_;  // modulo 2^32: the barrier values keep growing by one, parities keep alternating
  int blocks = 0;
  err = LaunchFlagAllreduce(type, op, args_, send, recv, n, calls_, two_shot, stream, &blocks);
  if (err == cudaSuccess) err = WaitDone(blocks, stream);
  if (err == cudaSuccess) {
    g_calls.fetch_add(1, std::memory_order_relaxed);
    if (!two_shot) g_one_shot.fetch_add(1, std::memory_order_relaxed);
  }
  return err;
}

cudaError_t FlagGroup::WaitDone(int blocks, cudaStream_t stream) {
  const volatile unsigned int* done = done_;
  const auto all_done = [&] {
    int b = 0;
    while (b < blocks && done[b] == calls_) ++b;
    return b == blocks;
  };
  for (unsigned long spins = 1;; ++spins) {
    if (all_done()) return cudaSuccess;
    // Now and then ask CUDA whether the kernel failed (or ended without
    // saying so, which would be a bug): never spin on a dead kernel.
    if (spins % 4096 == 0) {
      const cudaError_t q = cudaStreamQuery(stream);
      if (q == cudaErrorNotReady) continue;
      if (all_done()) return cudaSuccess;
      return q != cudaSuccess ? q : cudaErrorUnknown;
    }
  }
}

uint64_t FlagGroup::CallsRun() { return g_calls.load(std::memory_order_relaxed); }
uint64_t FlagGroup::OneShotCallsRun() { return g_one_shot.load(std::memory_order_relaxed); }

}  // namespace cuda
}  // namespace mla::lib
