#include "libmlallreduce/runtime.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "libmlallreduce/startup/comm_scope.h"
#include "libmlallreduce/jobreport/job_report.h"
#include "libmlallreduce/base/log.h"
#include "libmlallreduce/quick_route.h"
#include "libmlallreduce/startup/separate_worlds.h"
#include "libmlallreduce/startup/startup.h"
#include "libmlallreduce/base/stats.h"
#include "libmlallreduce/algorithms/system_choice.h"
#include "libmlallreduce/algorithms/topology.h"
#include "libmlallreduce/shm/stale_segments.h"
#include "vocab/terminal_text.h"

namespace mla::lib {
namespace {
// Both stay false until the start-up agreement at MPI_Init says otherwise: a
// process whose MPI_Init never reached the library (MPI started by a path
// that bypasses it) passes every call through.
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_consistent{false};
std::atomic<int> g_host_rank{-1};
// Whether OnMpiInitialized ran: a program that calls MPI_Finalize without
// MPI_Init (an error the MPI reports) gets no line of the library's.
std::atomic<bool> g_initialized{false};

// This rank's vote: the settings' hash, and off when a variable is bad or the
// launcher said so (MULTILANE_OFF).
Ballot MyBallot(const Config& config) {
  Ballot b;
  b.version = MLA_VERSION_STRING;
  b.settings = config.fingerprint;
  b.on = config.enabled && config.launcher_off.empty();
  if (!config.launcher_off.empty()) {
    b.reason = "the launcher turned multilane off on this rank's node: " + config.launcher_off;
  } else if (!config.problems.empty()) {
    b.reason = config.problems.front();
  }
  return b;
}

StartupMpi WorldCalls() {
  StartupMpi mpi;
  mpi.world_size = [] {
    int n = 1;
    PMPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
  };
  mpi.world_rank = [] {
    int r = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  };
  mpi.combine_max = [](uint64_t* words, int n) {
    return PMPI_Allreduce(MPI_IN_PLACE, words, n, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS;
  };
  return mpi;
}

// The rank among MPI_COMM_WORLD's ranks on this host: a collective call, made
// only once the agreement says every rank makes it.
void FindHostRank(int rank) {
  MPI_Comm host = MPI_COMM_NULL;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host) == MPI_SUCCESS) {
    int host_rank = 0;
    PMPI_Comm_rank(host, &host_rank);
    g_host_rank.store(host_rank);
    PMPI_Comm_free(&host);
  }
}

// A Slurm step whose tasks run as worlds of one rank each: its task 0 says
// so (separate_worlds.h).
void SaySeparateWorlds(const Config& config) {
  if (config.step_tasks <= 1) return;
  const char* task = std::getenv("SLURM_PROCID");
  if (task == nullptr || std::string(task) != "0") return;
  int size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm parent = MPI_COMM_NULL;
  PMPI_Comm_get_parent(&parent);
  const std::string line = SeparateWorldsLine(config.step_tasks, size, parent != MPI_COMM_NULL);
  if (!line.empty()) WarnHere(line);
}

// MULTILANE_VERBOSE=2: what the start-up agreement cost this rank.
void SayAgreementCost(int rank) {
  const AgreementCost cost = LastAgreementCost();
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.3f", cost.seconds * 1e3);
  mla::PrintLine("start-up agreement: rank " + std::to_string(rank) + ": " + std::to_string(cost.reads) + " reads, " +
                 ms + " ms");
}

}  // namespace

const Config& CurrentConfig() {
  // A function's static, not std::call_once: after the first call its guard
  // is one load, where call_once sets two thread-local variables and calls
  // pthread_once each time (a tenth of the library's cost per call, perf).
  static const Config* const config = new Config(LoadConfigFromEnvironment());  // lives until exit
  return *config;
}

bool Enabled() {
  CurrentConfig();
  return g_enabled.load();
}

bool SettingsConsistent() { return g_consistent.load(); }

int HostRank() { return g_host_rank.load(); }

void BeforeMpiInit() {
  CastBallot(MyBallot(CurrentConfig()));
  PrepareSystemAlgorithms(CurrentConfig().profile);
}

void OnMpiInitialized() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  SetWorldRank(rank);
  g_initialized.store(true);
  const Config& config = CurrentConfig();
  const Verdict verdict = CountBallots(MyBallot(config), WorldCalls(), config.ranks_per_node);
  if (verdict.reporter == rank && !verdict.line.empty()) WarnHere(verdict.line);
  if (config.verbose >= 2) SayAgreementCost(rank);
  SaySeparateWorlds(config);
  g_consistent.store(verdict.consistent);
  g_enabled.store(verdict.on);
  BuildQuickRoute(config, verdict.on, verdict.consistent);
  if (!verdict.consistent) return;  // no collective call of the library's own

  FindHostRank(rank);
  LayoutSettings layout;
  layout.ranks_per_node = config.ranks_per_node;
  layout.ranks_per_gpu = config.ranks_per_gpu;
  layout.host_rank = HostRank();
  layout.shm_node_step = config.shm_node_step;
  layout.shm_single_copy = config.shm_single_copy;
  layout.verbose = config.verbose > 0;
  // Segments of an earlier job of this user's that died while setting one up.
  if (config.MayUseNodeShm()) RemoveStaleSegments();
  InitTopologyCache(layout);
  for (const std::string& problem : config.problems) WarnOnce(problem);
  for (const std::string& warning : config.warnings) WarnOnce(warning);
  if (config.verbose > 0) Info(config.Summary());
  // The report ends in collective calls: only when every rank has it on (the
  // fingerprint covers MULTILANE_REPORT).
  if (!config.report_dir.empty()) StartJobReport(config, g_host_rank.load());
  if (ReportOn()) ClearQuickRoute();  // the report times every call on the whole path
}

void OnMpiFinalizing() {
  if (!g_initialized.load()) return;  // MPI_Finalize without MPI_Init: the MPI says so
  ClearQuickRoute();
  const Config& config = CurrentConfig();
  if (ReportOn()) FinishJobReport(config);
  if (config.stats)
    Info("stats: rank " + std::to_string(WorldRank()) + ": " +
         StatsLine(StatsSnapshot(), EntryStatsSnapshot(), DetailStatsSnapshot()));
  ReleaseSystemAlgorithms();
  ReleaseTopologyCache();
  ReleaseCommScope();
}

}  // namespace mla::lib
