#include "report/layout_choice.h"

#include <gtest/gtest.h>

namespace mlreport {
namespace {

// Device calls of 4 MiB: 1000 per run.  At 1 rank per GPU the profile prices
// them at 1000 us, at 2 at 400 us (lanes pay), at 4 at 1100 us.
mla::Profile TestProfile() {
  mla::Profile p;
  std::string error;
  EXPECT_TRUE(
      p.Parse("multilane-profile 1 node_type=abc ranks_per_gpu=1 ranks_per_gpu_tuned=1,2,4; "
              "device 0 inf lane ppg=1 time_us=1000 mpi_time_us=1000 at=4M; "
              "device 0 inf lane ppg=2 time_us=400 mpi_time_us=1000 at=4M; "
              "device 0 inf lane ppg=4 time_us=1100 mpi_time_us=1000 at=4M",
              &error))
      << error;
  return p;
}

mla::JobRun JobRun(const std::string& started, int ppg, double compute, double allreduce, double wait) {
  mla::JobRun r;
  r.job_key = "train";
  r.run_id = started;
  r.started_utc = started;
  r.ranks_per_gpu = ppg;
  r.compute_s = compute;
  r.allreduce_s = allreduce;
  r.wait_s = wait;
  r.wall_s = compute + allreduce + wait;
  r.histogram_json = "[[\"device\", 4194304, 1000, 4194304000, 1.0]]";
  return r;
}

TEST(LayoutChoice, NoHistoryTakesTheProfilesRecommendation) {
  const LayoutChoice c = ChooseRanksPerGpu({}, TestProfile(), {1, 2, 4}, 1);
  EXPECT_EQ(c.ranks_per_gpu, 1);
  EXPECT_EQ(c.basis, "profile");
}

TEST(LayoutChoice, TriesAnUntriedValuePredictedToWinByMoreThanTheMargin) {
  // 100 s at 1 per GPU, 30 s of it in allreduce: at 2 per GPU the profile
  // says 0.4 x: 60 + 10 + 12 = 82 s < 90 s (100 s less the 10 % margin).
  const LayoutChoice c =
      ChooseRanksPerGpu({JobRun("2026-12-01T10:00:00Z", 1, 60, 30, 10)}, TestProfile(), {1, 2, 4}, 1);
  EXPECT_EQ(c.ranks_per_gpu, 2);
  EXPECT_EQ(c.basis, "predicted");
  EXPECT_NEAR(c.predicted_wall_s, 82, 1e-9);
  EXPECT_NE(c.why.find("trying 2 per GPU"), std::string::npos) << c.why;
  EXPECT_TRUE(c.notes.empty());
}

TEST(LayoutChoice, StaysWhereThePredictionIsWithinTheMargin) {
  // Allreduce 10 s of 100: at 2 per GPU 60 + 30 + 4 = 94 s, not below 90 s.
  const LayoutChoice c =
      ChooseRanksPerGpu({JobRun("2026-12-01T10:00:00Z", 1, 60, 10, 30)}, TestProfile(), {1, 2, 4}, 1);
  EXPECT_EQ(c.ranks_per_gpu, 1);
  EXPECT_EQ(c.basis, "measured");
  EXPECT_NE(c.why.find("the fastest measured"), std::string::npos) << c.why;
}

TEST(LayoutChoice, ReturnsToTheBestMeasuredWhenATryDidNotPay) {
  // The try of 2 per GPU took 120 s (its computation grew under MPS): back to 1.
  const LayoutChoice c =
      ChooseRanksPerGpu({JobRun("2026-12-01T10:00:00Z", 1, 60, 30, 10), JobRun("2026-12-02T10:00:00Z", 2, 100, 12, 8)},
                        TestProfile(), {1, 2, 4}, 1);
  EXPECT_EQ(c.ranks_per_gpu, 1);
  EXPECT_EQ(c.basis, "measured");
  EXPECT_NE(c.why.find("back to 1 per GPU"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("did not pay"), std::string::npos) << c.why;
}

TEST(LayoutChoice, MeasuredMediansDecide) {
  // Two runs at each value: medians 100 (1 per GPU) and 90 (2 per GPU).
  const LayoutChoice c = ChooseRanksPerGpu(
      {JobRun("a", 1, 60, 30, 10), JobRun("b", 1, 60, 30, 10), JobRun("c", 2, 60, 20, 10), JobRun("d", 2, 60, 20, 10)},
      TestProfile(), {1, 2, 4}, 1);
  EXPECT_EQ(c.ranks_per_gpu, 2);
  EXPECT_EQ(c.basis, "measured");
  EXPECT_NEAR(c.predicted_wall_s, 90, 1e-9);
}

TEST(LayoutChoice, NoPriceNoPrediction) {
  mla::Profile host_only;
  std::string error;
  ASSERT_TRUE(host_only.Parse("multilane-profile 1 node_type=abc; host 0 inf lane time_us=5", &error)) << error;
  const LayoutChoice c = ChooseRanksPerGpu({JobRun("a", 1, 60, 30, 10)}, host_only, {1, 2}, 1);
  EXPECT_EQ(c.ranks_per_gpu, 1);
  EXPECT_EQ(c.basis, "measured");
}

// With two values measured, the computation's growth is fitted and carried
// to the untried value: ranks that contend (computation x ppg) make 4 per GPU
// a loss whatever its allreduce price; work shared out (computation / ppg)
// makes it a win.
TEST(LayoutChoice, TheComputationsGrowthIsFittedToTheMeasuredValues) {
  // Allreduce at 4 per GPU: the profile says 1100/1000 of 1 per GPU.
  const LayoutChoice contend =
      ChooseRanksPerGpu({JobRun("a", 1, 60, 30, 10), JobRun("b", 2, 120, 12, 10)}, TestProfile(), {1, 2, 4}, 1);
  EXPECT_NEAR(contend.compute_exponent, 1, 1e-9);
  EXPECT_EQ(contend.ranks_per_gpu, 1);
  EXPECT_EQ(contend.basis, "measured");
  mla::Profile cheap4;
  std::string error;
  ASSERT_TRUE(
      cheap4.Parse("multilane-profile 1 node_type=abc ranks_per_gpu=1 ranks_per_gpu_tuned=1,2,4; "
                   "device 0 inf lane ppg=1 time_us=1000 at=4M; device 0 inf lane ppg=2 time_us=400 at=4M; "
                   "device 0 inf lane ppg=4 time_us=400 at=4M",
                   &error))
      << error;
  // Shared out: 1 per GPU 60 s of computation, 2 per GPU 30 s (best, 52 s
  // wall): at 4, 15 + 10 + 12 = 37 s < 46.8 s.
  const LayoutChoice split =
      ChooseRanksPerGpu({JobRun("a", 1, 60, 30, 10), JobRun("b", 2, 30, 12, 10)}, cheap4, {1, 2, 4}, 1);
  EXPECT_NEAR(split.compute_exponent, -1, 1e-9);
  EXPECT_EQ(split.ranks_per_gpu, 4);
  EXPECT_NEAR(split.predicted_wall_s, 37, 1e-9);
  EXPECT_NE(split.why.find("computation x ppg^-1.00, fitted to the 2 values measured"), std::string::npos) << split.why;
  // The same runs with the growth unknown (exponent 0) would not have tried 4.
  const LayoutChoice contend4 =
      ChooseRanksPerGpu({JobRun("a", 1, 60, 30, 10), JobRun("b", 2, 120, 12, 10)}, cheap4, {1, 2, 4}, 1);
  EXPECT_EQ(contend4.ranks_per_gpu, 1);  // 240 + 10 + 12 s: far from a win
}

// A run at a value the profile was not tuned at (a forced ranks-per-gpu:3,
// or a damaged entry's 1000) never becomes the choice: the cli_filter would
// ask Slurm for it.
TEST(LayoutChoice, OnlyTheProfilesTunedValuesAreChosen) {
  const LayoutChoice c = ChooseRanksPerGpu(
      {JobRun("a", 1, 60, 30, 10), JobRun("b", 3, 1, 1, 1), JobRun("c", 1000, 1, 1, 1)}, TestProfile(), {1, 2, 4}, 1);
  EXPECT_EQ(c.ranks_per_gpu, 2);  // predicted from the run at 1, not the fast untuned runs
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("2 at a ranks per GPU the profile was not tuned at"), std::string::npos) << c.notes[0];
}

// The best value is the one with the least median: one fast outlier does
// not make it, and the prediction starts from that median, not the outlier.
TEST(LayoutChoice, AnOutlierDoesNotDecide) {
  const LayoutChoice c =
      ChooseRanksPerGpu({JobRun("a", 1, 60, 30, 10), JobRun("b", 1, 60, 30, 10), JobRun("c", 1, 20, 10, 0),
                         JobRun("d", 2, 70, 12, 10), JobRun("e", 2, 70, 12, 10), JobRun("f", 2, 70, 12, 10)},
                        TestProfile(), {1, 2}, 1);
  EXPECT_EQ(c.ranks_per_gpu, 2);  // medians 100 (1 per GPU) and 92 (2); the 30 s run at 1 is an outlier
  EXPECT_EQ(c.basis, "measured");
  EXPECT_NEAR(c.predicted_wall_s, 92, 1e-9);
}

// Host calls change with the ranks per GPU too: they are priced by the
// profile's host ppg=N entries.
TEST(LayoutChoice, HostCallsArePricedByTheirOwnEntries) {
  mla::Profile p;
  std::string error;
  ASSERT_TRUE(
      p.Parse("multilane-profile 1 node_type=abc ranks_per_gpu=1 ranks_per_gpu_tuned=1,2; "
              "host 0 inf lane ppg=1 time_us=1000 at=4M; host 0 inf lane ppg=2 time_us=100 at=4M",
              &error))
      << error;
  mla::JobRun r = JobRun("a", 1, 60, 30, 10);
  r.histogram_json = "[[\"host\", 4194304, 1000, 4194304000, 1.0]]";
  const LayoutChoice c = ChooseRanksPerGpu({r}, p, {1, 2}, 1);
  EXPECT_EQ(c.ranks_per_gpu, 2);
  EXPECT_NEAR(c.predicted_wall_s, 73, 1e-9);  // 60 + 10 + 30 x 0.1
}

// Runs of another node type, and damaged ones, are left out with one note.
TEST(LayoutChoice, ForeignAndDamagedRunsAreIgnoredWithOneNote) {
  mla::JobRun foreign = JobRun("a", 2, 1, 1, 1);
  foreign.node_type = "other";
  mla::JobRun damaged = JobRun("b", 2, 1, 1, 1);
  damaged.histogram_json = "{not a list";
  mla::JobRun no_wall = JobRun("c", 2, 0, 0, 0);
  mla::JobRun mine = JobRun("d", 1, 60, 10, 30);
  mine.node_type = "abc";
  const LayoutChoice c = ChooseRanksPerGpu({foreign, damaged, no_wall, mine}, TestProfile(), {1, 2, 4}, 4);
  EXPECT_EQ(c.ranks_per_gpu, 1);  // the 3 s runs at 2 per GPU do not count
  EXPECT_EQ(c.basis, "measured");
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("ignored 3 of the job's 4 earlier runs (1 of another node type, 0 at a ranks per GPU "
                            "the profile was not tuned at, 2 without"),
            std::string::npos)
      << c.notes[0];
  const LayoutChoice none = ChooseRanksPerGpu({foreign, damaged}, TestProfile(), {1, 2, 4}, 4);
  EXPECT_EQ(none.ranks_per_gpu, 4);
  EXPECT_EQ(none.basis, "profile");
  EXPECT_NE(none.why.find("no usable earlier run"), std::string::npos) << none.why;
}

}  // namespace
}  // namespace mlreport
