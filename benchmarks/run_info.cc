// run_info.cc: the facts of a run (run_info.h).
#include "benchmarks/run_info.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cinttypes>
#include <cstring>

#include "benchmarks/validate.h"
#include "vocab/mpi_families.h"
#include "vocab/utc_time.h"

extern char** environ;

namespace mlabench {
namespace {

using Json = nlohmann::ordered_json;  // members in the order written

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-+=/.,:@%") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::map<std::string, std::string> multilane_variables() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = strchr(*e, '=');
    if (strncmp(*e, "MULTILANE_", 10) == 0 && eq) vars.emplace(std::string(*e, eq - *e), std::string(eq + 1));
  }
  return vars;
}

// This rank's place on its host (MPI_COMM_TYPE_SHARED), the number of hosts,
// and on rank 0 the hostnames of all ranks as "host (ranks a-b), ...".
void find_hosts(RunInfo* info) {
  MPI_Comm shared;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, info->rank, MPI_INFO_NULL, &shared);
  MPI_Comm_rank(shared, &info->local_rank);
  MPI_Comm_size(shared, &info->local_size);
  MPI_Comm_free(&shared);

  const int kLen = 256;
  char mine[kLen] = {0};
  snprintf(mine, kLen, "%s", info->hostname.c_str());
  std::vector<char> all(info->rank == 0 ? static_cast<size_t>(kLen) * info->nranks : 1);
  MPI_Gather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, 0, MPI_COMM_WORLD);
  int leader = info->local_rank == 0;
  PMPI_Allreduce(&leader, &info->hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (info->rank != 0) return;
  int start = 0;
  for (int r = 1; r <= info->nranks; ++r) {
    if (r < info->nranks && strcmp(&all[r * kLen], &all[start * kLen]) == 0) continue;
    if (!info->host_ranges.empty()) info->host_ranges += ", ";
    info->host_ranges += &all[start * kLen];
    info->host_ranges += r - 1 == start ? " (rank " + std::to_string(start) + ")"
                                        : " (ranks " + std::to_string(start) + "-" + std::to_string(r - 1) + ")";
    start = r;
  }
}

}  // namespace

