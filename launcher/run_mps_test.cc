// Unit test of run_mps.h: when a job of `multilane run` gets a private MPS
// daemon, and what it is told when it does not.
#include "run_mps.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

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

// A site daemon's folder as nvidia-cuda-mps-control leaves it: a `control`
// socket, and its pid file while it runs.
class SiteFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    char tmpl[] = "/tmp/run-mps-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = dir_ + "/control";
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd_, 0);
    ASSERT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  void TearDown() override {
    close(fd_);
    std::filesystem::remove_all(dir_);
  }
  void WritePid(long pid) { std::ofstream(dir_ + "/nvidia-cuda-mps-control.pid") << pid << "\n"; }
  std::string dir_;
  int fd_ = -1;
};

TEST_F(SiteFolderTest, ARunningDaemonIsFound) {
  WritePid(getpid());
  EXPECT_EQ(ReachableMpsPipe(dir_), dir_);
}

TEST_F(SiteFolderTest, TheSocketsOfADaemonThatQuitAreNotADaemon) {
  EXPECT_EQ(ReachableMpsPipe(dir_), "");  // quit: the pid file is gone
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  WritePid(child);  // killed: the file names a process that is gone
  EXPECT_EQ(ReachableMpsPipe(dir_), "");
}

TEST_F(SiteFolderTest, APlantedFifoIsNeverWaitedOn) {
  ASSERT_EQ(mkfifo((dir_ + "/nvidia-cuda-mps-control.pid").c_str(), 0600), 0);
  EXPECT_EQ(ReachableMpsPipe(dir_), "");
}

TEST_F(SiteFolderTest, TheVariableWinsOverTheSiteFolder) {
  WritePid(getpid());
  setenv("CUDA_MPS_PIPE_DIRECTORY", "/run/mine", 1);
  EXPECT_EQ(ReachableMpsPipe(dir_), "/run/mine");
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
}

}  // namespace
}  // namespace multilane
