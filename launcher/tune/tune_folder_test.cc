// tune_folder_test.cc: the tune's folder is made without a shell and removed
// unless kept.
#include "launcher/tune/tune_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include "vocab/fresh_test_folder.h"

namespace multilane {
namespace {

TEST(TuneFolder, ATemporaryFolderIsRemovedWithItsFiles) {
  const std::string parent = mla::FreshTestFolder("tune_folder_temp");
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
  const std::string parent = mla::FreshTestFolder("tune_folder_keep");
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
  const std::string parent = mla::FreshTestFolder("tune_folder_fail");
  std::ofstream(parent + "/file") << "x";
  TuneFolder f;
  std::string error;
  EXPECT_FALSE(f.Make(parent + "/file/sub", "", &error));
  EXPECT_NE(error.find(parent + "/file/sub"), std::string::npos) << error;
  EXPECT_FALSE(f.Make("", parent + "/missing", &error));
  EXPECT_NE(error.find("TMPDIR"), std::string::npos) << error;
}

// N4: an existing --keep folder is trusted only when it is the caller's own
// real folder that no one else may write (the tune re-reads files there).
TEST(TuneFolder, AnExistingKeptFolderOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  const std::string keep = mla::FreshTestFolder("tune_folder_foreign") + "/theirs";
  ASSERT_EQ(mkdir(keep.c_str(), 0755), 0);
  ASSERT_EQ(chown(keep.c_str(), 65534, 65534), 0);  // nobody's
  TuneFolder f;
  std::string error;
  EXPECT_FALSE(f.Make(keep, "", &error));
  EXPECT_NE(error.find("belongs to uid 65534, not to you"), std::string::npos) << error;
  EXPECT_NE(error.find("give a new folder of your own"), std::string::npos) << error;
}

TEST(TuneFolder, AnExistingKeptFolderOthersMayWriteIsRefused) {
  const std::string keep = mla::FreshTestFolder("tune_folder_writable") + "/shared";
  ASSERT_EQ(mkdir(keep.c_str(), 0700), 0);
  ASSERT_EQ(chmod(keep.c_str(), 0775), 0);
  TuneFolder f;
  std::string error;
  EXPECT_FALSE(f.Make(keep, "", &error));
  EXPECT_NE(error.find("may be written by others (mode 0775): run `chmod go-w " + keep + "`"), std::string::npos)
      << error;
  ASSERT_EQ(chmod(keep.c_str(), 0755), 0);
  EXPECT_TRUE(f.Make(keep + "/", "", &error)) << error;  // the fix works; a trailing slash is the same folder
  EXPECT_EQ(f.path(), keep);
}

TEST(TuneFolder, AKeptFolderThatIsALinkIsRefused) {
  const std::string parent = mla::FreshTestFolder("tune_folder_link");
  ASSERT_EQ(mkdir((parent + "/real").c_str(), 0700), 0);
  std::filesystem::create_symlink(parent + "/real", parent + "/link");
  TuneFolder f;
  std::string error;
  EXPECT_FALSE(f.Make(parent + "/link", "", &error));
  EXPECT_NE(error.find("is a symbolic link: give the folder itself"), std::string::npos) << error;
}

TEST(TuneFolder, ANewKeptFolderIsPrivate) {
  const std::string keep = mla::FreshTestFolder("tune_folder_private") + "/a/b";
  TuneFolder f;
  std::string error;
  ASSERT_TRUE(f.Make(keep, "", &error)) << error;
  struct stat st;
  ASSERT_EQ(lstat(keep.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  TuneFolder again;  // a second tune into the same folder
  EXPECT_TRUE(again.Make(keep, "", &error)) << error;
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
