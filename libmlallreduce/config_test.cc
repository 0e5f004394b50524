#include "config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

namespace mla {
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

INSTANTIATE_TEST_SUITE_P(All, ConfigErrors,
                         testing::Values(BadVariable{"MULTILANE_ALGO", "ring"}, BadVariable{"MULTILANE_LANES", "0"},
                                         BadVariable{"MULTILANE_LANES", "two"}, BadVariable{"MULTILANE_CHUNK", "1.5M"},
                                         BadVariable{"MULTILANE_RANKS_PER_NODE", "-2"},
                                         BadVariable{"MULTILANE_RANKS_PER_GPU", "x"},
                                         BadVariable{"MULTILANE_STATS", "maybe"},
                                         BadVariable{"MULTILANE_VERBOSE", "loud"}, BadVariable{"MULTILANE_TRANSPORT", "ib"},
                                         BadVariable{"MULTILANE_PROFILE", "host 0 inf lane"},
                                         BadVariable{"MULTILANE_PROFILE_FILE", "/nonexistent/profile.txt"}));

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

}  // namespace
}  // namespace mla
