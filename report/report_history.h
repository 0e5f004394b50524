// report_history.h: one run of a job as the job history keeps it, and this
// run beside the job's earlier runs (docs/history.md, docs/report.md "Earlier
// runs of the job").  Pure functions: `multilane report` reads the earlier
// runs from the user's database and hands them in; `multilane history`
// records runs summarised here.
#ifndef MULTILANE_REPORT_HISTORY_H_
#define MULTILANE_REPORT_HISTORY_H_

#include <optional>
#include <string>
#include <vector>

#include "report_reader.h"

namespace multilane {

struct JobAnalysis;  // report_analysis.h

// A change of wall time within this fraction of the earlier run's counts as
// no change (run-to-run noise of one job on one machine).
inline constexpr double kHistorySameWallMargin = 0.05;

// One run, as the history keeps it.
struct RunSummary {
  std::string job_key;         // job.key; DefaultJobKey(name, "") for files written before keys
  std::string run_id;          // the report file's name without .json when the library named it, else job id-start
  std::string job_name, job_id, started_utc;
  std::string node_type;       // the profile's node_type=, "" without a profile
  std::string profile_digest;  // 16 hex digits of the profile text in force, "" without one
  int nodes = 0, ranks = 0, gpus = 0, ranks_per_gpu = 0;
  std::string algorithms;      // per bin with calls: "host 4M lane; host 16M split" (what ran most)
  double wall_s = 0, compute_s = 0, allreduce_s = 0, wait_s = 0;  // TimeSplit of the analysis
  std::optional<double> energy_j;  // the sampled GPUs'
  std::string histogram_json;  // [[memory, from, calls, bytes, time_s], ...]
};

// Whether run `a` started before run `b`: by start, then (runs of one second)
// by the pid that ends the library's run ids, else by the ids as text.
bool StartedBefore(const RunSummary& a, const RunSummary& b);

// The summary of a job report and its analysis.
RunSummary SummarizeRun(const JobReport& report, const JobAnalysis& analysis);

// This run beside the earlier runs of its job key.
struct HistoryComparison {
  bool known = false;              // the job has earlier runs
  std::string note;                // why not, when not known (no database, no key, no earlier run)
  std::vector<RunSummary> runs;    // the earlier runs, oldest first, then this run last
  std::vector<std::string> changes;  // this run against the one before: "ranks per GPU 1 -> 2", "algorithms", ...
  double wall_ratio = 1;           // this run's wall / the previous run's
  std::string paid;                // with changes: "yes" (faster beyond the margin), "no" (slower), "same"
  size_t best = 0;                 // index in runs of the shortest wall time
};

// Compares `current` with the runs of `earlier` of its key that started
// before it (of the same second: by the pid that ends the library's run ids);
// this run itself and later runs are left out.  Not known
// when no earlier run is left.
HistoryComparison CompareWithHistory(const RunSummary& current, std::vector<RunSummary> earlier);

// Fills analysis->history with CompareWithHistory(SummarizeRun(report,
// *analysis), earlier) and, when the job has earlier runs, adds the verdict
// `history`: what changed from the run before and whether it paid (good:
// faster beyond kHistorySameWallMargin, warn: slower, note: the same, or
// nothing changed).  `why_none`: the note when there is no history to read.
void AddHistory(const JobReport& report, JobAnalysis* analysis, std::vector<RunSummary> earlier,
                const std::string& why_none = "");

}  // namespace multilane

#endif  // MULTILANE_REPORT_HISTORY_H_
