#include "tuner/repeat.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tuner/tests/measurement_for_test.h"

namespace mltuner {
namespace {

constexpr double kFloor = 0.03;

// First launch: lane wins 4K (100 -> 50), 1M keeps the system MPI, hier
// wins 64M.
std::vector<Measurement> FirstMeasurements() {
  return {M(4096, "passthrough", {100, 100, 100}),        M(4096, "lane", {50, 50, 50}),
          M(1 << 20, "passthrough", {1000, 1000, 1000}),  M(1 << 20, "lane", {990, 990, 990}),
          M(64 << 20, "passthrough", {9000, 9000, 9000}), M(64 << 20, "hier", {6000, 6000, 6000})};
}

SearchResult FirstLaunch() { return Decide(FirstMeasurements()); }

TEST(Repeat, CandidatesAreTheDistinctWinners) {
  const SearchResult r = FirstLaunch();
  EXPECT_EQ(RepeatCandidates(r.decisions), (std::vector<std::string>{"lane", "hier"}));
}

TEST(Repeat, ConfirmedWinnerGetsTheMeanAndTheLaunchesDifferenceAsNoise) {
  SearchResult r = FirstLaunch();
  const RepeatSummary s =
      ApplyRepeat({M(4096, "passthrough", {120, 120, 120}), M(4096, "lane", {70, 70, 70})}, kFloor, &r);
  const Decision& d = r.decisions[0];
  EXPECT_EQ(d.winner, "lane");
  EXPECT_DOUBLE_EQ(d.time_us, 60);       // (50 + 70) / 2
  EXPECT_DOUBLE_EQ(d.mpi_time_us, 110);  // (100 + 120) / 2
  EXPECT_DOUBLE_EQ(d.noise, 0.4);        // lane 50 -> 70 (the band, sqrt(3) x 0.2, is less)
  EXPECT_NEAR(d.repeat_gain, 120.0 / 70, 1e-12);
  EXPECT_EQ(s.confirmed, 1);
  EXPECT_EQ(s.unmeasured, 2);  // 1M and 64M were not measured again
  EXPECT_DOUBLE_EQ(s.widest, 0.4);
  EXPECT_NEAR(s.band, std::sqrt(3.0) * 0.2, 1e-12);
  // The bins carry the new figures to the profile's points.
  ASSERT_FALSE(r.bins.empty());
  EXPECT_DOUBLE_EQ(r.bins[0].points[0].time_us, 60);
  EXPECT_DOUBLE_EQ(r.bins[0].points[0].noise, 0.4);
}

TEST(Repeat, WinnerNotFasterInTheRepeatIsUndone) {
  SearchResult r = FirstLaunch();
  const RepeatSummary s = ApplyRepeat(
      {M(64 << 20, "passthrough", {8000, 8000, 8000}), M(64 << 20, "hier", {8100, 8100, 8100})}, kFloor, &r);
  const Decision& d = r.decisions[2];
  EXPECT_EQ(d.winner, "passthrough");
  EXPECT_EQ(d.undone, "hier");
  EXPECT_DOUBLE_EQ(d.time_us, 8500);
  EXPECT_DOUBLE_EQ(d.mpi_time_us, 8500);
  EXPECT_DOUBLE_EQ(d.gain, 1);
  EXPECT_EQ(s.undone, 1);
  EXPECT_EQ(r.bins.back().winner, "passthrough");  // 1M and 64M merge into one bin
  EXPECT_EQ(r.bins.back().to, UINT64_MAX);
  EXPECT_NE(DescribeRepeat(s, r).find("host 64M hier"), std::string::npos) << DescribeRepeat(s, r);
}

TEST(Repeat, KeptSystemMpiGetsItsOwnDifference) {
  SearchResult r = FirstLaunch();
  const RepeatSummary s = ApplyRepeat({M(1 << 20, "passthrough", {1100, 1100, 1100})}, kFloor, &r);
  EXPECT_EQ(r.decisions[1].winner, "passthrough");
  EXPECT_DOUBLE_EQ(r.decisions[1].mpi_time_us, 1050);
  // One size's difference (0.1) is a weak estimate: the band, sqrt(3) x 0.1.
  EXPECT_NEAR(r.decisions[1].noise, std::sqrt(3.0) * 0.1, 1e-12);
  EXPECT_EQ(s.kept, 1);
}

TEST(Repeat, InvalidOrMissingRepeatLeavesTheDecision) {
  SearchResult r = FirstLaunch();
  const Decision before = r.decisions[0];
  const RepeatSummary s =
      ApplyRepeat({M(4096, "passthrough", {200, 200, 200}), M(4096, "lane", {10}, false)}, kFloor, &r);
  EXPECT_EQ(r.decisions[0].winner, "lane");
  EXPECT_DOUBLE_EQ(r.decisions[0].time_us, before.time_us);
  EXPECT_DOUBLE_EQ(r.decisions[0].noise, before.noise);
  EXPECT_DOUBLE_EQ(r.decisions[0].repeat_gain, 0);
  EXPECT_EQ(s.unmeasured, 3);
}

TEST(Repeat, RatioDifferenceCountsWhenBothShiftAlike) {
  SearchResult r = FirstLaunch();
  // Both slower by 10 %: the ratio holds, the noise is the shift's band.
  ApplyRepeat({M(4096, "passthrough", {110, 110, 110}), M(4096, "lane", {55, 55, 55})}, kFloor, &r);
  EXPECT_NEAR(r.decisions[0].noise, std::sqrt(3.0) * 0.1, 1e-12);
  // The system MPI as before, lane 20 % slower: the ratio moved by 20 %.
  r = FirstLaunch();
  ApplyRepeat({M(4096, "passthrough", {100, 100, 100}), M(4096, "lane", {60, 60, 60})}, kFloor, &r);
  EXPECT_NEAR(r.decisions[0].noise, 0.2, 1e-12);
}

TEST(Repeat, AWinnerMustBeatTheSystemMpiByTheFloorAgain) {
  SearchResult r = FirstLaunch();
  // 2 % faster in the repeat: within the floor, undone.
  RepeatSummary s = ApplyRepeat({M(4096, "passthrough", {100, 100, 100}), M(4096, "lane", {98, 98, 98})}, kFloor, &r);
  EXPECT_EQ(r.decisions[0].winner, "passthrough");
  EXPECT_EQ(s.undone, 1);
  // 5 % faster: confirmed.
  r = FirstLaunch();
  s = ApplyRepeat({M(4096, "passthrough", {100, 100, 100}), M(4096, "lane", {95, 95, 95})}, kFloor, &r);
  EXPECT_EQ(r.decisions[0].winner, "lane");
  EXPECT_EQ(s.confirmed, 1);
}

TEST(Repeat, TheBandPoolsTheSystemMpisDifferencesOverSizes) {
  SearchResult r = FirstLaunch();
  // The system MPI: 4K 10 % apart, 1M 0 %, 64M 0 %: rms = 0.1 / sqrt(3), band 0.1.
  const RepeatSummary s =
      ApplyRepeat({M(4096, "passthrough", {110, 110, 110}), M(4096, "lane", {55, 55, 55}),
                   M(1 << 20, "passthrough", {1000, 1000, 1000}), M(64 << 20, "passthrough", {9000, 9000, 9000}),
                   M(64 << 20, "hier", {6000, 6000, 6000})},
                  kFloor, &r);
  EXPECT_NEAR(s.band, 0.1, 1e-12);
  EXPECT_NEAR(r.decisions[1].noise, 0.1, 1e-12);  // 1M agreed exactly, and gets the band
  EXPECT_NEAR(r.decisions[2].noise, 0.1, 1e-12);
  EXPECT_NEAR(r.decisions[0].noise, 0.1, 1e-12);
}

TEST(Repeat, SizesTheRepeatLeftOutGetTheBandToo) {
  SearchResult r = FirstLaunch();
  ApplyRepeat({M(4096, "passthrough", {110, 110, 110}), M(4096, "lane", {55, 55, 55})}, kFloor, &r);
  EXPECT_NEAR(r.decisions[2].noise, std::sqrt(3.0) * 0.1, 1e-12);  // 64M was not measured again
  EXPECT_EQ(r.decisions[2].winner, "hier");                        // and keeps its decision
}

// The first launch's medians price the repeat: per size a reference call
// and, for the system MPI and the winner, 1 + reps x (warmup + iterations).
TEST(Repeat, ScopeLeavesOutTheDearestSizesUntilTheRestFit) {
  const SearchResult r = FirstLaunch();
  const std::vector<Measurement> first = FirstMeasurements();
  Plan plan;  // reps 3, warmup 1; iterations 50 at 4K, 16 at 1M, 2 at 64M
  const double s4k = (1 + 1 + 3 * 51) * 100e-6 + (1 + 3 * 51) * 50e-6;
  const double s1m = (1 + 1 + 3 * 17) * 1000e-6;  // kept the system MPI: only it
  const double s64m = (1 + 1 + 3 * 3) * 9000e-6 + (1 + 3 * 3) * 6000e-6;
  RepeatScope all = ScopeRepeat(r.decisions, first, plan, 100);
  ASSERT_EQ(all.sizes.size(), 3u);
  EXPECT_TRUE(all.left_out.empty());
  EXPECT_NEAR(all.sizes[0].predicted_s, s4k, 1e-9);
  EXPECT_NEAR(all.sizes[1].predicted_s, s1m, 1e-9);
  EXPECT_NEAR(all.sizes[2].predicted_s, s64m, 1e-9);
  EXPECT_NEAR(all.predicted_s, s4k + s1m + s64m, 1e-9);
  ASSERT_EQ(all.sizes[1].winners.size(), 1u);
  EXPECT_EQ(all.sizes[1].winners[0].second, "passthrough");
  EXPECT_EQ(all.sizes[2].winners[0].second, "hier");
  EXPECT_EQ(DescribeLeftOut(all), "");

  const RepeatScope tight = ScopeRepeat(r.decisions, first, plan, s4k + s1m + 1e-6);
  ASSERT_EQ(tight.sizes.size(), 2u);
  EXPECT_EQ(tight.sizes[1].bytes, 1u << 20);
  ASSERT_EQ(tight.left_out.size(), 1u);
  EXPECT_EQ(tight.left_out[0].bytes, 64u << 20);
  EXPECT_NE(DescribeLeftOut(tight).find("64M"), std::string::npos) << DescribeLeftOut(tight);

  EXPECT_TRUE(ScopeRepeat(r.decisions, first, plan, s4k / 2).sizes.empty());
  EXPECT_EQ(ScopeRepeat(r.decisions, first, plan, s4k / 2).left_out.size(), 3u);
}

TEST(Repeat, LaunchPlanMeasuresEachSizesWinnerBesideTheSystemMpi) {
  const SearchResult r = FirstLaunch();
  const std::vector<Measurement> first = FirstMeasurements();
  Plan plan;
  plan.sizes = {4096, 1 << 20, 64 << 20};
  plan.comment = "first";
  Plan repeat;
  RepeatScope scope;
  ASSERT_TRUE(PlanRepeatLaunch(plan, r, first, 100, &repeat, &scope));
  EXPECT_EQ(repeat.sizes, plan.sizes);
  EXPECT_TRUE(scope.left_out.empty());
  EXPECT_DOUBLE_EQ(repeat.budget_s, 100);
  EXPECT_EQ(repeat.max_rounds, 2);
  EXPECT_EQ(repeat.comment, "first");
  ASSERT_TRUE(repeat.has_candidates);
  ASSERT_EQ(repeat.candidates.size(), 2u);
  EXPECT_EQ(repeat.candidates[0].Render(), "lane");
  EXPECT_EQ(repeat.candidates[1].Render(), "hier");
  ASSERT_EQ(repeat.size_candidates.size(), 3u);
  EXPECT_EQ(repeat.size_candidates.at({MemKind::kHost, 4096}).size(), 1u);
  EXPECT_TRUE(repeat.size_candidates.at({MemKind::kHost, 1 << 20}).empty());  // the system MPI alone
  EXPECT_TRUE(repeat.MeasuresAt(MemKind::kHost, 64 << 20, repeat.candidates[1]));
  EXPECT_FALSE(repeat.MeasuresAt(MemKind::kHost, 64 << 20, repeat.candidates[0]));
  // What the probe reads from the file is the same plan.
  Plan read;
  std::string error;
  ASSERT_TRUE(ParsePlan(PlanToJson(repeat), &read, &error)) << error;
  EXPECT_EQ(read.sizes, repeat.sizes);
  EXPECT_EQ(read.size_candidates, repeat.size_candidates);
  EXPECT_EQ(read.max_rounds, 2);

  // A budget no size fits: no repeat.
  EXPECT_FALSE(PlanRepeatLaunch(plan, r, first, 1e-6, &repeat, &scope));
  EXPECT_EQ(scope.left_out.size(), 3u);
}

}  // namespace
}  // namespace mltuner
