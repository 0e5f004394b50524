// Unit test of mps_leftover.h: the record of a private MPS folder of `run`,
// and what the next run or doctor does with the folders a killed run left,
// with a stand-in for nvidia-cuda-mps-control that logs what it was told
// and where (no NVIDIA driver here).
#include "launcher/mps_leftover.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "launcher/mps_stand_in_test_support.h"
#include "launcher/process.h"

namespace multilane {
namespace {

// A pid that named a process a moment ago and names none now.
pid_t EndedPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

TEST(MpsOwnerRecordTest, ReadsWhatItWrites) {
  MpsOwnerRecord r;
  r.run_pid = 4242;
  r.run_start = 987654321;
  EXPECT_EQ(FormatMpsOwnerRecord(r), "multilane-mps-owner 1\nrun 4242 987654321\n");
  MpsOwnerRecord back;
  ASSERT_TRUE(ParseMpsOwnerRecord(FormatMpsOwnerRecord(r), &back));
  EXPECT_EQ(back.run_pid, 4242);
  EXPECT_EQ(back.run_start, 987654321u);
  EXPECT_EQ(back.job_pid, 0);
  r.job_pid = 4243;
  r.job_start = 5;
  ASSERT_TRUE(ParseMpsOwnerRecord(FormatMpsOwnerRecord(r), &back));
  EXPECT_EQ(back.job_pid, 4243);
  EXPECT_EQ(back.job_start, 5u);
}

TEST(MpsOwnerRecordTest, RefusesAnythingElse) {
  MpsOwnerRecord r;
  for (const char* bad :
       {"", "multilane-mps-owner 1\n", "multilane-mps-owner 2\nrun 1 2\n", "multilane-mps-owner 1\nrun 1 2",
        "multilane-mps-owner 1\nrun 0 2\n", "multilane-mps-owner 1\nrun -1 2\n", "multilane-mps-owner 1\nrun 1\n",
        "multilane-mps-owner 1\nrun 1 2 3\n", "multilane-mps-owner 1\nrun 99999999999 2\n",
        "multilane-mps-owner 1\nrun 1 99999999999999999999\n", "multilane-mps-owner 1\njob 1 2\n",
        "multilane-mps-owner 1\nrun 1 2\njob 3 4\njob 5 6\n", "multilane-mps-owner 1\nrun  1 2\n"})
    EXPECT_FALSE(ParseMpsOwnerRecord(bad, &r)) << bad;
}

TEST(ProcessStatTest, TheCommandNameMayHoldParenthesesAndSpaces) {
  ProcessStat st;
  ASSERT_TRUE(ParseProcessStat("77 (a) b (c) S 1 77 77 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 0 0\n", &st));
  EXPECT_EQ(st.state, 'S');
  EXPECT_EQ(st.start, 123456u);
  ASSERT_TRUE(ParseProcessStat("78 (z) Z 1 78 78 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 9 0", &st));
  EXPECT_EQ(st.state, 'Z');
  EXPECT_FALSE(ParseProcessStat("79 (short) S 1 2 3", &st));
  EXPECT_FALSE(ParseProcessStat("no parenthesis S 1", &st));
}

TEST(ProcessStatTest, APidNamesTheProcessThatStartedThenOnly) {
  ProcessStat self;
  ASSERT_TRUE(ReadProcessStat(getpid(), &self));
  EXPECT_TRUE(ProcessRuns(getpid(), self.start));
  EXPECT_TRUE(ProcessRuns(getpid(), 0));
  EXPECT_FALSE(ProcessRuns(getpid(), self.start + 1));  // the pid reused by a later process
  EXPECT_FALSE(ProcessRuns(EndedPid(), 0));
  const pid_t zombie = fork();  // ended, not yet reaped
  if (zombie == 0) _exit(0);
  siginfo_t ended{};
  ASSERT_EQ(waitid(P_PID, zombie, &ended, WEXITED | WNOWAIT), 0);  // until it has ended, left unreaped
  EXPECT_FALSE(ProcessRuns(zombie, 0));
  waitpid(zombie, nullptr, 0);
}

class LeftoverTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("CUDA_MPS_PIPE_DIRECTORY", "/run/the-users-own", 1); }
  void TearDown() override {
    unsetenv("FAIL_QUIT");
    unsetenv("CUDA_MPS_PIPE_DIRECTORY");
  }
  // A folder as `run` makes it, with `record` in it.
  std::string Folder(const std::string& name, const MpsOwnerRecord& record) {
    const std::string f = parent_ + "/" + name;
    EXPECT_EQ(mkdir(f.c_str(), 0700), 0);
    EXPECT_EQ(mkdir((f + "/pipe").c_str(), 0700), 0);
    EXPECT_EQ(WriteMpsOwnerRecord(f, record), "");
    return f;
  }
  static MpsOwnerRecord Ended() {
    MpsOwnerRecord r;
    r.run_pid = EndedPid();
    return r;
  }
  MpsStandIn stand_in{"mps-leftover-test",
                      "read cmd; echo \"$cmd $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY\" >> @LOG@\n"
                      "exit ${FAIL_QUIT:-0}\n"};
  const std::string parent_ = stand_in.dir();
  const std::string control_ = stand_in.control();
  std::string ReadLog() const { return stand_in.LogText(); }
};

