// plugin_config_test.cc: plugstack.conf key=value arguments.
#include "spank/plugin_config.h"

#include <gtest/gtest.h>

#include <vector>

namespace multilane_spank {
namespace {

bool Parse(std::vector<std::string> args, PluginConfig* c, std::string* error) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParsePluginConfig(static_cast<int>(argv.size()), argv.data(), c, error);
}

TEST(PluginConfig, DefaultsWithoutArguments) {
  PluginConfig c;
  std::string error;
  ASSERT_TRUE(Parse({}, &c, &error));
  EXPECT_EQ(c.library, multilane_install::kLibrary);
  EXPECT_EQ(c.database, multilane_install::kSystemDatabase);
  EXPECT_FALSE(c.default_on);
  EXPECT_FALSE(c.mps);
  EXPECT_TRUE(c.mps_auto);  // the default
  EXPECT_TRUE(c.bind_cores);
}

TEST(PluginConfig, EveryKey) {
  PluginConfig c;
  std::string error;
  ASSERT_TRUE(Parse({"library=/opt/ml/lib.so", "multilane=/opt/ml/multilane", "database=/srv/p.db", "default=auto",
                     "mps=yes", "mps_control=/opt/cuda/mps", "mps_dir=/run/ml", "bind=none", "resolve_timeout=5"},
                    &c, &error))
      << error;
  EXPECT_EQ(c.library, "/opt/ml/lib.so");
  EXPECT_EQ(c.multilane, "/opt/ml/multilane");
  EXPECT_EQ(c.database, "/srv/p.db");
  EXPECT_TRUE(c.default_on);
  EXPECT_TRUE(c.mps);
  EXPECT_FALSE(c.mps_auto);
  EXPECT_EQ(c.mps_control, "/opt/cuda/mps");
  EXPECT_EQ(c.mps_dir, "/run/ml");
  EXPECT_FALSE(c.bind_cores);
  EXPECT_EQ(c.resolve_timeout_s, 5);
}

TEST(PluginConfig, MpsDirTakesTheHostName) {
  EXPECT_EQ(ExpandHostName("/tmp/mps/%h", "node1.cluster.example"), "/tmp/mps/node1");
  EXPECT_EQ(ExpandHostName("/run/%h/x-%h", "gpu7"), "/run/gpu7/x-gpu7");
  EXPECT_EQ(ExpandHostName("/run/multilane", "gpu7"), "/run/multilane");
  EXPECT_EQ(ExpandHostName("/run/100%", "gpu7"), "/run/100%");
}

TEST(PluginConfig, UnknownKeyIsNamedWithTheKnownOnes) {
  PluginConfig c;
  std::string error;
  ASSERT_FALSE(Parse({"library=/a.so", "databse=/x.db"}, &c, &error));
  EXPECT_NE(error.find("unknown key 'databse'"), std::string::npos) << error;
  EXPECT_NE(error.find("database"), std::string::npos) << error;
}

TEST(PluginConfig, BadValuesAreNamed) {
  PluginConfig c;
  std::string error;
  EXPECT_FALSE(Parse({"library=relative/lib.so"}, &c, &error));
  EXPECT_NE(error.find("library='relative/lib.so' must be an absolute path"), std::string::npos) << error;
  EXPECT_FALSE(Parse({"mps=maybe"}, &c, &error));
  EXPECT_NE(error.find("must be auto"), std::string::npos) << error;
  EXPECT_NE(error.find("yes or no"), std::string::npos) << error;
  EXPECT_FALSE(Parse({"default=on-demand"}, &c, &error));
  EXPECT_FALSE(Parse({"resolve_timeout=0"}, &c, &error));
  EXPECT_FALSE(Parse({"bind=sockets"}, &c, &error));
  EXPECT_FALSE(Parse({"noequals"}, &c, &error));
  EXPECT_NE(error.find("not key=value"), std::string::npos) << error;
  EXPECT_FALSE(Parse({"=x"}, &c, &error));
}

}  // namespace
}  // namespace multilane_spank
