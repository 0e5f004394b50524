// Unit test of run_mps.h: when a job of `multilane run` gets a private MPS
// daemon, and what it is told when it does not.
#include "launcher/run_mps.h"

#include <gtest/gtest.h>
#include <signal.h>
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

// The note of the plan for Measured(4) facts after `change`, a plan that
// starts no daemon (checked).
template <typename Change>
std::string NoteOfNoStart(Change change) {
  RunMpsFacts f = Measured(4);
  change(f);
  const RunMpsPlan p = PlanRunMps(f);
  EXPECT_FALSE(p.start);
  return p.note;
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
  const std::string note = NoteOfNoStart([](RunMpsFacts& f) { f.daemon = "/tmp/nvidia-mps"; });
  EXPECT_NE(note.find("already running (/tmp/nvidia-mps)"), std::string::npos) << note;
}

TEST(RunMpsTest, WithoutTheControlProgramTheNoteSaysWhatToInstall) {
  const std::string note = NoteOfNoStart([](RunMpsFacts& f) { f.program = ""; });
  for (const char* part : {"measured under MPS", "nvidia-cuda-mps-control is not found", "--ranks-per-gpu 1"})
    EXPECT_NE(note.find(part), std::string::npos) << note;
}

TEST(RunMpsTest, RanksOnOtherNodesAreLeftToTheSlurmPlugin) {
  const std::string note = NoteOfNoStart([](RunMpsFacts& f) { f.ranks_here = false; });
  EXPECT_NE(note.find("srun --multilane"), std::string::npos) << note;
}

TEST(RunMpsTest, NoNeverStartsOneAndSaysWhatTheJobLoses) {
  const std::string note = NoteOfNoStart([](RunMpsFacts& f) { f.mode = RunMpsMode::kNo; });
  EXPECT_NE(note.find("drop --mps no"), std::string::npos) << note;
  EXPECT_EQ(NoteOfNoStart([](RunMpsFacts& f) {
              f.mode = RunMpsMode::kNo;
              f.ranks_per_gpu = 1;
            }),
            "");
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

TEST(RunMpsTest, TheDaemonsFolderIsEchoedWithoutItsControlBytes) {
  const std::string note = NoteOfNoStart([](RunMpsFacts& f) { f.daemon = "/run/\x1b]0;owned\x07mps"; });
  EXPECT_EQ(note.find('\x1b'), std::string::npos) << note;
  EXPECT_NE(note.find("/run/\\x1b]0;owned\\x07mps"), std::string::npos) << note;
}

TEST(RunMpsTest, TerminalSignalsReachTheJobByThemselvesOthersArePassedOn) {
  for (const int sig : {SIGINT, SIGQUIT, SIGHUP, SIGPIPE}) EXPECT_FALSE(PassesSignalOn(sig)) << sig;
  for (const int sig : {SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU}) EXPECT_TRUE(PassesSignalOn(sig)) << sig;
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

// Another user's folder, socket or pid file there, or a pid file naming
// another user's process, is never taken for a daemon of the site (which
// is root's) or of this user: the job gets its own where it needs one.
TEST_F(SiteFolderTest, AnotherUsersDaemonIsNotTheJobs) {
  if (getuid() != 0) GTEST_SKIP() << "needs root to give the files to another user";
  const std::string pid_file = dir_ + "/nvidia-cuda-mps-control.pid";
  WritePid(getpid());
  std::string refused;
  ASSERT_EQ(ReachableMpsPipe(dir_, &refused), dir_);  // root's: a daemon of the site
  EXPECT_EQ(refused, "");
  for (const std::string& path : {dir_, dir_ + "/control", pid_file}) {
    ASSERT_EQ(lchown(path.c_str(), 65534, 65534), 0);
    EXPECT_EQ(ReachableMpsPipe(dir_, &refused), "") << path;
    EXPECT_NE(refused.find("uid 65534's, not yours or root's"), std::string::npos) << refused;
    ASSERT_EQ(lchown(path.c_str(), 0, 0), 0);
  }
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);  // anyone could have planted what is in it
  EXPECT_EQ(ReachableMpsPipe(dir_, &refused), "");
  EXPECT_NE(refused.find("others may write"), std::string::npos) << refused;
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t theirs = fork();  // a live process of uid 65534
  if (theirs == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(1);
    close(ready[0]);
    close(ready[1]);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char byte;
  EXPECT_EQ(read(ready[0], &byte, 1), 0);  // the child closed its end: it is uid 65534 now
  close(ready[0]);
  WritePid(theirs);
  EXPECT_EQ(ReachableMpsPipe(dir_, &refused), "");
  EXPECT_NE(refused.find("(" + std::to_string(theirs) + ") is uid 65534's"), std::string::npos) << refused;
  kill(theirs, SIGKILL);
  waitpid(theirs, nullptr, 0);
}

TEST_F(SiteFolderTest, AFolderNameWithControlBytesIsEchoedEscaped) {
  if (getuid() != 0) GTEST_SKIP() << "needs root to give the folder to another user";
  const std::string odd = dir_ + "/\x1b[31mmps";
  ASSERT_EQ(mkdir(odd.c_str(), 0755), 0);
  std::filesystem::rename(dir_ + "/control", odd + "/control");
  ASSERT_EQ(lchown(odd.c_str(), 65534, 65534), 0);
  std::string refused;
  EXPECT_EQ(ReachableMpsPipe(odd, &refused), "");
  EXPECT_EQ(refused.find('\x1b'), std::string::npos) << refused;
  EXPECT_NE(refused.find("\\x1b[31mmps"), std::string::npos) << refused;
}

TEST_F(SiteFolderTest, TheVariableWinsOverTheSiteFolder) {
  WritePid(getpid());
  setenv("CUDA_MPS_PIPE_DIRECTORY", "/run/mine", 1);
  EXPECT_EQ(ReachableMpsPipe(dir_), "/run/mine");
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
}

}  // namespace
}  // namespace multilane
