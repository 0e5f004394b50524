// tune_budget_test.cc: planning a tune's time and explaining an overrun.
#include "launcher/tune/tune_budget.h"

#include <gtest/gtest.h>

namespace multilane {
namespace {

TEST(TuneBudget, TheProbeGetsWhatTheOverheadsLeave) {
  const BudgetPlan p = PlanBudget(60, 1.5, 1.0);
  EXPECT_DOUBLE_EQ(p.reserve_s, 2.5);
  EXPECT_DOUBLE_EQ(p.probe_s, 57.5);
  EXPECT_EQ(p.warning, "");
}

TEST(TuneBudget, ATooSmallBudgetIsSaidAndTheProbeKeepsAThird) {
  const BudgetPlan p = PlanBudget(3, 1.0, 1.5);
  EXPECT_DOUBLE_EQ(p.probe_s, 1.0);
  EXPECT_NE(p.warning.find("--budget 3.0 s is small"), std::string::npos) << p.warning;
  EXPECT_NE(p.warning.find("about 3.5 s"), std::string::npos) << p.warning;
}

TEST(TuneBudget, SrunCostsMoreThanMpirun) {
  EXPECT_GT(ExpectedLaunchSeconds(4, true), ExpectedLaunchSeconds(4, false));
  EXPECT_GT(ExpectedLaunchSeconds(64, false), ExpectedLaunchSeconds(4, false));
}

TEST(TuneBudget, WithinTheSlackIsNotAnOverrun) {
  TuneTimes t;
  t.budget_s = 10;
  t.total_s = 10.4;
  EXPECT_EQ(ExplainOverrun(t), "");
}

TEST(TuneBudget, AnOverrunNamesItsLargestCause) {
  TuneTimes t;
  t.budget_s = 10;
  t.probe_budget_s = 8.5;
  t.before_s = 0.5;
  t.probe_s = 13.5;
  t.measuring_s = 12.5;  // 4 s over the measurements' share
  t.after_s = 0.1;
  t.total_s = 14.1;
  const std::string why = ExplainOverrun(t);
  EXPECT_NE(why.find("4.1 s (41%) over its --budget of 10.0 s"), std::string::npos) << why;
  EXPECT_NE(why.find("the measurements took 12.5 s of their 8.5 s"), std::string::npos) << why;

  t.measuring_s = 8.5;  // now the MPI job's start took the time
  t.probe_s = 13.5;
  const std::string launch = ExplainOverrun(t);
  EXPECT_NE(launch.find("starting and ending the MPI job (5.0 s)"), std::string::npos) << launch;
}

TEST(RepeatMeasuringSeconds, KeepsThePlanWhenTheFirstLaunchKeptToItsShare) {
  std::string why;
  // A 60 s share: the first launch planned 45 s and took them; 1 s to start.
  EXPECT_DOUBLE_EQ(RepeatMeasuringSeconds(14, 60, 45, 1, &why), 14);
  EXPECT_EQ(why, "");
}

TEST(RepeatMeasuringSeconds, ASlowMpiStartShortensTheRepeatInsteadOfOverrunning) {
  std::string why;
  // The build machine: 44 s of measurements and 3 s to start and end mpirun.
  EXPECT_DOUBLE_EQ(RepeatMeasuringSeconds(14, 60, 47, 3, &why), 10);
  EXPECT_EQ(why, "");
  EXPECT_DOUBLE_EQ(RepeatMeasuringSeconds(14, 60, 56, 3, &why), 0);
  EXPECT_NE(why.find("the first launch took 56.0 s of this launch's 60.0 s"), std::string::npos) << why;
  EXPECT_NE(why.find("a larger --budget"), std::string::npos) << why;
}

TEST(PlanRepeat, SplitsAShareThatLeavesTimeForASecondLaunch) {
  const RepeatPlan p = PlanRepeat(40, 1);
  EXPECT_DOUBLE_EQ(p.repeat_s, 10);
  EXPECT_DOUBLE_EQ(p.first_s, 30);
  EXPECT_TRUE(p.why_not.empty());
  // (3 s of measurements + 1 s to start and end) / 0.25 = 16 s at least.
  EXPECT_GT(PlanRepeat(16, 1).repeat_s, 0);
  const RepeatPlan small = PlanRepeat(15.9, 1);
  EXPECT_DOUBLE_EQ(small.repeat_s, 0);
  EXPECT_DOUBLE_EQ(small.first_s, 15.9);
  EXPECT_NE(small.why_not.find("(15.9 s) is below 16.0 s"), std::string::npos) << small.why_not;
}

}  // namespace
}  // namespace multilane
