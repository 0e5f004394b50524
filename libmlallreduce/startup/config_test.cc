#include "libmlallreduce/startup/config.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "libmlallreduce/base/log.h"
#include "libmlallreduce/startup/profile_file.h"
#include "vocab/terminal_text.h"

namespace mla::lib {
namespace {

Config Load(const std::map<std::string, std::string>& vars) {
  return LoadConfig([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(Config, EmptyEnvironmentIsOnWithoutProfile) {
  Config c = Load({});
  EXPECT_TRUE(c.enabled);
  EXPECT_FALSE(c.has_forced);
  EXPECT_TRUE(c.profile.empty());
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.ranks_per_node, 0);
}

TEST(Config, ReadsEveryVariable) {
  Config c = Load({{"MULTILANE_ALGO", "lane"},
                   {"MULTILANE_LANES", "3"},
                   {"MULTILANE_CHUNK", "2M"},
                   {"MULTILANE_RANKS_PER_NODE", "4"},
                   {"MULTILANE_RANKS_PER_GPU", "2"},
                   {"MULTILANE_STATS", "1"},
                   {"MULTILANE_VERBOSE", "1"},
                   {"MULTILANE_STEP_TASKS", "6"},
                   {"MULTILANE_TRANSPORT", "nccl"}});
  ASSERT_TRUE(c.enabled) << (c.problems.empty() ? "" : c.problems[0]);
  EXPECT_TRUE(c.has_forced);
  EXPECT_EQ(c.forced.algo, MLA_ALGO_LANE);
  EXPECT_EQ(c.forced.lanes, 3);
  EXPECT_EQ(c.forced.chunk_bytes, 2u << 20);
  EXPECT_EQ(c.ranks_per_node, 4);
  EXPECT_EQ(c.ranks_per_gpu, 2);
  EXPECT_TRUE(c.stats);
  EXPECT_EQ(c.verbose, 1);
  EXPECT_EQ(c.forced.transport, MLA_TRANSPORT_NCCL);
  EXPECT_EQ(c.step_tasks, 6);
}

TEST(Config, BadStepTasksIsAWarningThatKeepsItOn) {
  Config c = Load({{"MULTILANE_STEP_TASKS", "many"}});
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.step_tasks, 0);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("MULTILANE_STEP_TASKS"), std::string::npos) << c.warnings[0];
}

TEST(Config, AutoMeansTheProfile) {
  Config c = Load({{"MULTILANE_ALGO", "auto"}, {"MULTILANE_PROFILE", "multilane-profile 1; host 0 inf hier"}});
  EXPECT_TRUE(c.enabled);
  EXPECT_FALSE(c.has_forced);
  ASSERT_EQ(c.profile.entries().size(), 1u);
  EXPECT_EQ(c.profile_source, "MULTILANE_PROFILE");
}

struct BadVariable {
  const char* name;
  const char* value;
};

class ConfigErrors : public testing::TestWithParam<BadVariable> {};

TEST_P(ConfigErrors, TurnsOffAndNamesTheVariable) {
  Config c = Load({{GetParam().name, GetParam().value}});
  EXPECT_FALSE(c.enabled);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find(GetParam().name), std::string::npos) << c.problems[0];
  EXPECT_NE(c.problems[0].find("system MPI"), std::string::npos) << c.problems[0];
}

INSTANTIATE_TEST_SUITE_P(
    All, ConfigErrors,
    testing::Values(BadVariable{"MULTILANE_ALGO", "ring"}, BadVariable{"MULTILANE_LANES", "0"},
                    BadVariable{"MULTILANE_LANES", "two"}, BadVariable{"MULTILANE_CHUNK", "1.5M"},
                    BadVariable{"MULTILANE_RANKS_PER_NODE", "-2"}, BadVariable{"MULTILANE_RANKS_PER_GPU", "x"},
                    BadVariable{"MULTILANE_STATS", "maybe"}, BadVariable{"MULTILANE_VERBOSE", "loud"},
                    BadVariable{"MULTILANE_TRANSPORT", "ib"}, BadVariable{"MULTILANE_PROFILE", "host 0 inf lane"},
                    BadVariable{"MULTILANE_PROFILE_FILE", "/nonexistent/profile.txt"},
                    // Issue 15 item 9: 0 passed silently (it means nothing).
                    BadVariable{"MULTILANE_CHUNK", "0"}, BadVariable{"MULTILANE_LANES", " 2"},
                    BadVariable{"MULTILANE_LANES", "0x10"}));

// The problem's text for one variable.
std::string ProblemOf(const char* name, const char* value) {
  Config c = Load({{name, value}});
  EXPECT_FALSE(c.enabled) << name << "=" << value;
  return c.problems.empty() ? "" : c.problems[0];
}

// Issue 15 item 9: MULTILANE_LANES=2147483647 was called "not positive".
TEST(Config, TooLargeCountsAreCalledTooLarge) {
  for (const char* name : {"MULTILANE_LANES", "MULTILANE_RANKS_PER_NODE"}) {
    const std::string p = ProblemOf(name, "2147483647");
    EXPECT_NE(p.find(std::string(name) + "='2147483647' is too large (at most 9999999"), std::string::npos) << p;
    EXPECT_EQ(p.find("positive"), std::string::npos) << p;
  }
  EXPECT_NE(ProblemOf("MULTILANE_LANES", "0").find("must be a positive integer"), std::string::npos);
  // Ranks per GPU: the one rule of every part (vocab/ranks_per_gpu.h).
  for (const char* bad : {"0", "65", "2147483647", "+2"})
    EXPECT_NE(ProblemOf("MULTILANE_RANKS_PER_GPU", bad).find("must be a number from 1 to 64 (ranks sharing one GPU)"),
              std::string::npos)
        << bad;
  EXPECT_NE(ProblemOf("MULTILANE_CHUNK", "0").find("must be above 0"), std::string::npos);
  Config c = Load({{"MULTILANE_LANES", "9999999"}});
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.forced.lanes, 9999999);
}

