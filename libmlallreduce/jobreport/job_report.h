// job_report.h: the job report (MULTILANE_REPORT=DIR): where each rank's time
// goes between MPI_Init and MPI_Finalize, recorded per call and written by
// world rank 0 at MPI_Finalize as one JSON file (docs/job-report-format.md).
//
// Off by default; then a call pays one well-predicted branch (ReportOn).  On,
// a call pays two clock reads, one attribute lookup on its communicator and
// a few relaxed atomic additions; about one call in MULTILANE_REPORT_SAMPLE
// also runs a PMPI_Barrier to measure waiting.
#ifndef MLA_JOB_REPORT_H_
#define MLA_JOB_REPORT_H_

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "libmlallreduce/base/stats.h"
#include "libmlallreduce/startup/config.h"
#include "mlallreduce.h"
#include "vocab/profile.h"

namespace mla::lib {

namespace report_internal {
extern std::atomic<bool> g_on;
}  // namespace report_internal

// Returns true between StartJobReport and FinishJobReport.  Thread-safe; the
// whole cost of the report for a job that did not ask for it.
inline bool ReportOn() { return report_internal::g_on.load(std::memory_order_acquire); }

// Starts recording: notes the time, creates the communicator attribute that
// holds the call counters and, on the first rank of a host (host_rank 0),
// starts the GPU sampler where NVML is present.  Call on every rank at the
// end of MPI_Init, only when config.report_dir is set and every rank runs
// with the same settings (FinishJobReport is collective).  Not collective.
void StartJobReport(const Config& config, int host_rank);

// What the dispatch learned about one call, for the report.
struct CallOutcome {
  uint64_t bytes = 0;                    // count x type size
  MemKind kind = MemKind::kHost;         // where the buffers live
  mla_algo algo = MLA_ALGO_PASSTHROUGH;  // the algorithm that ran it
  int path = -1;                         // device buffers: how the data moved (mla_device_path)
  bool nccl_fallback = false;            // device buffers: NCCL was asked for, MPI staging ran
  int system_algo = -1;                  // passthrough run by a system algorithm: its slot (stats.h)
};

// One call being timed: ReportCallBegin before the allreduce, ReportCallEnd
// after it.  Times are in ticks of the report's clock (the TSC where it is
// invariant, else nanoseconds of CLOCK_MONOTONIC), turned into seconds at
// MPI_Finalize.
struct ReportClock {
  uint64_t start = 0;
  uint64_t wait = 0;      // time in the sampling barrier beyond the barrier's own latency
  uint64_t sampling = 0;  // time sampling added: the barrier's latency, calibration
  int comm_size = 0;      // 0 when unknown
  bool sampled = false;
};

// Reads the clock and counts the call on `comm`; when the call is one of the
// sampled ones (the same calls on every rank of `comm`), runs PMPI_Barrier on
// `comm` first and records its time, less the barrier's own latency (measured
// on the communicator's first sampled calls with a second barrier), as
// waiting.  Communicators of one rank and intercommunicators are never
// sampled.  Thread-safe.
ReportClock ReportCallBegin(MPI_Comm comm);

// Reads the clock and adds the call to its (memory kind, size bin).
// Thread-safe, lock-free.
void ReportCallEnd(const ReportClock& clock, const CallOutcome& outcome);

// Times one-time setup the library does inside a call (loading the CUDA
// module and the driver's first answer, a communicator's first layout): the
// report takes the largest such time over the ranks out of the size bin of
// the call it happened in (one rank's setup holds up the others inside the
// same collective) and gives it once, as time.setup_s, so that the first
// call of a size does not read as that size's cost.  Construct around the setup; nested timers count
// once; nothing is timed while the report is off.  Thread-safe.
class ReportSetupTimer {
 public:
  ReportSetupTimer();
  ~ReportSetupTimer();
  ReportSetupTimer(const ReportSetupTimer&) = delete;
  ReportSetupTimer& operator=(const ReportSetupTimer&) = delete;

