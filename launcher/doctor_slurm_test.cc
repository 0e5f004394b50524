// doctor_slurm_test.cc: reading slurm.conf, plugstack.conf (with includes),
// versions and the cli_filter's settings for `doctor`.
#include "launcher/doctor_slurm.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include "vocab/fresh_test_folder.h"

namespace multilane {
namespace {

// A fresh folder named after the running test.
std::string NewDir() {
  return mla::FreshTestFolder(std::string("doctor_slurm_") +
                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

TEST(DoctorSlurm, SlurmConfNamesThePlugstackAndTheCliFilter) {
  const std::string dir = NewDir();
  std::ofstream(dir + "/slurm.conf") << "ClusterName=x\n# PlugStackConfig=/no\n  plugstackconfig = " << dir
                                     << "/ps.conf\nCliFilterPlugins=cli_filter/lua\n";
  SlurmConf c;
  ASSERT_TRUE(ReadSlurmConf(dir + "/slurm.conf", &c));
  EXPECT_EQ(c.plugstack, dir + "/ps.conf");
  EXPECT_EQ(c.cli_filter, "cli_filter/lua");
  std::ofstream(dir + "/other.conf") << "ClusterName=y\n";
  ASSERT_TRUE(ReadSlurmConf(dir + "/other.conf", &c));
  EXPECT_EQ(c.plugstack, dir + "/plugstack.conf");  // the default: beside slurm.conf
  EXPECT_FALSE(ReadSlurmConf(dir + "/missing.conf", &c));
}

TEST(DoctorSlurm, PlugstackIncludesAreFollowed) {
  const std::string dir = NewDir();
  std::filesystem::create_directories(dir + "/plugstack.conf.d");
  std::ofstream(dir + "/plugstack.conf") << "# comment\noptional /a/other.so x=1\ninclude plugstack.conf.d/*.conf\n"
                                         << "bogus line\n";
  std::ofstream(dir + "/plugstack.conf.d/multilane.conf")
      << "required /usr/lib/slurm/spank_multilane.so library=/l multilane=/m  # trailing\n";
  std::ofstream(dir + "/plugstack.conf.d/ignored.txt") << "optional /nope.so\n";
  std::vector<std::string> problems;
  const auto lines = ReadPlugstack(dir + "/plugstack.conf", &problems);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].plugin, "/usr/lib/slurm/spank_multilane.so");
  EXPECT_EQ(lines[1].kind, "required");
  EXPECT_EQ(lines[1].args, (std::vector<std::string>{"library=/l", "multilane=/m"}));
  EXPECT_EQ(lines[1].file, dir + "/plugstack.conf.d/multilane.conf");
  EXPECT_EQ(lines[1].line, 1);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find(":4: bogus line"), std::string::npos) << problems[0];
}

TEST(DoctorSlurm, AnIncludeLoopEnds) {
  const std::string dir = NewDir();
  std::ofstream(dir + "/plugstack.conf") << "include " << dir << "/plugstack.conf\n";
  std::vector<std::string> problems;
  EXPECT_TRUE(ReadPlugstack(dir + "/plugstack.conf", &problems).empty());
  EXPECT_FALSE(problems.empty());
}

TEST(DoctorSlurm, Versions) {
  EXPECT_EQ(ParseSlurmVersion("slurm-wlm 22.05.8\n"), (22u << 16) | (5u << 8) | 8u);
  EXPECT_EQ(ParseSlurmVersion("slurm 23.11.10"), (23u << 16) | (11u << 8) | 10u);
  EXPECT_EQ(ParseSlurmVersion("no version"), 0u);
  EXPECT_EQ(FormatSlurmVersion((22u << 16) | (5u << 8) | 8u), "22.05.8");
}

TEST(DoctorSlurm, CliFilterSettings) {
  const std::string dir = NewDir();
  std::ofstream(dir + "/cli_filter.lua")
      << "-- cli_filter.lua: the companion of spank_multilane.so.  A SPANK\n"
      << "local MULTILANE = \"/usr/bin/multilane\"   -- x\nlocal DATABASE = \"/db\"\nlocal DEFAULT = \"auto\"\n";
  const CliFilterSettings s = ReadCliFilter(dir + "/cli_filter.lua");
  EXPECT_TRUE(s.ours);
  EXPECT_EQ(s.multilane, "/usr/bin/multilane");
  EXPECT_EQ(s.database, "/db");
  EXPECT_EQ(s.default_mode, "auto");
  std::ofstream(dir + "/foreign.lua") << "function slurm_cli_pre_submit() end\n";
  EXPECT_FALSE(ReadCliFilter(dir + "/foreign.lua").ours);
}

}  // namespace
}  // namespace multilane
