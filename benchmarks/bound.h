// bound.h: the node's memory bound of an allreduce, the baseline of vs_bound
// (docs/mlallreduce_bench.md, "The bound"): the time in which every rank of
// a host, all copying at once, moves the bytes that an ideal shared-memory
// allreduce must move through memory.
#ifndef MLABENCH_BOUND_H_
#define MLABENCH_BOUND_H_

#include <cstdint>

namespace mlabench {

// The bytes one rank must read and write in an ideal single-copy allreduce
// of `bytes` among `ranks` ranks of one host: it reads its slice (bytes /
// ranks) of every rank's input (bytes) and writes its reduced slice
// (bytes / ranks), then reads the other ranks' reduced slices and writes
// them into its result (each bytes * (ranks - 1) / ranks): 3 * bytes -
// bytes / ranks in all (2 * bytes, a plain copy, on one rank).
uint64_t IdealTraffic(uint64_t bytes, int ranks);

// Every rank of MPI_COMM_WORLD moves IdealTraffic(bytes, ranks_on_host)
// with memcpy from `src` to `dst` (host memory of at least `bytes` each),
// all ranks at once after a barrier: `warmup` untimed rounds, then `iters`
// timed ones.  Returns the slowest rank's mean seconds per round.
// Collective over MPI_COMM_WORLD.
double BoundSeconds(void* dst, const void* src, uint64_t bytes, int ranks_on_host, int iters, int warmup);

}  // namespace mlabench

#endif  // MLABENCH_BOUND_H_
