// subprocess_test.cc: running the profile look-up as a separate process.
#include "spank/subprocess.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace multilane_spank {
namespace {

const uid_t kSame = static_cast<uid_t>(-1);
const gid_t kSameGroup = static_cast<gid_t>(-1);

TEST(Subprocess, CapturesOutputWithOnlyTheGivenEnvironment) {
  setenv("MULTILANE_SUBPROCESS_LEAK", "leaked", 1);
  const SubprocessResult r = RunCapture({"/bin/sh", "-c", "echo a=$A; echo leak=$MULTILANE_SUBPROCESS_LEAK; exit 3"},
                                        {{"A", "1"}}, kSame, kSameGroup, 10);
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

TEST(Subprocess, ALoaderFailureIsReportedInItsOwnWords) {
  // Exit status 127 after exec: what the dynamic loader does when a library
  // is missing.  The real loader's message, from a real program whose
  // interpreter cannot find a library: a copy of /bin/true with a DT_NEEDED
  // is not at hand, so use the loader on a missing file, which also exits
  // 127 and says why on stderr.
  SubprocessResult r = RunCapture({"/lib64/ld-linux-x86-64.so.2", "/nonexistent/multilane"}, {}, kSame, kSameGroup, 5);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.error.find("exit status 127"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("/nonexistent/multilane"), std::string::npos) << r.error;
  r = RunCapture({"/bin/sh", "-c", "echo 'error while loading shared libraries: libx.so.0' >&2; exit 127"}, {}, kSame,
                 kSameGroup, 5);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.error.find("error while loading shared libraries: libx.so.0"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find("missing"), std::string::npos) << r.error;
  r = RunCapture({"/nonexistent/multilane"}, {}, kSame, kSameGroup, 5);
  EXPECT_NE(r.error.find("No such file or directory"), std::string::npos) << r.error;
}

TEST(Subprocess, AFailingProgramsFirstErrorLineIsKept) {
  const SubprocessResult r =
      RunCapture({"/bin/sh", "-c", "echo; echo 'database is locked' >&2; exit 4"}, {}, kSame, kSameGroup, 5);
  ASSERT_TRUE(r.ran) << r.error;
  EXPECT_EQ(r.exit_status, 4);
  EXPECT_EQ(r.error_line, "database is locked");
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
