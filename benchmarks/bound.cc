// bound.cc: the node's memory bound (bound.h).
#include "benchmarks/bound.h"

#include <mpi.h>

#include <cstring>

namespace mlabench {
namespace {

// One round: IdealTraffic(bytes, ranks) as copies from src to dst, a copy of
// n bytes moving 2n (the whole message, then the part that remains).
void MoveOnce(void* dst, const void* src, uint64_t bytes, int ranks) {
  const uint64_t rest = (IdealTraffic(bytes, ranks) - 2 * bytes) / 2;
  memcpy(dst, src, bytes);
  if (rest > 0) memcpy(dst, src, rest);
}

}  // namespace

uint64_t IdealTraffic(uint64_t bytes, int ranks) {
  if (ranks <= 1) return 2 * bytes;
  return 3 * bytes - bytes / static_cast<uint64_t>(ranks);
}

double BoundSeconds(void* dst, const void* src, uint64_t bytes, int ranks_on_host, int iters, int warmup) {
  for (int i = 0; i < warmup; ++i) MoveOnce(dst, src, bytes, ranks_on_host);
  PMPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) MoveOnce(dst, src, bytes, ranks_on_host);
  double mean = iters > 0 ? (MPI_Wtime() - t0) / iters : 0, max_mean = 0;
  PMPI_Allreduce(&mean, &max_mean, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max_mean;
}

}  // namespace mlabench