 private:
  uint64_t start_ = 0;  // 0: not timing (report off, or an outer timer runs)
};

// Stops recording, gathers every rank's figures to world rank 0 and writes
// the report there.  A directory that cannot be written gives one warning,
// never an error.  Collective over MPI_COMM_WORLD: call on every rank at the
// start of MPI_Finalize, when ReportOn() is true.
void FinishJobReport(const Config& config);

// ---------------------------------------------------------------------------
// Pieces with no MPI in them, for the unit tests.

// Size bins: 0 holds 0-byte calls; bin b+1 holds [2^b, 2^(b+1)).
constexpr int kSizeBins = 65;
int SizeBin(uint64_t bytes);
uint64_t SizeBinFrom(int bin);
// The exclusive upper edge as a double (2^64 for the last bin).
double SizeBinTo(int bin);

// Returns true when call number `counter` (0-based) of a communicator is to
// be sampled, for about one call in `period`.  A hash of the counter, not
// every period-th call, so that a loop making a fixed number of calls per
// step does not sample the same call of the step every time.  Depends only
// on its arguments, so every rank samples the same calls.
bool SampledCall(uint64_t counter, int period);

// {min, sum, max} of one figure over the ranks.
struct Spread {
  double min = 0, sum = 0, max = 0;
};

// One (memory kind, size bin) of the report, as world rank 0 assembled it.
struct ReportBin {
  MemKind kind = MemKind::kHost;
  int bin = 0;
  double calls = 0, bytes = 0;           // world rank 0's (the busiest rank's when rank 0 made none)
  Spread time_s;                         // per rank
  double wait_s_sum = 0;                 // sum over ranks of the estimated waiting
  int comm_size = 0;                     // the largest communicator the bin's calls ran on
  uint64_t algos[MLA_ALGO_COUNT] = {0};  // rank 0's calls by algorithm
  uint64_t paths[MLA_PATH_COUNT] = {0};  // rank 0's device calls by how their data moved
  uint64_t nccl_fallbacks = 0;           // rank 0's device calls whose NCCL fell back to MPI
  std::vector<std::pair<std::string, uint64_t>> system_algos;  // rank 0's passthrough calls by system algorithm
  const ProfileEntry* profile = nullptr;
};

// Everything the report file holds, as world rank 0 assembled it.
struct ReportData {
  std::string job_id = "local";
  std::string job_name;
  std::string job_key;      // the history's key (vocab/job_key.h)
  std::string started_utc;  // ISO 8601
  int ranks = 1, nodes = 0, ranks_per_node = 0, ranks_per_gpu = 1, gpus = 0;
  bool regular = false;
  std::vector<std::string> hosts;  // sorted, distinct
  std::string algo = "auto";
  bool has_profile = false;
  std::string profile_text;
  Spread wall_s, allreduce_s, wait_s;
  Spread sampling_s;  // what the sampling barriers cost beyond waiting (part of allreduce_s)
  Spread setup_s;     // one-time setup inside calls (part of allreduce_s, not of the bins)
  uint64_t wait_sampled_calls = 0;
  std::vector<ReportBin> bins;  // sorted by memory kind, then size
  std::string gpus_json;        // the elements of "gpus", comma-separated
  mla_entry_stats entries{};    // world rank 0's calls per entry point (every rank makes the same collectives)
  DetailStats details;          // world rank 0's unsupported calls by reason (its system_algos are in the bins)
};

// Renders the report as JSON text (docs/job-report-format.md).
std::string RenderReport(const ReportData& data);

// The estimated waiting time of a bin: its time scaled by the waiting share
// of its sampled calls, or by `fallback_share` when it has none.
double EstimatedWait(double time_s, double sampled_wait_s, double sampled_time_s, double fallback_share);

}  // namespace mla::lib

#endif  // MLA_JOB_REPORT_H_
