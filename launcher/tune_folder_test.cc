// tune_folder_test.cc: the tune's folder is made without a shell and removed
// unless kept.
#include "tune_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace multilane {
namespace {

std::string NewDir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "tune_folder_" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

TEST(TuneFolder, ATemporaryFolderIsRemovedWithItsFiles) {
  const std::string parent = NewDir("temp");
  std::string path, error;
  {
    TuneFolder f;
    ASSERT_TRUE(f.Make("", parent, &error)) << error;
    path = f.path();
    EXPECT_EQ(path.rfind(parent + "/multilane-tune.", 0), 0u) << path;
    EXPECT_FALSE(f.kept());
    std::ofstream(path + "/result.json") << "{}";
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(parent));
}

TEST(TuneFolder, AKeptFolderIsMadeExactlyAsNamedAndNoShellSeesIt) {
  const std::string parent = NewDir("keep");
  // A quote and a command substitution: a shell would run `touch`.
  const std::string keep = parent + "/it's $(touch " + parent + "/X)/deeper";
  std::string error;
  {
    TuneFolder f;
    ASSERT_TRUE(f.Make(keep, "/nonexistent", &error)) << error;
    EXPECT_TRUE(f.kept());
    EXPECT_EQ(f.path(), keep);
  }
  EXPECT_TRUE(std::filesystem::is_directory(keep));
  EXPECT_FALSE(std::filesystem::exists(parent + "/X"));
}

TEST(TuneFolder, FailuresNameTheFolder) {
  const std::string parent = NewDir("fail");
  std::ofstream(parent + "/file") << "x";
  TuneFolder f;
  std::string error;
  EXPECT_FALSE(f.Make(parent + "/file/sub", "", &error));
  EXPECT_NE(error.find(parent + "/file/sub"), std::string::npos) << error;
  EXPECT_FALSE(f.Make("", parent + "/missing", &error));
  EXPECT_NE(error.find("TMPDIR"), std::string::npos) << error;
}

TEST(TuneFolder, TemporaryParentFollowsTmpdir) {
  setenv("TMPDIR", "/var/tmp", 1);
  EXPECT_EQ(TemporaryParent(), "/var/tmp");
  setenv("TMPDIR", "relative", 1);
  EXPECT_EQ(TemporaryParent(), "/tmp");
  unsetenv("TMPDIR");
  EXPECT_EQ(TemporaryParent(), "/tmp");
}

}  // namespace
}  // namespace multilane