void collect_run_info(int argc, char** argv, const Options& opt, RunInfo* info) {
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  info->hostname = name;
  info->date = mla::UtcNow();
  for (int i = 0; i < argc; ++i) {
    info->argv.push_back(argv[i]);
    info->command_line += (i ? " " : "") + shell_quote(argv[i]);
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int version_len = 0;
  MPI_Get_library_version(version, &version_len);
  info->mpi_version = mla::MpiVersionKey(std::string(version, static_cast<size_t>(version_len)));
  info->variables = multilane_variables();
  std::string joined;
  for (const auto& v : info->variables) joined += v.first + "=" + v.second + "\n";
  info->variables_consistent = same_on_all_ranks(hash_bytes(joined.data(), joined.size()), MPI_COMM_WORLD);
  find_hosts(info);
  info->layout_ok = mla_comm_layout(MPI_COMM_WORLD, &info->layout) == MPI_SUCCESS;
  info->library_enabled = mla_enabled() != 0;
  info->library_version = mla_version();
  const char* reason = nullptr;
  info->supported = mla_call_supported(mpi_datatype(opt.type), mpi_op(opt.op), MPI_COMM_WORLD, &reason) != 0;
  info->unsupported_reason = reason ? reason : "";
  if (info->supported && info->layout_ok && !info->layout.regular)
    info->unsupported_reason = "irregular layout: nodes hold different numbers of ranks";
}

void print_header(const Options& opt, const RunInfo& info) {
  printf("# mlallreduce_bench: multilane allreduce benchmark, libmlallreduce %s (%s)\n", info.library_version.c_str(),
         info.library_enabled ? "enabled" : "DISABLED: passes every call to MPI");
  printf("# command: %s\n", info.command_line.c_str());
  printf("# date: %s  host: %s\n", info.date.c_str(), info.hostname.c_str());
  printf("# MPI: %s\n", info.mpi_version.c_str());
  if (!info.system_algorithms.empty()) printf("# system algorithms (mpi:NAME): %s\n", info.system_algorithms.c_str());
  if (info.layout_ok) {
    printf("# layout: %d ranks, %d nodes, %d ranks per node, %d ranks per GPU%s\n", info.layout.size, info.layout.nodes,
           info.layout.ranks_per_node, info.layout.ranks_per_gpu, info.layout.regular ? "" : " (irregular)");
  } else {
    printf("# layout: %d ranks (mla_comm_layout failed)\n", info.nranks);
  }
  printf("# hosts: %d: %s\n", info.hosts, info.host_ranges.c_str());
  if (info.variables.empty()) printf("# MULTILANE_* variables: none\n");
  for (const auto& v : info.variables) printf("#   %s=%s\n", v.first.c_str(), v.second.c_str());
  if (!info.variables_consistent)
    printf("# WARNING: the MULTILANE_* variables differ across ranks (rank 0's are shown)\n");
  std::string algos;
  for (const AlgoSpec& a : opt.algos) algos += (algos.empty() ? "" : ",") + a.name;
  printf("# sizes %" PRIu64 " .. %" PRIu64 " B, x%" PRIu64 "; type %s; op %s; memory %s\n", opt.min_bytes,
         opt.max_bytes, opt.factor, type_name(opt.type), op_name(opt.op), info.memory.c_str());
  printf("# algorithms %s; lanes %d%s; chunk %" PRIu64 " B%s\n", algos.c_str(), opt.lanes,
         opt.lanes == 0 ? " (all)" : "", opt.chunk_bytes, opt.chunk_bytes == 0 ? " (library default)" : "");
  std::string iters = opt.iters > 0 ? std::to_string(opt.iters) : "scaled to size";
  std::string warmup = opt.warmup >= 0 ? std::to_string(opt.warmup) : "iters/10, >= 2";
  printf("# iterations %s; warm-up %s; check %s\n", iters.c_str(), warmup.c_str(), opt.check ? "on" : "off");
  if (info.device < 0)
    printf(
        "# vs_bound: the node's memory bound / time: every rank of a host copying at once the 3n - n/p bytes an "
        "ideal shared-memory allreduce of n bytes among its p ranks reads and writes\n");
  if (info.supported && info.layout_ok && !info.layout.regular)
    printf(
        "# NOTE: %s; the library runs its algorithms folded onto a regular core (host memory) or "
        "passes them to PMPI_Allreduce (device memory)\n",
        info.unsupported_reason.c_str());
  if (!info.supported)
    printf("# NOTE: libmlallreduce cannot run %s/%s here (%s): its algorithms will pass to PMPI_Allreduce\n",
           type_name(opt.type), op_name(opt.op), info.unsupported_reason.c_str());
  printf("#\n");
  printf("#%11s %12s %7s %6s %12s %11s %8s %8s %7s %7s %7s %8s\n", "size", "count", "type", "redop", "algo", "time_us",
         "algbw", "busbw", "#wrong", "vs_mpi", "vs_best", "vs_bound");
  printf("#%11s %12s %7s %6s %12s %11s %8s %8s %7s %7s %7s %8s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
         "(GB/s)", "", "(x)", "(x)", "(x)");
  fflush(stdout);
  if (info.device >= 0)
    printf("# device buffers: %d rank(s) per GPU; mpi-1pg and nccl run on the first rank of each GPU\n",
           info.ranks_per_gpu);
}

nlohmann::ordered_json run_json(const Options& opt, const RunInfo& info) {
  Json j = {{"benchmark", "mlallreduce_bench"},
            {"library_version", info.library_version},
            {"library_enabled", info.library_enabled},
            {"date", info.date},
            {"hostname", info.hostname},
            {"command_line", info.command_line},
            {"argv", info.argv},
            {"mpi_version", info.mpi_version},
            {"ranks", info.nranks},
            {"hosts", info.hosts},
            {"host_ranks", info.host_ranges}};
  j["layout"] = nullptr;
  if (info.layout_ok)
    j["layout"] = {{"size", info.layout.size},
                   {"nodes", info.layout.nodes},
                   {"ranks_per_node", info.layout.ranks_per_node},
                   {"ranks_per_gpu", info.layout.ranks_per_gpu},
                   {"regular", info.layout.regular != 0}};
  j["variables"] = Json::object();
  for (const auto& v : info.variables) j["variables"][v.first] = v.second;
  j["variables_consistent"] = info.variables_consistent;
  Json algos = Json::array();
  for (const AlgoSpec& a : opt.algos) algos.push_back(a.name);
  j["parameters"] = {{"min_bytes", opt.min_bytes},
                     {"max_bytes", opt.max_bytes},
                     {"factor", opt.factor},
                     {"type", type_name(opt.type)},
                     {"redop", op_name(opt.op)},
                     {"algos", algos},
                     {"lanes", opt.lanes},
                     {"chunk_bytes", opt.chunk_bytes},
                     {"warmup", opt.warmup >= 0 ? Json(opt.warmup) : Json(nullptr)},
                     {"iters", opt.iters > 0 ? Json(opt.iters) : Json(nullptr)},
                     {"check", opt.check},
                     {"memory", opt.memory},
                     {"system_algorithms", info.system_algorithms},
                     {"multilane_supported", info.supported}};
  return j;
}

}  // namespace mlabench
