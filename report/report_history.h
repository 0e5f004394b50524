// report_history.h: one run of a job summarised from its report (the job
// history's vocab/job_run.h), and this run beside the job's earlier runs (docs/history.md, docs/report.md "Earlier
// runs of the job").  Pure functions: `multilane report` reads the earlier
// runs from the user's database and hands them in; `multilane history`
// records runs summarised here.
#ifndef MULTILANE_REPORT_HISTORY_H_
#define MULTILANE_REPORT_HISTORY_H_

#include <optional>
#include <string>
#include <vector>

#include "report/report_reader.h"
#include "vocab/job_run.h"

namespace mlreport {

struct JobAnalysis;  // report_analysis.h

// A change of wall time within this fraction of the earlier run's counts as
// no change (run-to-run noise of one job on one machine).
inline constexpr double kHistorySameWallMargin = 0.05;

// Whether run `a` started before run `b`: by start, then (runs of one second)
// by the pid that ends the library's run ids, else by the ids as text.
bool StartedBefore(const mla::JobRun& a, const mla::JobRun& b);

// The summary of a job report and its analysis.
mla::JobRun SummarizeRun(const JobReport& report, const JobAnalysis& analysis);

// This run beside the earlier runs of its job key.
struct HistoryComparison {
  bool known = false;                // the job has earlier runs
  std::string note;                  // why not, when not known (no database, no key, no earlier run)
  std::vector<mla::JobRun> runs;     // the earlier runs, oldest first, then this run last
  std::vector<std::string> changes;  // this run against the one before: "ranks per GPU 1 -> 2", "algorithms", ...
  double wall_ratio = 1;             // this run's wall / the previous run's
  std::string paid;                  // with changes: "yes" (faster beyond the margin), "no" (slower), "same"
  size_t best = 0;                   // index in runs of the shortest wall time
};

// Compares `current` with the runs of `earlier` of its key that started
// before it (of the same second: by the pid that ends the library's run ids);
// this run itself and later runs are left out.  Not known
// when no earlier run is left.
HistoryComparison CompareWithHistory(const mla::JobRun& current, std::vector<mla::JobRun> earlier);

// Fills analysis->history with CompareWithHistory(SummarizeRun(report,
// *analysis), earlier) and, when the job has earlier runs, adds the verdict
// `history`: what changed from the run before and whether it paid (good:
// faster beyond kHistorySameWallMargin, warn: slower, note: the same, or
// nothing changed).  `why_none`: the note when there is no history to read.
void AddHistory(const JobReport& report, JobAnalysis* analysis, std::vector<mla::JobRun> earlier,
                const std::string& why_none = "");

}  // namespace mlreport

#endif  // MULTILANE_REPORT_HISTORY_H_
