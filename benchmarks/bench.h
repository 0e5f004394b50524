// bench.h: the measurement of mlallreduce_bench: at every size, each
// algorithm of -a timed and checked, one row each, and the notes the
// library's counters give (docs/mlallreduce_bench.md).
#ifndef MLABENCH_BENCH_H_
#define MLABENCH_BENCH_H_

#include <mpi.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/memkind.h"
#include "benchmarks/options.h"
#include "benchmarks/run_info.h"
#include "benchmarks/validate.h"
#ifdef MLABENCH_HAVE_SYSALGO
#include "sysalgo/system_allreduce.h"
#endif

namespace mlabench {

// The system MPI's own algorithms (mpi:NAME, mpi-best); none in the
// simulation build, which has no MPI_T.
#ifdef MLABENCH_HAVE_SYSALGO
using SystemAllreduce = mlsys::SystemAllreduce;
#else
struct SystemAllreduce {
  const std::vector<std::string>& names() const { return none_; }
  std::string why_none() const { return "this build has no access to the system's algorithms (MPI_T)"; }
  std::string mechanism() const { return ""; }
  bool Applies(const std::string&, long, long, int, bool) const { return false; }
  MPI_Comm Select(const std::string&, MPI_Comm, std::string* error) {
    *error = why_none();
    return MPI_COMM_NULL;
  }
  void Release() {}
  std::vector<std::string> none_;
};
#endif

// One row of the table.
struct Row {
  uint64_t bytes = 0;
  uint64_t count = 0;
  std::string algo;
  int iters = 0;
  int warmup = 0;
  double time_us = 0;
  double algbw = 0;
  double busbw = 0;
  bool checked = false;
  uint64_t wrong = 0;
  std::optional<double> vs_mpi;    // algbw ratio to the mpi row of the same size
  std::optional<double> vs_best;   // algbw ratio to the mpi-best row of the same size
  std::optional<double> bound_us;  // the node's memory bound at this size (bound.h; host memory)
  std::optional<double> vs_bound;  // bound_us / time_us: the share of the bound reached
  std::string ran_as;              // what the library's counters say ran (mpi-best: which mpi row won)
  uint64_t calls = 0;              // calls the library counted (checked + warm-up + timed)
  uint64_t unsupported = 0;        // of which went to PMPI_Allreduce as unsupported
};

// The library's counters: mla_get_stats, and the passthrough calls by the
// system algorithm a profile chose (mla_system_algo_calls), by name.
struct Counters {
  mla_stats stats{};
  std::map<std::string, uint64_t> system;
};
// Reads the counters now.
Counters Counted();

class Bench {
 public:
  // Allocates a send and a receive buffer of `bytes` of `kind`, and makes
  // the communicator of the first rank on each GPU of each host (mpi-1pg,
  // nccl).  Collective over MPI_COMM_WORLD.  `opt` is read when run() runs
  // (the caller may drop rows the MPI cannot give before).
  Bench(const Options& opt, const RunInfo& info, MemKind* kind, size_t bytes, SystemAllreduce& system);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // Whether this rank's buffers were allocated.
  bool allocated() const { return send_ != nullptr && recv_ != nullptr; }

  // The ranks that share this rank's GPU (1 for host memory).
  int ranks_per_gpu() const { return ranks_per_gpu_; }

  // Runs every size and algorithm, printing each size's rows on rank 0 as it
  // completes; `notes` start the run's notes.  Returns the total number of
  // wrong values (0 when unchecked).  Collective over MPI_COMM_WORLD.
  uint64_t run(const std::vector<std::string>& notes);

  // The rows and the notes of run().
  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct Caller;
  Caller make_caller(const AlgoSpec& spec) const;
  int call(Caller& c, int count);
  Row run_one(const AlgoSpec& spec, uint64_t count, int iters, int warmup);
  Row run_best(const AlgoSpec& spec, uint64_t count, int iters, int warmup, size_t first);
  void fit_batch(double seconds, int* iters, int* warmup);
  uint64_t check_call(size_t count, const Reference& ref, MPI_Comm comm);
  double time_batch(Caller& c, int n, size_t bytes, int iters, int warmup, bool active, int* failed);
  void fill_send(const Reference& ref, size_t count);
  const void* host_view(const void* buf, size_t bytes);
  void count_calls(const AlgoSpec& spec, const Counters& before, const Counters& after, Row* row);
  void make_notes(size_t nsizes);
  std::optional<double> bound_us(uint64_t count, int iters, int warmup);
  void finish_size(size_t first, std::optional<double> bound_us);

  const Options& opt_;
  const RunInfo& info_;
  MemKind* const kind_;
  SystemAllreduce& system_;
  const MPI_Datatype type_;
  const MPI_Op op_;
  const size_t esize_;
  void* const send_;
  void* const recv_;
  std::vector<unsigned char> stage_;  // a host copy, where the kind is not host accessible
  int ranks_per_gpu_ = 1;
  MPI_Comm per_gpu_;  // the first rank of each GPU; MPI_COMM_NULL on the others
  const int per_gpu_ranks_;
  Reference ref_;
  Reference per_gpu_ref_;  // data and results of mpi-1pg and nccl (GPU leaders)
  std::vector<Row> rows_;
  std::vector<std::string> notes_;
};

}  // namespace mlabench

#endif  // MLABENCH_BENCH_H_
