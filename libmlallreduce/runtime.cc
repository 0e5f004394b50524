#include "runtime.h"

#include <atomic>
#include <mutex>

#include "job_report.h"
#include "log.h"
#include "stats.h"
#include "topology.h"

namespace mla {
namespace {
std::once_flag g_config_once;
const Config* g_config = nullptr;
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_consistent{true};
std::atomic<int> g_host_rank{-1};
}  // namespace

const Config& CurrentConfig() {
  std::call_once(g_config_once, [] {
    g_config = new Config(LoadConfigFromEnvironment());  // lives until exit
    g_enabled.store(g_config->enabled);
  });
  return *g_config;
}

bool Enabled() {
  CurrentConfig();
  return g_enabled.load();
}

bool SettingsConsistent() { return g_consistent.load(); }

int HostRank() { return g_host_rank.load(); }

void OnMpiInitialized() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  SetWorldRank(rank);
  MPI_Comm host = MPI_COMM_NULL;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host) == MPI_SUCCESS) {
    int host_rank = 0;
    PMPI_Comm_rank(host, &host_rank);
    g_host_rank.store(host_rank);
    PMPI_Comm_free(&host);
  }
  const Config& config = CurrentConfig();
  InitTopologyCache();

  // Every rank must decide alike, so every rank must run with the same
  // settings: compare the fingerprints (max of h and of ~h gives max and min).
  unsigned long long fp[2] = {config.fingerprint, ~config.fingerprint};
  if (PMPI_Allreduce(MPI_IN_PLACE, fp, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS &&
      fp[0] != ~fp[1]) {
    g_enabled.store(false);
    g_consistent.store(false);
    WarnOnce("the MULTILANE_* variables (or the profile file's content) differ between ranks; "
             "multilane is off for this job and every MPI_Allreduce goes to the system MPI "
             "(pass the same variables to every rank, e.g. mpirun -x NAME)");
  }
  for (const std::string& problem : config.problems) WarnOnce(problem);
  for (const std::string& warning : config.warnings) WarnOnce(warning);
  if (config.verbose > 0) Info(config.Summary());
  // The report ends in collective calls: only when every rank has it on (the
  // fingerprint covers MULTILANE_REPORT).
  if (!config.report_dir.empty() && g_consistent.load()) StartJobReport(config, g_host_rank.load());
}

void OnMpiFinalizing() {
  const Config& config = CurrentConfig();
  if (ReportOn()) FinishJobReport(config);
  if (config.stats) Info("stats: rank " + std::to_string(WorldRank()) + ": " + StatsLine(StatsSnapshot()));
  ReleaseTopologyCache();
}

}  // namespace mla