// Issue 44: the verbose line counts in the singular where there is one.
TEST(Config, SummaryCountsOneInTheSingular) {
  Config c = Load({{"MULTILANE_RANKS_PER_NODE", "1"},
                   {"MULTILANE_RANKS_PER_GPU", "1"},
                   {"MULTILANE_PROFILE", "multilane-profile 1; host 0 inf lane"}});
  ASSERT_TRUE(c.enabled) << c.Summary();
  EXPECT_NE(c.Summary().find("(1 entry)"), std::string::npos) << c.Summary();
  EXPECT_NE(c.Summary().find("virtual nodes of 1 rank,"), std::string::npos) << c.Summary();
  EXPECT_NE(c.Summary().find(", 1 rank per GPU"), std::string::npos) << c.Summary();
  c = Load({{"MULTILANE_RANKS_PER_NODE", "2"}, {"MULTILANE_RANKS_PER_GPU", "2"}});
  EXPECT_NE(c.Summary().find("virtual nodes of 2 ranks, 2 ranks per GPU"), std::string::npos) << c.Summary();
}

// Issue 46: the node step's setting, mpi by default.
TEST(Config, NodeStep) {
  EXPECT_FALSE(Load({}).shm_node_step);
  EXPECT_FALSE(Load({{"MULTILANE_NODE_STEP", "mpi"}}).shm_node_step);
  const Config c = Load({{"MULTILANE_NODE_STEP", "shm"}});
  EXPECT_TRUE(c.enabled);
  EXPECT_TRUE(c.shm_node_step);
  EXPECT_NE(c.Summary().find("node steps on shared memory"), std::string::npos) << c.Summary();
  EXPECT_FALSE(c.shm_single_copy);
  const Config cma = Load({{"MULTILANE_NODE_STEP", "shm-cma"}});
  EXPECT_TRUE(cma.shm_node_step);
  EXPECT_TRUE(cma.shm_single_copy);
  EXPECT_NE(cma.Summary().find("node steps on shared memory (single copy where allowed)"), std::string::npos)
      << cma.Summary();
  const std::string p = ProblemOf("MULTILANE_NODE_STEP", "xpmem");
  EXPECT_NE(p.find("MULTILANE_NODE_STEP='xpmem' is not a node step: use mpi"), std::string::npos) << p;
}

