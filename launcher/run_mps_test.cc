// Unit test of run_mps.h: when a job of `multilane run` gets a private MPS
// daemon, and what it is told when it does not.
#include "run_mps.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace multilane {
namespace {

RunMpsFacts Measured(int ranks_per_gpu) {
  RunMpsFacts f;
  f.profile_mps = "on";
  f.ranks_per_gpu = ranks_per_gpu;
  f.program = "/usr/bin/nvidia-cuda-mps-control";
  return f;
}

TEST(RunMpsTest, ParsesTheThreeModesAndNothingElse) {
  RunMpsMode m = RunMpsMode::kNo;
  EXPECT_TRUE(ParseRunMpsMode("auto", &m));
  EXPECT_EQ(m, RunMpsMode::kAuto);
  EXPECT_TRUE(ParseRunMpsMode("yes", &m));
  EXPECT_EQ(m, RunMpsMode::kYes);
  EXPECT_TRUE(ParseRunMpsMode("no", &m));
  EXPECT_EQ(m, RunMpsMode::kNo);
  for (const char* bad : {"", "on", "Auto", "yes ", "1"}) EXPECT_FALSE(ParseRunMpsMode(bad, &m)) << bad;
}

TEST(RunMpsTest, AutoStartsOneForAProfileMeasuredUnderMpsWithSeveralRanksPerGpu) {
  const RunMpsPlan p = PlanRunMps(Measured(8));
  EXPECT_TRUE(p.start);
  EXPECT_EQ(p.note, "");
}

TEST(RunMpsTest, AutoLeavesJobsTheProfileDoesNotExpectUnderMpsAlone) {
  EXPECT_FALSE(PlanRunMps(Measured(1)).start);  // one rank per GPU
  for (const char* measured : {"off", "none", ""}) {
    RunMpsFacts f = Measured(4);
    f.profile_mps = measured;
    const RunMpsPlan p = PlanRunMps(f);
    EXPECT_FALSE(p.start) << measured;
    EXPECT_EQ(p.note, "") << measured;
  }
}

TEST(RunMpsTest, ARunningDaemonServesTheJobInstead) {
  RunMpsFacts f = Measured(4);
  f.daemon = "/tmp/nvidia-mps";
  const RunMpsPlan p = PlanRunMps(f);
  EXPECT_FALSE(p.start);
  EXPECT_NE(p.note.find("already running (/tmp/nvidia-mps)"), std::string::npos) << p.note;
}

TEST(RunMpsTest, WithoutTheControlProgramTheNoteSaysWhatToInstall) {
  RunMpsFacts f = Measured(4);
  f.program = "";
  const RunMpsPlan p = PlanRunMps(f);
  EXPECT_FALSE(p.start);
  EXPECT_NE(p.note.find("measured under MPS"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("nvidia-cuda-mps-control is not found"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("--ranks-per-gpu 1"), std::string::npos) << p.note;
}

TEST(RunMpsTest, RanksOnOtherNodesAreLeftToTheSlurmPlugin) {
  RunMpsFacts f = Measured(4);
  f.ranks_here = false;
  const RunMpsPlan p = PlanRunMps(f);
  EXPECT_FALSE(p.start);
  EXPECT_NE(p.note.find("srun --multilane"), std::string::npos) << p.note;
}

TEST(RunMpsTest, NoNeverStartsOneAndSaysWhatTheJobLoses) {
  RunMpsFacts f = Measured(4);
  f.mode = RunMpsMode::kNo;
  RunMpsPlan p = PlanRunMps(f);
  EXPECT_FALSE(p.start);
  EXPECT_NE(p.note.find("drop --mps no"), std::string::npos) << p.note;
  f.ranks_per_gpu = 1;
  p = PlanRunMps(f);
  EXPECT_FALSE(p.start);
  EXPECT_EQ(p.note, "");
}

TEST(RunMpsTest, YesStartsOneWhateverTheProfileSays) {
  RunMpsFacts f = Measured(1);
  f.profile_mps = "none";
  f.mode = RunMpsMode::kYes;
  EXPECT_TRUE(PlanRunMps(f).start);
  f.program = "";
  const RunMpsPlan p = PlanRunMps(f);
  EXPECT_FALSE(p.start);
  EXPECT_NE(p.note.find("--mps yes"), std::string::npos) << p.note;
}

TEST(RunMpsTest, TheJobsOwnPipeVariableNamesTheDaemonItReaches) {
  setenv("CUDA_MPS_PIPE_DIRECTORY", "/run/site-mps", 1);
  EXPECT_EQ(ReachableMpsPipe(), "/run/site-mps");
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
}

}  // namespace
}  // namespace multilane
