// The prolog's MPS folders.  Handing folders to another user needs root: the
// tests run as root (CI and the project's test machines) and fail, not skip,
// otherwise, since they are the proof of a security property.
#include "job_dirs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace multilane_spank {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kUser = 65534;  // nobody
constexpr gid_t kGroup = 65534;

struct Stat {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
  bool link = false;
};

Stat Lstat(const fs::path& p) {
  struct stat st;
  Stat s;
  if (lstat(p.c_str(), &st) != 0) return s;
  s.uid = st.st_uid;
  s.gid = st.st_gid;
  s.mode = st.st_mode & 07777;
  s.link = S_ISLNK(st.st_mode);
  return s;
}

class JobDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "these tests hand folders to another user and must run as root";
    std::string tmpl = (fs::temp_directory_path() / "mla-jobdirs-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    chmod(root_.c_str(), 0755);
    mps_ = root_ / "mps";
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_, mps_;
  std::string error_;
};

TEST_F(JobDirsTest, LayoutOwnersAndModes) {
  ASSERT_TRUE(MakeJobDirs(mps_, 7, kUser, kGroup, &error_)) << error_;
  const Stat parent = Lstat(mps_), job = Lstat(mps_ / "job-7"), pipe = Lstat(mps_ / "job-7/pipe"),
             log = Lstat(mps_ / "job-7/log");
  EXPECT_EQ(parent.uid, 0u);
  EXPECT_EQ(parent.mode, 0755u);
  // The job folder stays root's: the user can never swap the names inside it.
  EXPECT_EQ(job.uid, 0u);
  EXPECT_EQ(job.mode, 0711u);
  for (const Stat& s : {pipe, log}) {
    EXPECT_EQ(s.uid, kUser);
    EXPECT_EQ(s.gid, kGroup);
    EXPECT_EQ(s.mode, 0700u);
  }
  EXPECT_TRUE(IsOwnJobDir(mps_, 7));
  ASSERT_TRUE(RemoveJobDirs(mps_, 7, &error_)) << error_;
  EXPECT_FALSE(fs::exists(mps_ / "job-7"));
  EXPECT_TRUE(fs::is_directory(mps_));
}

// The old prolog re-chowned mps_dir to root 0755 at every job: an admin's
// mps_dir=/tmp lost its sticky bit.
TEST_F(JobDirsTest, AnExistingMpsDirIsNeverChanged) {
  ASSERT_EQ(mkdir(mps_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(mps_.c_str(), 01777), 0);
  ASSERT_TRUE(MakeJobDirs(mps_, 1, kUser, kGroup, &error_)) << error_;
  EXPECT_EQ(Lstat(mps_).mode, 01777u);
  ASSERT_TRUE(RemoveJobDirs(mps_, 1, &error_)) << error_;
  EXPECT_EQ(Lstat(mps_).mode, 01777u);
}

TEST_F(JobDirsTest, RefusesAnMpsDirOthersMayWriteWithoutTheStickyBit) {
  ASSERT_EQ(mkdir(mps_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(mps_.c_str(), 0777), 0);
  EXPECT_FALSE(MakeJobDirs(mps_, 1, kUser, kGroup, &error_));
  EXPECT_NE(error_.find("sticky"), std::string::npos) << error_;
  EXPECT_FALSE(fs::exists(mps_ / "job-1"));
  EXPECT_EQ(Lstat(mps_).mode, 0777u);
}

TEST_F(JobDirsTest, RefusesAnMpsDirAUserOwns) {
  ASSERT_EQ(mkdir(mps_.c_str(), 0755), 0);
  ASSERT_EQ(chown(mps_.c_str(), kUser, kGroup), 0);
  EXPECT_FALSE(MakeJobDirs(mps_, 1, kUser, kGroup, &error_));
  EXPECT_NE(error_.find("not root"), std::string::npos) << error_;
  EXPECT_EQ(Lstat(mps_).uid, kUser);
}

// A user who can write mps_dir (sticky /tmp) made job-ID first: as a link to
// a root folder, or as a folder of their own with a link inside.
TEST_F(JobDirsTest, RefusesAJobFolderSomeoneElseMade) {
  ASSERT_EQ(mkdir(mps_.c_str(), 01777), 0);
  ASSERT_EQ(chmod(mps_.c_str(), 01777), 0);
  const fs::path target = root_ / "root-owned";
  ASSERT_EQ(mkdir(target.c_str(), 0755), 0);
  fs::create_symlink(target, mps_ / "job-2");
  EXPECT_FALSE(MakeJobDirs(mps_, 2, kUser, kGroup, &error_));
  EXPECT_NE(error_.find("exists already"), std::string::npos) << error_;
  EXPECT_EQ(Lstat(target).uid, 0u);
  EXPECT_EQ(Lstat(target).mode, 0755u);
  EXPECT_FALSE(fs::exists(target / "pipe"));
  EXPECT_TRUE(Lstat(mps_ / "job-2").link);
  EXPECT_FALSE(IsOwnJobDir(mps_, 2));

  const fs::path squat = mps_ / "job-3";
  ASSERT_EQ(mkdir(squat.c_str(), 0755), 0);
  fs::create_symlink(target, squat / "pipe");
  ASSERT_EQ(chown(squat.c_str(), kUser, kGroup), 0);
  EXPECT_FALSE(MakeJobDirs(mps_, 3, kUser, kGroup, &error_));
  EXPECT_EQ(Lstat(target).uid, 0u);
  EXPECT_EQ(Lstat(squat).uid, kUser);
  EXPECT_FALSE(IsOwnJobDir(mps_, 3));
  std::string why;
  EXPECT_FALSE(RemoveJobDirs(mps_, 3, &why));
  EXPECT_TRUE(fs::exists(squat));
}

TEST_F(JobDirsTest, AnEmptyLeftoverOfAnEarlierPrologIsReplaced) {
  ASSERT_TRUE(MakeJobDirs(mps_, 4, kUser, kGroup, &error_)) << error_;
  ASSERT_TRUE(MakeJobDirs(mps_, 4, kUser, kGroup, &error_)) << error_;
  EXPECT_EQ(Lstat(mps_ / "job-4/pipe").uid, kUser);
  // Not empty: the user's files are never removed by root.
  { FILE* f = std::fopen((mps_ / "job-4/log/control.log").c_str(), "w"); ASSERT_NE(f, nullptr); std::fclose(f); }
  EXPECT_FALSE(MakeJobDirs(mps_, 4, kUser, kGroup, &error_));
  EXPECT_TRUE(fs::exists(mps_ / "job-4/log/control.log"));
}

}  // namespace
}  // namespace multilane_spank