// Issue 16: the device synchronisation rule and the flag path's limit.
TEST(Config, DeviceSyncAndFlagLimit) {
  Config c = Load({});
  EXPECT_FALSE(c.device_sync_stream);
  EXPECT_EQ(c.device_flag_max, kDefaultDeviceFlagMax);
  c = Load({{"MULTILANE_DEVICE_SYNC", "stream"}, {"MULTILANE_DEVICE_FLAG_MAX", "256K"}});
  EXPECT_TRUE(c.enabled);
  EXPECT_TRUE(c.device_sync_stream);
  EXPECT_EQ(c.device_flag_max, 256u << 10);
  EXPECT_NE(c.Summary().find("legacy stream only"), std::string::npos) << c.Summary();
  c = Load({{"MULTILANE_DEVICE_SYNC", "device"}, {"MULTILANE_DEVICE_FLAG_MAX", "0"}});
  EXPECT_TRUE(c.enabled);
  EXPECT_FALSE(c.device_sync_stream);
  EXPECT_EQ(c.device_flag_max, 0u);
  EXPECT_NE(c.Summary().find("device flag path off"), std::string::npos) << c.Summary();
  const std::string sync = ProblemOf("MULTILANE_DEVICE_SYNC", "event");
  EXPECT_NE(sync.find("MULTILANE_DEVICE_SYNC='event' is not a rule: use device"), std::string::npos) << sync;
  // The bound itself is taken; one byte more is not (issue 27: a mutant that
  // refused 16M survived).
  c = Load({{"MULTILANE_DEVICE_FLAG_MAX", "16M"}});
  EXPECT_TRUE(c.enabled) << (c.problems.empty() ? "" : c.problems[0]);
  EXPECT_EQ(c.device_flag_max, kMaxDeviceFlagMax);
  for (const char* bad : {"16777217", "17M", "1G", "-1", "lots"}) {
    const std::string p = ProblemOf("MULTILANE_DEVICE_FLAG_MAX", bad);
    EXPECT_NE(p.find("MULTILANE_DEVICE_FLAG_MAX='" + std::string(bad) + "' must be a byte size from 0 (off) to 16M"),
              std::string::npos)
        << p;
  }
}

// Issue 15 item 9: MULTILANE_REPORT_INTERVAL took ' 2' and 0x10 (strtod);
// it now reads like every other variable.
TEST(Config, ReportIntervalIsAPlainDecimal) {
  for (const char* bad : {" 2", "2 ", "0x10", "+2", "1e1", "inf", "nan", ".", "1.2.3", "-1", "0.001", "3601"}) {
    Config c = Load({{"MULTILANE_REPORT_INTERVAL", bad}});
    EXPECT_TRUE(c.enabled) << "a report variable never turns multilane off";
    ASSERT_EQ(c.warnings.size(), 1u) << "'" << bad << "'";
    EXPECT_NE(c.warnings[0].find("MULTILANE_REPORT_INTERVAL='" + std::string(bad) + "'"), std::string::npos);
    EXPECT_EQ(c.report_interval_s, 1.0);
  }
  for (auto [good, value] :
       {std::pair<const char*, double>{"2", 2}, {"0.5", 0.5}, {".25", 0.25}, {"3600", 3600}, {"0", 0}}) {
    Config c = Load({{"MULTILANE_REPORT_INTERVAL", good}});
    EXPECT_TRUE(c.warnings.empty()) << good;
    EXPECT_EQ(c.report_interval_s, value) << good;
  }
}

