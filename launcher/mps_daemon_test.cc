// Unit test of mps_daemon.h with a stand-in for nvidia-cuda-mps-control (a
// script that logs what it was asked), as the Slurm tests do: no NVIDIA
// driver here.
#include "launcher/mps_daemon.h"

#include "launcher/mps_stand_in_test_support.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace multilane {
namespace {

// -d: "start" (records the pipe directory it was given); stdin commands
// are logged; get_server_list fails until started when FAIL_UP is set.
const char kStandIn[] =
    "if [ \"$1\" = -d ] && [ -n \"$FAIL_START\" ]; then printf '\\033[2J\\033]0;owned\\007boom\\n'; exit 1; fi\n"
    "if [ \"$1\" = -d ]; then echo \"start $CUDA_MPS_PIPE_DIRECTORY\" >> @LOG@; exit 0; fi\n"
    "read cmd; echo \"$cmd\" >> @LOG@\n"
    "if [ \"$cmd\" = get_server_list ] && [ -n \"$FAIL_UP\" ]; then exit 1; fi\n"
    "exit 0\n";

class MpsDaemonTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("FAIL_UP");
    unsetenv("FAIL_START");
  }
  MpsStandIn stand_in{"mps-test", kStandIn};
  const std::string dir_ = stand_in.dir();
  const std::string stand_in_ = stand_in.control();
  std::string ReadLog() const { return stand_in.LogText(); }
};

TEST_F(MpsDaemonTest, StartsWithPrivateFoldersAndQuitsOnDestruction) {
  {
    MpsDaemon d;
    std::string error;
    ASSERT_TRUE(d.Start(stand_in_, dir_ + "/mps", &error)) << error;
    EXPECT_TRUE(d.running());
    ASSERT_NE(std::getenv("CUDA_MPS_PIPE_DIRECTORY"), nullptr);
    EXPECT_EQ(std::string(std::getenv("CUDA_MPS_PIPE_DIRECTORY")), dir_ + "/mps/pipe");
    struct stat st;
    ASSERT_EQ(stat((dir_ + "/mps/pipe").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  EXPECT_EQ(ReadLog(), "start " + dir_ + "/mps/pipe\nget_server_list\nquit\n");
  EXPECT_EQ(std::getenv("CUDA_MPS_PIPE_DIRECTORY"), nullptr);
  EXPECT_EQ(std::getenv("CUDA_MPS_LOG_DIRECTORY"), nullptr);
}

TEST_F(MpsDaemonTest, ADaemonThatNeverAnswersIsStoppedAndNamed) {
  setenv("FAIL_UP", "1", 1);
  MpsDaemon d;
  std::string error;
  EXPECT_FALSE(d.Start(stand_in_, dir_ + "/mps", &error));
  EXPECT_FALSE(d.running());
  EXPECT_NE(error.find("did not answer"), std::string::npos) << error;
  EXPECT_NE(error.find(dir_ + "/mps/log"), std::string::npos) << error;
  const std::string log = ReadLog();
  EXPECT_EQ(log.substr(log.size() - 5), "quit\n") << log;  // nothing left running
  EXPECT_EQ(std::getenv("CUDA_MPS_PIPE_DIRECTORY"), nullptr);
}

TEST_F(MpsDaemonTest, WhatTheProgramPrintsIsEchoedWithoutItsControlBytes) {
  setenv("FAIL_START", "1", 1);
  MpsDaemon d;
  std::string error;
  EXPECT_FALSE(d.Start(stand_in_, dir_ + "/mps", &error));
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
  EXPECT_EQ(error.find('\x07'), std::string::npos) << error;
  EXPECT_NE(error.find("\\x1b[2J\\x1b]0;owned\\x07boom"), std::string::npos) << error;
  EXPECT_EQ(std::getenv("CUDA_MPS_PIPE_DIRECTORY"), nullptr);
}

TEST_F(MpsDaemonTest, ControlProgramFromTheVariableOrPath) {
  setenv("MULTILANE_MPS_CONTROL", stand_in_.c_str(), 1);
  EXPECT_EQ(MpsControlProgram(), stand_in_);
  unsetenv("MULTILANE_MPS_CONTROL");
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  std::filesystem::rename(stand_in_, dir_ + "/nvidia-cuda-mps-control");
  setenv("PATH", ("/nonexistent:" + dir_).c_str(), 1);
  EXPECT_EQ(MpsControlProgram(), dir_ + "/nvidia-cuda-mps-control");
  setenv("PATH", "/nonexistent", 1);
  EXPECT_EQ(MpsControlProgram(), "");
  setenv("PATH", saved.c_str(), 1);
}

}  // namespace
}  // namespace multilane
