// overhead.h: the library's own cost per call (--overhead): what a call
// through multilane that ends in the system MPI (passthrough, or auto where
// the profile says passthrough) costs beyond calling the system MPI itself.
#ifndef MLABENCH_OVERHEAD_H_
#define MLABENCH_OVERHEAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "benchmarks/options.h"

namespace mlabench {

// One size's overhead: nanoseconds per call beyond PMPI_Allreduce.
struct Overhead {
  uint64_t bytes = 0;
  double mpi_ns = 0;          // PMPI_Allreduce's own time per call
  double passthrough_ns = 0;  // mla_allreduce_with(passthrough) minus mpi_ns
  double auto_ns = 0;         // mla_allreduce (the profile or MULTILANE_ALGO) minus mpi_ns
  double entry_ns = 0;  // MPI_Allreduce, the library's interposed entry point (an application's call), minus mpi_ns
  int rounds = 0;       // rounds measured (one block of each way per round)
  int block = 0;        // calls per block
};

// Measures, at each size of `opt`, four ways of calling on MPI_COMM_SELF
// with host buffers (PMPI_Allreduce, passthrough, auto and the interposed
// MPI_Allreduce), where the system MPI's own work is a copy and nothing
// waits for another rank.  A round is one block of calls of each way (a
// block: about 20 us of the system MPI's calls, 1 to 4000), each round
// starting with another of them; 61 to 2001 rounds, about 0.3 s per size
// (sizes whose block is one call: up to 8001 rounds, about 1 s).  Each figure
// is the median over the rounds (the differences per round, so that drift
// cancels).  Every rank measures its own (no communication); the caller
// prints rank 0's.
std::vector<Overhead> MeasureOverhead(const Options& opt);

// The table of `rows` as text lines, the model stated on the first.
std::vector<std::string> OverheadLines(const std::vector<Overhead>& rows);

}  // namespace mlabench

#endif  // MLABENCH_OVERHEAD_H_