// Issue 41 item 10: a 100 KB MULTILANE_OFF was repeated whole in the
// library's warning.  The plugin's reasons (at most kRelayedReasonBytes)
// stay whole; anything longer is an excerpt; the settings hash still covers
// every byte.
TEST(Config, LauncherOffIsRepeatedAsABoundedExcerpt) {
  const std::string plugin =
      "node7: no profile for node type x86 with libmlallreduce 1; this step runs without multilane";
  EXPECT_EQ(Load({{"MULTILANE_OFF", plugin}}).launcher_off, plugin);
  const std::string whole(kRelayedReasonBytes, 'r');
  EXPECT_EQ(Load({{"MULTILANE_OFF", whole}}).launcher_off, whole);
  const std::string huge = "node7: " + std::string(100000, 'x');
  const Config c = Load({{"MULTILANE_OFF", huge}});
  EXPECT_LT(c.launcher_off.size(), kRelayedReasonBytes + 40);
  EXPECT_EQ(c.launcher_off.substr(0, 7), "node7: ");
  EXPECT_NE(c.launcher_off.find("(100007 bytes)"), std::string::npos) << c.launcher_off.substr(0, 100);
  EXPECT_NE(c.fingerprint, Load({{"MULTILANE_OFF", huge + "y"}}).fingerprint) << "the hash covers the whole value";
}

// Issue 15 item 9: MULTILANE_VERBOSE=3 passes silently no more; only 0, 1
// and 2 exist (2: each rank's agreement cost, issue 45).
TEST(Config, VerboseAboveTwoIsAWarning) {
  Config c = Load({{"MULTILANE_VERBOSE", "3"}});
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.verbose, 2);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("MULTILANE_VERBOSE='3': only 0, 1 and 2 exist; using 2"), std::string::npos);
  EXPECT_TRUE(Load({{"MULTILANE_VERBOSE", "1"}}).warnings.empty());
  EXPECT_TRUE(Load({{"MULTILANE_VERBOSE", "2"}}).warnings.empty());
}

// Issue 41 item 10: a bad MULTILANE_VERBOSE is one problem, and the level
// stays 0 (the front reads the variable through the same VerboseLevel).
TEST(Config, BadVerboseIsOneProblemAndSilent) {
  Config c = Load({{"MULTILANE_VERBOSE", "loud"}});
  EXPECT_FALSE(c.enabled);
  EXPECT_EQ(c.verbose, 0);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].rfind("MULTILANE_VERBOSE='loud' must be 0, 1 or 2; multilane is off", 0), 0u)
      << c.problems[0];
  EXPECT_TRUE(c.warnings.empty());
}

// Issue 15 item 3: /dev/zero was read until the OOM killer struck, a FIFO
// hung MPI_Init, and a folder was called "empty".
TEST(Config, ProfileFileMustBeARegularFileBelowTheCap) {
  std::string dir = testing::TempDir() + "/mla_config_profile_rules_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr) << dir;
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = dir + "/big.txt";
  {
    std::ofstream out(big);
    out << "multilane-profile 1\n" << std::string(kMaxProfileFileBytes, '#') << "\n";
  }
  const std::string good = dir + "/good.txt";
  {
    std::ofstream out(good);
    out << "multilane-profile 1\nhost 0 inf lane\n";
  }
  const std::string link = dir + "/link.txt";
  ASSERT_EQ(symlink(good.c_str(), link.c_str()), 0);
  struct Case {
    std::string path, expect;
  };
  for (const Case& k : {Case{"/dev/zero", "is not a regular file (a character device)"},
                        Case{fifo, "is not a regular file (a FIFO (named pipe))"},
                        Case{dir, "is not a regular file (a folder)"}, Case{big, "is larger than 1 MiB"}}) {
    Config c = Load({{"MULTILANE_PROFILE_FILE", k.path}});
    EXPECT_FALSE(c.enabled) << k.path;
    ASSERT_EQ(c.problems.size(), 1u) << k.path;
    EXPECT_NE(c.problems[0].find("MULTILANE_PROFILE_FILE='" + k.path + "' " + k.expect), std::string::npos)
        << c.problems[0];
    EXPECT_EQ(c.problems[0].find("empty"), std::string::npos) << c.problems[0];
  }
  Config c = Load({{"MULTILANE_PROFILE_FILE", link}});
  EXPECT_TRUE(c.enabled) << "a link to a regular file is fine: " << (c.problems.empty() ? "" : c.problems[0]);
  EXPECT_EQ(c.profile.entries().size(), 1u);
  for (const std::string& p : {fifo, big, link, good}) std::remove(p.c_str());
  rmdir(dir.c_str());
}