TEST_F(LeftoverTest, TheDaemonOfAKilledRunIsToldToQuitAndItsFolderGoes) {
  MpsOwnerRecord r = Ended();
  r.job_pid = EndedPid();
  const std::string f = Folder("multilane-mps.dead01", r);
  const auto lines = StopLeftoverMps(control_, false, parent_);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("stopped the daemon in " + f), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("pid " + std::to_string(r.run_pid)), std::string::npos) << lines[0];
  EXPECT_EQ(ReadLog(), "quit " + f + "/pipe " + f + "/log\n");
  EXPECT_FALSE(std::filesystem::exists(f));
  EXPECT_STREQ(std::getenv("CUDA_MPS_PIPE_DIRECTORY"), "/run/the-users-own");  // put back
  EXPECT_EQ(StopLeftoverMps(control_, false, parent_).size(), 0u);
}

TEST_F(LeftoverTest, AFolderInUseIsLeftAlone) {
  const std::string running = Folder("multilane-mps.run001", ThisRunRecord());
  MpsOwnerRecord job = Ended();  // the run was killed, its job still runs
  ProcessStat self;
  ASSERT_TRUE(ReadProcessStat(getpid(), &self));
  job.job_pid = getpid();
  job.job_start = self.start;
  const std::string serving = Folder("multilane-mps.job001", job);
  EXPECT_EQ(StopLeftoverMps(control_, true, parent_).size(), 0u);
  EXPECT_FALSE(std::filesystem::exists(stand_in.log()));
  EXPECT_TRUE(std::filesystem::exists(running));
  EXPECT_TRUE(std::filesystem::exists(serving));
}

TEST_F(LeftoverTest, APidReusedByAnotherProcessIsNotTheRun) {
  MpsOwnerRecord r = ThisRunRecord();
  ++r.run_start;
  const std::string f = Folder("multilane-mps.reused", r);
  EXPECT_EQ(StopLeftoverMps(control_, false, parent_).size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(f));
}

TEST_F(LeftoverTest, OnlyThisUsersOwnRealFoldersAreTouched) {
  // A link to a leftover, a folder others may write to, and (as root)
  // another user's folder: none is read, none is removed.
  const std::string target = Folder("elsewhere", Ended());
  ASSERT_EQ(symlink(target.c_str(), (parent_ + "/multilane-mps.link01").c_str()), 0);
  const std::string open = Folder("multilane-mps.open01", Ended());
  ASSERT_EQ(chmod(open.c_str(), 0777), 0);
  std::string theirs;
  if (getuid() == 0) {
    theirs = Folder("multilane-mps.other1", Ended());
    ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  }
  EXPECT_EQ(StopLeftoverMps(control_, true, parent_).size(), 0u);
  EXPECT_FALSE(std::filesystem::exists(stand_in.log()));
  EXPECT_TRUE(std::filesystem::exists(target + "/owner"));
  EXPECT_TRUE(std::filesystem::exists(open + "/owner"));
  if (!theirs.empty()) {
    EXPECT_TRUE(std::filesystem::exists(theirs + "/owner"));
  }
}

TEST_F(LeftoverTest, ADaemonThatDoesNotQuitStaysAndIsNamedWithTheFix) {
  const std::string f = Folder("multilane-mps.deaf01", Ended());
  std::ofstream(f + "/pipe/nvidia-cuda-mps-control.pid") << getpid() << "\n";  // a live process of this user
  setenv("FAIL_QUIT", "1", 1);
  const auto lines = StopLeftoverMps(control_, false, parent_);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("did not take `quit`"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("kill " + std::to_string(getpid())), std::string::npos) << lines[0];
  EXPECT_TRUE(std::filesystem::exists(f));
  // Its pid file naming a process that ended: nothing runs there any more.
  std::ofstream(f + "/pipe/nvidia-cuda-mps-control.pid") << EndedPid() << "\n";
  EXPECT_EQ(StopLeftoverMps(control_, false, parent_).size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(f));
}

TEST_F(LeftoverTest, AFolderWithoutARecordIsNamedByDoctorOnly) {
  const std::string f = parent_ + "/multilane-mps.norec1";
  ASSERT_EQ(mkdir(f.c_str(), 0700), 0);
  EXPECT_EQ(StopLeftoverMps(control_, false, parent_).size(), 0u);
  const auto lines = StopLeftoverMps(control_, true, parent_);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("rm -r " + f), std::string::npos) << lines[0];
  EXPECT_TRUE(std::filesystem::exists(f));
  EXPECT_FALSE(std::filesystem::exists(stand_in.log()));
}

TEST_F(LeftoverTest, ANameWithControlBytesIsEchoedEscaped) {
  const std::string f = Folder("multilane-mps.\x1b[2J", Ended());
  const auto lines = StopLeftoverMps(control_, false, parent_);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find('\x1b'), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("\\x1b[2J"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace multilane
