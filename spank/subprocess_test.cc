// subprocess_test.cc: running the profile look-up as a separate process.
#include "subprocess.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace multilane_spank {
namespace {

const uid_t kSame = static_cast<uid_t>(-1);
const gid_t kSameGroup = static_cast<gid_t>(-1);

TEST(Subprocess, CapturesOutputWithOnlyTheGivenEnvironment) {
  setenv("MULTILANE_SUBPROCESS_LEAK", "leaked", 1);
  const SubprocessResult r =
      RunCapture({"/bin/sh", "-c", "echo a=$A; echo leak=$MULTILANE_SUBPROCESS_LEAK; exit 3"}, {{"A", "1"}}, kSame,
                 kSameGroup, 10);
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.exit_status, 3);
  const auto kv = ParseKeyValueLines(r.output);
  EXPECT_EQ(kv.at("a"), "1");
  EXPECT_EQ(kv.at("leak"), "");
}

TEST(Subprocess, FeedsInput) {
  const SubprocessResult r = RunCapture({"/bin/cat"}, {}, kSame, kSameGroup, 10, "quit\n");
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "quit\n");
}

TEST(Subprocess, WorksWithStandardDescriptorsClosed) {
  const int saved_in = dup(0), saved_out = dup(1);
  close(0);
  close(1);
  const SubprocessResult r = RunCapture({"/bin/cat"}, {}, kSame, kSameGroup, 10, "quit\n");
  dup2(saved_in, 0);
  dup2(saved_out, 1);
  close(saved_in);
  close(saved_out);
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "quit\n");
}

TEST(Subprocess, TimesOutAndKillsTheGroup) {
  const SubprocessResult r = RunCapture({"/bin/sh", "-c", "sleep 30 & sleep 30"}, {}, kSame, kSameGroup, 1);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.error.find("timed out"), std::string::npos) << r.error;
}

TEST(Subprocess, MissingProgramAndCrashAreReported) {
  SubprocessResult r = RunCapture({"/nonexistent/multilane"}, {}, kSame, kSameGroup, 5);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.error.find("could not be started"), std::string::npos) << r.error;
  r = RunCapture({"/bin/sh", "-c", "kill -SEGV $$"}, {}, kSame, kSameGroup, 5);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.error.find("signal 11"), std::string::npos) << r.error;
  r = RunCapture({"relative"}, {}, kSame, kSameGroup, 5);
  EXPECT_FALSE(r.ran);
}

TEST(Subprocess, DropsToTheGivenUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to change user";
  const SubprocessResult r = RunCapture({"/usr/bin/id", "-u"}, {}, 65534, 65534, 10);
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.output, "65534\n");
}

TEST(Subprocess, KeyValueLines) {
  const auto kv = ParseKeyValueLines("found=yes\nprofile=a=b;c\nnoise\n=x\nfound=no");
  EXPECT_EQ(kv.at("found"), "no");
  EXPECT_EQ(kv.at("profile"), "a=b;c");
  EXPECT_EQ(kv.size(), 2u);
}

}  // namespace
}  // namespace multilane_spank
