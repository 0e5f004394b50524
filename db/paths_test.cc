#include "db/paths.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

namespace mldb {
namespace {

// Saves and restores the variables the paths depend on.
class PathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      const char* v = std::getenv(name);
      if (v != nullptr) saved_[name] = v;
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : kNames) {
      auto it = saved_.find(name);
      if (it == saved_.end()) {
        unsetenv(name);
      } else {
        setenv(name, it->second.c_str(), 1);
      }
    }
  }
  static constexpr const char* kNames[] = {"MULTILANE_SYSTEM_DB", "MULTILANE_USER_DB", "XDG_STATE_HOME", "HOME"};
  std::map<std::string, std::string> saved_;
};

TEST_F(PathsTest, SystemDatabase) {
  EXPECT_EQ(SystemDatabasePath(), "/var/lib/multilane/profiles.db");
  setenv("MULTILANE_SYSTEM_DB", "/x/sys.db", 1);
  EXPECT_EQ(SystemDatabasePath(), "/x/sys.db");
}

TEST_F(PathsTest, UserDatabaseOrder) {
  EXPECT_EQ(UserDatabasePath(), "");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(UserDatabasePath(), "/home/u/.local/state/multilane/profiles.db");
  setenv("XDG_STATE_HOME", "relative/ignored", 1);
  EXPECT_EQ(UserDatabasePath(), "/home/u/.local/state/multilane/profiles.db");
  setenv("XDG_STATE_HOME", "/state", 1);
  EXPECT_EQ(UserDatabasePath(), "/state/multilane/profiles.db");
  setenv("MULTILANE_USER_DB", "/y/user.db", 1);
  EXPECT_EQ(UserDatabasePath(), "/y/user.db");
}

TEST_F(PathsTest, DefaultOrderIsUserThenSystem) {
  EXPECT_EQ(DefaultDatabasePaths(), std::vector<std::string>{"/var/lib/multilane/profiles.db"});
  setenv("MULTILANE_USER_DB", "/y/user.db", 1);
  EXPECT_EQ(DefaultDatabasePaths(), (std::vector<std::string>{"/y/user.db", "/var/lib/multilane/profiles.db"}));
}

}  // namespace
}  // namespace mldb
