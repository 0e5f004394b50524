// run_info.h: what a run of mlallreduce_bench knows about itself (who,
// where, with which MPI, variables and layout), and the output's header and
// the JSON's metadata made of it (docs/mlallreduce_bench.md).
#ifndef MLABENCH_RUN_INFO_H_
#define MLABENCH_RUN_INFO_H_

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/options.h"

namespace mlabench {

struct RunInfo {
  int rank = 0;
  int nranks = 1;
  int local_rank = 0;  // rank on its physical host
  int local_size = 1;  // ranks on its physical host
  mla_layout layout{};
  bool layout_ok = false;
  int hosts = 1;            // physical hosts (MPI_COMM_TYPE_SHARED)
  std::string host_ranges;  // "a (ranks 0-3), b (ranks 4-7)", rank 0 only
  std::string mpi_version;  // first line of MPI_Get_library_version
  std::string hostname;
  std::string date;  // UTC, ISO 8601
  std::string command_line;
  std::vector<std::string> argv;
  std::map<std::string, std::string> variables;  // MULTILANE_*
  bool variables_consistent = true;
  bool library_enabled = false;
  std::string library_version;
  bool supported = false;  // mla_call_supported for (type, op, comm)
  std::string unsupported_reason;
  std::string memory;             // MemKind::describe()
  int device = -1;                // the GPU of the buffers (MemKind::device())
  int ranks_per_gpu = 1;          // ranks sharing this rank's GPU
  std::string system_algorithms;  // "Open MPI coll/tuned: ring ...": what mpi:NAME can name
};

// Fills *info (rank and nranks already set) with the host, date, command
// line, MPI, MULTILANE_* variables, the ranks of each host, the layout and
// whether the library serves opt's type and op.  Collective over
// MPI_COMM_WORLD.
void collect_run_info(int argc, char** argv, const Options& opt, RunInfo* info);

// Prints the output's header: the run's facts and parameters, the table's
// column heads, and for device buffers how many ranks share a GPU.
void print_header(const Options& opt, const RunInfo& info);

// The run's facts and parameters, the first members of the JSON document.
nlohmann::ordered_json run_json(const Options& opt, const RunInfo& info);

}  // namespace mlabench

#endif  // MLABENCH_RUN_INFO_H_
