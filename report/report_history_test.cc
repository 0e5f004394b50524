#include "report/report_history.h"

#include <gtest/gtest.h>

#include "report/report_analysis.h"

namespace mlreport {
namespace {

mla::JobRun RunAt(const std::string& run_id, const std::string& started, double wall, int ppg) {
  mla::JobRun r;
  r.job_key = "train:0123456789ab";
  r.run_id = run_id;
  r.job_id = "local";
  r.started_utc = started;
  r.nodes = 2;
  r.ranks = 8 * ppg;
  r.gpus = 8;
  r.ranks_per_gpu = ppg;
  r.algorithms = "host 4M lane";
  r.wall_s = wall;
  r.compute_s = wall * 0.6;
  r.allreduce_s = wall * 0.3;
  r.wait_s = wall * 0.1;
  return r;
}

TEST(ReportHistory, ThisRunBesideTheEarlierOnes) {
  const mla::JobRun now = RunAt("r3", "2026-12-03T10:00:00Z", 80, 2);
  // Out of order, this run itself among them, and another job's run.
  mla::JobRun other = RunAt("x", "2026-12-01T00:00:00Z", 1, 1);
  other.job_key = "other";
  const HistoryComparison h = CompareWithHistory(
      now, {RunAt("r2", "2026-12-02T10:00:00Z", 100, 1), now, RunAt("r1", "2026-12-01T10:00:00Z", 120, 1), other,
            RunAt("r4", "2026-12-04T10:00:00Z", 10, 1)});  // a later run is not an earlier one
  ASSERT_TRUE(h.known);
  ASSERT_EQ(h.runs.size(), 3u);
  EXPECT_EQ(h.runs[0].run_id, "r1");
  EXPECT_EQ(h.runs[1].run_id, "r2");
  EXPECT_EQ(h.runs[2].run_id, "r3");
  EXPECT_EQ(h.best, 2u);
  EXPECT_DOUBLE_EQ(h.wall_ratio, 0.8);
  EXPECT_EQ(h.paid, "yes");
  ASSERT_EQ(h.changes.size(), 2u);
  EXPECT_EQ(h.changes[0], "ranks 8 -> 16");
  EXPECT_EQ(h.changes[1], "ranks per GPU 1 -> 2");
}

// Runs of one second are ordered by the pid that ends their report's name,
// as a number (999 before 1000); a renamed report (job id and start) too.
TEST(ReportHistory, RunsOfOneSecond) {
  const std::string t = "2026-12-03T10:00:00Z";
  const mla::JobRun now = RunAt("multilane-report-local-20261203T100000Z-1000", t, 80, 2);
  const HistoryComparison h = CompareWithHistory(
      now, {RunAt("multilane-report-local-20261203T100000Z-1001", t, 70, 1),
            RunAt("multilane-report-local-20261203T100000Z-999", t, 100, 1), RunAt("local-" + t, t, 90, 1)});
  ASSERT_TRUE(h.known);
  ASSERT_EQ(h.runs.size(), 3u);
  EXPECT_EQ(h.runs[0].run_id, "local-2026-12-03T10:00:00Z");  // ends in no pid: by text, before "multilane-..."
  EXPECT_EQ(h.runs[1].run_id, "multilane-report-local-20261203T100000Z-999");
  EXPECT_EQ(h.runs[2].run_id, now.run_id);  // 1001 is a later run
}

TEST(ReportHistory, PaidOrNotOrTheSame) {
  const mla::JobRun before = RunAt("a", "2026-12-01T10:00:00Z", 100, 1);
  EXPECT_EQ(CompareWithHistory(RunAt("b", "2026-12-02T10:00:00Z", 120, 2), {before}).paid, "no");
  EXPECT_EQ(CompareWithHistory(RunAt("b", "2026-12-02T10:00:00Z", 103, 2), {before}).paid, "same");
  EXPECT_EQ(CompareWithHistory(RunAt("b", "2026-12-02T10:00:00Z", 90, 1), {before}).paid, "");  // nothing changed
  const HistoryComparison none = CompareWithHistory(before, {before});
  EXPECT_FALSE(none.known);
  EXPECT_NE(none.note.find("no earlier run of job train:0123456789ab"), std::string::npos);
}

TEST(ReportHistory, TheVerdictSaysWhetherTheChangePaid) {
  JobReport r;
  r.job_key = "train:0123456789ab";
  r.path = "/x/multilane-report-local-20261203T100000Z-42.json";
  r.job_id = "local";
  r.started_utc = "2026-12-03T10:00:00Z";
  r.nodes = 2;
  r.ranks = 16;
  r.gpus = 8;
  r.ranks_per_gpu = 2;
  r.wall_s = {150, 150, 150};
  r.allreduce_s = {45, 45, 45};
  JobAnalysis a = AnalyzeJob(r);
  AddHistory(r, &a, {RunAt("multilane-report-local-20261202T100000Z-7", "2026-12-02T10:00:00Z", 100, 1)});
  ASSERT_TRUE(a.history.known);
  EXPECT_EQ(a.history.runs.back().run_id, "multilane-report-local-20261203T100000Z-42");
  const Verdict& v = a.verdicts.back();
  EXPECT_EQ(v.id, "history");
  EXPECT_EQ(v.level, VerdictLevel::kWarn);
  EXPECT_NE(v.text.find("ranks per GPU 1 -> 2"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("did not pay"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("x1.50"), std::string::npos) << v.text;
  JobAnalysis alone = AnalyzeJob(r);
  AddHistory(r, &alone, {}, "no job history yet");
  EXPECT_FALSE(alone.history.known);
  EXPECT_EQ(alone.history.note, "no job history yet");
  for (const Verdict& x : alone.verdicts) EXPECT_NE(x.id, "history");
}

}  // namespace
}  // namespace mlreport
