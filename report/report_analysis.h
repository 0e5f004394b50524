// report_analysis.h: what `multilane report` concludes from job report
// files: the time split, the per-size figures against the profile, what
// multilane saved, a strong-scaling prediction, the measured scaling of
// several runs of one job, and plain-language verdicts.  Pure functions of
// the parsed files (job_report.h); docs/report.md explains the model.
#ifndef MULTILANE_REPORT_REPORT_ANALYSIS_H_
#define MULTILANE_REPORT_REPORT_ANALYSIS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/report_history.h"
#include "report/report_reader.h"
#include "report/report_scaling.h"

namespace mlreport {

// Thresholds of the verdicts (shares are fractions of 1).
// Predicted parallel efficiency at 2x the GPUs at or above which the job is
// said to scale well (below it: "not 2x"; below 50 %, a predicted slowdown).
inline constexpr double kScalesWellEfficiency = 0.80;
// Share of the wall time in allreduce transfers (waiting excluded) at or
// above which the job is called communication-bound.
inline constexpr double kCommunicationBoundShare = 0.25;
// Share of the wall time spent waiting for the slowest rank at or above
// which load imbalance is reported.
inline constexpr double kWaitingHighShare = 0.10;
// A bin whose achieved bus bandwidth is below this fraction of the profile's
// expectation is reported, when it holds at least kBinMinTimeShare of the
// allreduce time (waiting excluded, as in every per-bin verdict).
inline constexpr double kBelowExpectationRatio = 0.80;
inline constexpr double kBinMinTimeShare = 0.05;
// The calls a bin needs for a verdict of its own (re-tune, slower-than-mpi,
// below-expectation), besides kBinMinTimeShare of the time.  The profile's
// noise is the spread of its medians; the job's time per call is the mean of
// the bin's calls, whose spread shrinks as 1 / sqrt(calls): from 10 calls on
// it is at most a third of the noise, so a bin off by more than the noise is
// off by three times its own spread.  With fewer, one slow call decides:
// "too few calls to judge" (BinAnalysis::too_few_calls).
inline constexpr int64_t kVerdictMinCalls = 10;
// A bin run by multilane that took longer per call than the system MPI's
// tuned time by more than this fraction is reported as a loss.
inline constexpr double kSlowerThanMpiMargin = 0.10;
// Savings below this share of the wall time are "little difference".
inline constexpr double kSavingsNoticeableShare = 0.01;
// Messages below this size are latency-bound (multilane leaves them to the
// system MPI); when they hold at least kSmallMessagesShare of the allreduce
// time, the report suggests fusing them.
inline constexpr uint64_t kSmallMessageBytes = 256 * 1024;
inline constexpr double kSmallMessagesShare = 0.50;
// Mean GPU utilisation (percent) below which the GPUs are called underused.
inline constexpr double kGpuUnderusedPct = 50.0;
// Measured parallel efficiency of a scaling series below which it is flagged.
inline constexpr double kMeasuredEfficiencyLow = 0.80;
// The scale factors of the prediction.
inline constexpr int kPredictionFactors[] = {2, 4};

// Where the job's time went: means over ranks.  compute + allreduce + wait
// = wall; `allreduce` is the time inside MPI_Allreduce less the waiting.
struct TimeSplit {
  double wall_s = 0;
  double compute_s = 0;
  double allreduce_s = 0;
  double wait_s = 0;
  double setup_s = 0;  // of allreduce_s: multilane's one-time setup inside the first calls
  double compute_share = 0;
  double allreduce_share = 0;
  double wait_share = 0;
  bool clamped = false;  // the file's figures were inconsistent and were clamped
};

// One size bin, with the profile's expectation where it has one.
struct BinAnalysis {
  std::string memory;
  uint64_t from = 0;
  std::optional<uint64_t> to;
  int64_t calls = 0;
  double mean_message_bytes = 0;
  std::string algo;                          // the choice that ran most of the calls (MostCalls)
  std::map<std::string, int64_t> choices;    // the calls by what ran them (ChoiceCalls)
  double time_s = 0;                         // mean over ranks, inside allreduce
  double time_share = 0;                     // of all bins' time_s
  double transfer_s = 0;                     // time_s less the bin's waiting
  double transfer_share = 0;                 // of all bins' transfer_s
  double calls_share = 0;                    // of all bins' calls
  double per_call_us = 0;                    // (time_s.max - wait) / calls: what algbw uses
  double busbw_gbs = 0;                      // achieved, from the file
  std::optional<double> time_us;             // the profile's time of its algorithm
  std::optional<double> mpi_time_us;         // the profile's time of the system MPI
  std::optional<double> expected_busbw_gbs;  // from the profile's time_us
  std::optional<double> mpi_busbw_gbs;       // from the profile's mpi_time_us
  std::optional<double> vs_expected;         // busbw / expected
  std::optional<double> saved_s;             // calls by multilane x (mpi_time - per_call)
  // How time_us and mpi_time_us were priced at the mean message size
  // (mla::PriceBasisName: "measured", "interpolated", "extrapolated", or
  // "entry" for a profile without points, priced as before); "" when the
  // bin has no profile figures.  priced_from/priced_to: the probed sizes used.
  std::string price_basis;
  uint64_t priced_from = 0;
  uint64_t priced_to = 0;
  std::optional<double> noise;       // the profile's relative noise at the mean size (priced bins)
  std::optional<double> vs_profile;  // per_call_us / time_us (priced bins)
  bool off_profile = false;          // |vs_profile| beyond 1 +- noise: a reason to re-tune
  // Priced, with kBinMinTimeShare of the time, but fewer than
  // kVerdictMinCalls calls: no verdict on the bin ("too few calls to judge").
  bool too_few_calls = false;
};

// The relative noise assumed for points that do not record one.
inline constexpr double kDefaultProfileNoise = 0.10;

// What multilane saved against the system MPI's tuned times.  Counted only
// where the profile was tuned at a comparable layout: a rank count within a
// factor kComparableRanks of the job's and, for device bins, the job's ranks
// per GPU; else `why_not` says why nothing is claimed.  Each bin compares the
// job's own time per call with the system MPI's time priced at the job's mean
// message size (mla::PriceEntry: log-log between the profile's points; for a
// profile without points, as before, a lower bound: the tuned time scaled down
// linearly when the job's messages are smaller than the size it was measured
// at, never scaled up), and the total never exceeds the job's time in
// allreduce (`capped`).
struct Savings {
  bool known = false;   // at least one comparable bin has mpi_time_us
  std::string why_not;  // when !known and a profile was in force: why
  bool capped = false;  // the total was cut to the job's allreduce time
  double saved_s = 0;   // may be negative (a loss)
  double share_of_wall = 0;
  double job_speedup = 1;  // (wall + saved) / wall
  int bins_known = 0;
  int bins_total = 0;
};

// The profile's rank count at which a job's rank count is comparable: within
// this factor either way.
inline constexpr double kComparableRanks = 2.0;

// Which ranks per GPU the profile predicts would have been fastest for the
// job's device calls: per ranks-per-GPU value tuned, mla::PriceCalls of the
// job's device bins under that value's own entries (ppg=N): calls x the
// entry's time priced at the bin's mean message size (all values are tuned at
// the same sizes, so the sums compare like with like).
struct LayoutAdvice {
  bool known = false;
  std::string note;                                  // why not, when !known
  int job_ppg = 0;                                   // what the job ran
  int best_ppg = 0;                                  // the fastest by the profile
  double ratio = 1;                                  // predicted allreduce time at best_ppg / at job_ppg
  double saved_s = 0;                                // (1 - ratio) x the job's device allreduce time (waiting excluded)
  std::vector<std::pair<int, double>> predicted_us;  // (ranks per GPU, summed tuned time)
};

// One point of the strong-scaling prediction.
struct PredictionPoint {
  double factor = 1;                         // k: GPUs (or ranks) x k
  int scale = 0;                             // the GPUs (or ranks) that gives
  double ring_factor = 1;                    // of the GPUs: (2(kn-1)/kn) / (2(n-1)/n)
  double node_ring_factor = 1;               // of the machines: RingFactor(nodes, k)
  double allreduce_growth = 1;               // g = AllreduceGrowth: (1 - s) ring + s node ring
  double time_s = 0;                         // C/k + W/k + A g
  double speedup = 1;                        // wall / time_s
  double efficiency = 1;                     // speedup / k
  std::optional<double> speedup_system_mpi;  // the same with A + saved as allreduce time
};

// Energy of the sampled GPUs.
struct EnergyAnalysis {
  bool measured = false;
  int gpus = 0;
  double energy_j = 0;
  double mean_power_w = 0;
  std::optional<double> mean_utilization_pct;
  double communication_energy_j = 0;  // energy x (allreduce + wait share)
};

enum class VerdictLevel { kGood, kNote, kWarn };

// One plain-language conclusion; `text` names the threshold it used.
struct Verdict {
  std::string id;
  VerdictLevel level = VerdictLevel::kNote;
  std::string text;
};

// Everything the report says about one file.
struct JobAnalysis {
  TimeSplit split;
  std::vector<BinAnalysis> bins;
  std::string scale_unit;  // "GPUs" when the job used GPUs, else "ranks"
  int scale = 0;           // job.gpus, or job.ranks
  bool prediction_possible = false;
  std::string prediction_note;  // why not, when not
  std::vector<PredictionPoint> prediction;
  BetweenNodes between_nodes;  // the model's share of the step between nodes
  HistoryComparison history;   // this run beside the job's earlier runs (filled by the caller: `multilane report`)
  Savings savings;
  LayoutAdvice layout;
  EnergyAnalysis energy;
  std::vector<Verdict> verdicts;
};

// One run in a measured scaling series.
struct SeriesPoint {
  size_t file = 0;  // index into the files given
  int scale = 0;
  double wall_s = 0;
  double factor = 1;                        // scale / first scale
  double speedup = 1;                       // first wall / wall
  double efficiency = 1;                    // speedup / factor
  std::optional<double> predicted_speedup;  // the first run's model at this factor
  double allreduce_share = 0;
};

// Several files of the same job (same job.name) at different scales.
struct ScalingSeries {
  std::string job_name;
  std::string scale_unit;
  std::vector<SeriesPoint> points;  // by scale, smallest first
  std::vector<Verdict> verdicts;
};

// The files given to `multilane report`, analysed.
struct ReportSet {
  std::vector<JobReport> reports;
  std::vector<JobAnalysis> jobs;      // one per report, same order
  std::vector<ScalingSeries> series;  // the measured scaling of the reports of one job name
};

// Analyses every report and the scaling series between them.
ReportSet AnalyzeReports(std::vector<JobReport> reports);

// Analyses one file.
JobAnalysis AnalyzeJob(const JobReport& report);

// The bin's calls by what ran them: its algos, with the passthrough calls a
// system algorithm ran under that choice's name ("passthrough mpi=ring",
// mla::SystemChoiceText) instead of "passthrough".
std::map<std::string, int64_t> ChoiceCalls(const ReportBin& bin);

// The choice that ran most of the bin's calls (ChoiceCalls; the first by
// name of those that ran most); "" when the file names none.
std::string MostCalls(const ReportBin& bin);

// `v` written by printf format `fmt` (one double, e.g. "%.3g GB/s"): a
// figure for people.
std::string FormatNumber(const char* fmt, double v);

// "41 %", "4.1 %", "0.4 %": a share for people.
std::string Percent(double share);

// "1.3x"-style factor with two significant decimals where small.
std::string Times(double factor);

// "850 J", "62.0 kJ", "1.25 MJ": energy for people.
std::string Joules(double joules);

// "1M", "256K", "1000": sizes as the profile writes them.
std::string SizeLabel(uint64_t bytes);

// "host 1M-2M": a bin for people.
std::string BinLabel(const BinAnalysis& bin, bool with_memory);

// How a bin's profile figures were priced, for people: "interpolated
// 16K–64K", "measured 64K", "extrapolated from 1M", "entry at 1M" (a profile
// without points), "-" (no profile figures).
std::string PriceNote(const BinAnalysis& bin);

// "good", "note", "warn".
const char* LevelName(VerdictLevel level);

}  // namespace mlreport

#endif  // MULTILANE_REPORT_REPORT_ANALYSIS_H_
