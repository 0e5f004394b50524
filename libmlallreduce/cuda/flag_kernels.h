// flag_kernels.h: the one-kernel allreduce of small device messages, whose
// ranks synchronise on the GPU through flags in CUDA-IPC-shared memory
// instead of on the host (docs/gpu.md, "Small messages: the flag path").
//
// Every rank of the group owns one device allocation, mapped by all others:
//   [signal: kFlagMaxBlocks x kFlagMaxRanks uint32 flags]
//   [input area, parity 0][result area, parity 0]
//   [input area, parity 1][result area, parity 1]
// signal[b][p] of rank r is written only by block b of rank p and only grows
// (it holds the latest barrier value that block reached).  Call number c
// (counted per group, the same on every rank because MPI orders collective
// calls on a communicator) uses the areas of parity c % 2 and the barrier
// values 2c-1 and 2c.
#ifndef MLA_CUDA_FLAG_KERNELS_H_
#define MLA_CUDA_FLAG_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "libmlallreduce/cuda/reduce_kernels.h"

namespace mla::lib {
namespace cuda {

// Most ranks in one flag group, and most blocks of one flag kernel.
constexpr int kFlagMaxRanks = 16;
constexpr int kFlagMaxBlocks = 32;
// Bytes of the signal area at the start of each rank's allocation.
constexpr size_t kFlagSignalBytes = sizeof(uint32_t) * kFlagMaxBlocks * kFlagMaxRanks;

struct FlagArgs {
  char* base[kFlagMaxRanks];  // every rank's allocation, mapped here (base[rank] is our own)
  int nranks = 0;
  int rank = 0;
  size_t area_bytes = 0;  // bytes of one input (or result) area, a multiple of 256
  // Host-mapped words, one per block: block b stores the call number into
  // done[b] once all its writes are visible, so the host can wait for the
  // call by reading its own memory instead of synchronising the stream.
  unsigned int* done = nullptr;
};

// recv[0..n) = the reduction, in rank order, of every rank's send[0..n)
// (n * DTypeSize(type) <= area_bytes), queued on `stream`.  `two_shot`:
// reduce-scatter then allgather through the result areas (each element is
// reduced once, by one rank); otherwise one-shot (every rank reduces every
// element itself, in the same order).  Both give every rank the same bits.
// Every rank of the group must queue the same call (same n, type, op,
// two_shot, call number): like NCCL's kernels, a rank's kernel waits on the
// GPU for as long as its peers take to arrive.  *blocks receives the number
// of blocks launched (the done[] words the call will set).
cudaError_t LaunchFlagAllreduce(DType type, DOp op, const FlagArgs& args, const void* send, void* recv, size_t n,
                                uint32_t call_number, bool two_shot, cudaStream_t stream, int* blocks);

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_FLAG_KERNELS_H_