TEST(Config, BothProfileVariablesIsAnError) {
  Config c = Load({{"MULTILANE_PROFILE", "multilane-profile 1"}, {"MULTILANE_PROFILE_FILE", "/tmp/x"}});
  EXPECT_FALSE(c.enabled);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("set only one"), std::string::npos);
}

TEST(Config, ReadsTheProfileFileAndHashesItsContent) {
  const std::string path = testing::TempDir() + "/mla_config_test_profile.txt";
  {
    std::ofstream out(path);
    out << "multilane-profile 1\nhost 0 1M hier\nhost 1M inf lane\n";
  }
  Config a = Load({{"MULTILANE_PROFILE_FILE", path}});
  ASSERT_TRUE(a.enabled) << (a.problems.empty() ? "" : a.problems[0]);
  EXPECT_EQ(a.profile.entries().size(), 2u);
  {
    std::ofstream out(path);
    out << "multilane-profile 1\nhost 0 inf lane\n";
  }
  Config b = Load({{"MULTILANE_PROFILE_FILE", path}});
  EXPECT_NE(a.fingerprint, b.fingerprint) << "same path, other content must give another fingerprint";
  {
    std::ofstream out(path);
    out << "multilane-profile 1\nhost 0 inf bogus\n";
  }
  Config c = Load({{"MULTILANE_PROFILE_FILE", path}});
  EXPECT_FALSE(c.enabled);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find(path), std::string::npos) << c.problems[0];
  EXPECT_NE(c.problems[0].find("unknown algorithm 'bogus'"), std::string::npos) << c.problems[0];
  std::remove(path.c_str());
}

TEST(Config, EmptyProfileFileIsAnError) {
  const std::string path = testing::TempDir() + "/mla_config_test_empty.txt";
  { std::ofstream out(path); }
  Config c = Load({{"MULTILANE_PROFILE_FILE", path}});
  EXPECT_FALSE(c.enabled);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("empty"), std::string::npos) << c.problems[0];
  std::remove(path.c_str());
}

TEST(Config, FingerprintDependsOnValues) {
  EXPECT_EQ(Load({{"MULTILANE_ALGO", "lane"}}).fingerprint, Load({{"MULTILANE_ALGO", "lane"}}).fingerprint);
  EXPECT_NE(Load({{"MULTILANE_ALGO", "lane"}}).fingerprint, Load({{"MULTILANE_ALGO", "hier"}}).fingerprint);
  EXPECT_NE(Load({{"MULTILANE_RANKS_PER_NODE", "2"}}).fingerprint, Load({}).fingerprint);
}

TEST(ConfigText, WarningsOfTheLibraryAreEscaped) {
  const Config c = LoadConfig([](const char* name) -> const char* {
    return std::string(name) == "MULTILANE_ALGO" ? "x\x1b]0;owned\x07\ny" : nullptr;
  });
  ASSERT_EQ(c.problems.size(), 1u);
  testing::internal::CaptureStderr();
  WarnOnce(c.problems[0]);
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("MULTILANE_ALGO='x\\x1b]0;owned\\x07\\ny'"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\n'), out.size() - 1) << "one line";
}

TEST(ConfigText, WarningsQuoteLongVariablesAsAnExcerpt) {
  const std::string huge(100 * 1024, 'z');
  for (const char* var : {"MULTILANE_ALGO", "MULTILANE_LANES", "MULTILANE_CHUNK", "MULTILANE_STATS",
                          "MULTILANE_PROFILE", "MULTILANE_PROFILE_FILE", "MULTILANE_REPORT_INTERVAL"}) {
    const Config c =
        LoadConfig([&](const char* name) -> const char* { return std::string(name) == var ? huge.c_str() : nullptr; });
    std::vector<std::string> all = c.problems;
    all.insert(all.end(), c.warnings.begin(), c.warnings.end());
    ASSERT_EQ(all.size(), 1u) << var;
    EXPECT_LT(all[0].size(), 400u) << var << ": " << all[0].substr(0, 400);
    EXPECT_NE(all[0].find("\u2026 (102400 bytes)"), std::string::npos) << var << ": " << all[0].substr(0, 400);
  }
}

}  // namespace
}  // namespace mla::lib
