// The prolog's MPS folders.  Handing folders to another user needs root: the
// tests run as root (CI and the project's test machines) and fail, not skip,
// otherwise, since they are the proof of a security property.
#include "spank/job_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace multilane_spank {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kUser = 65534;  // nobody
constexpr gid_t kGroup = 65534;
constexpr uid_t kOther = 65533;  // a third user

void Touch(const fs::path& p, uid_t uid = 0) {
  FILE* f = std::fopen(p.c_str(), "w");
  ASSERT_NE(f, nullptr) << p;
  std::fputs("x", f);
  std::fclose(f);
  ASSERT_EQ(lchown(p.c_str(), uid, uid), 0);
}

void MakeDir(const fs::path& p, uid_t uid, mode_t mode = 0755) {
  ASSERT_EQ(mkdir(p.c_str(), 0700), 0) << p;
  ASSERT_EQ(chown(p.c_str(), uid, uid), 0);
  ASSERT_EQ(chmod(p.c_str(), mode), 0);
}

// JobDirsReady as the job's user would call it in the step.
bool ReadyAsUser(const fs::path& mps, uint32_t job, uid_t uid) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::string why;
    if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) _exit(2);
    _exit(JobDirsReady(mps, job, uid, &why) ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

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
  bool Make(uint32_t job) { return MakeJobDirs(mps_, job, kUser, kGroup, &error_, &note_); }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_, mps_;
  std::string error_, note_;
};

TEST_F(JobDirsTest, LayoutOwnersAndModes) {
  ASSERT_TRUE(Make(7)) << error_;
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
  EXPECT_TRUE(IsOwnJobDir(mps_, 7, kUser));
  ASSERT_TRUE(RemoveJobDirs(mps_, 7, kUser, &error_)) << error_;
  EXPECT_FALSE(fs::exists(mps_ / "job-7"));
  EXPECT_TRUE(fs::is_directory(mps_));
}

// The old prolog re-chowned mps_dir to root 0755 at every job: an admin's
// mps_dir=/tmp lost its sticky bit.
TEST_F(JobDirsTest, AnExistingMpsDirIsNeverChanged) {
  ASSERT_EQ(mkdir(mps_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(mps_.c_str(), 01777), 0);
  ASSERT_TRUE(Make(1)) << error_;
  EXPECT_EQ(Lstat(mps_).mode, 01777u);
  ASSERT_TRUE(RemoveJobDirs(mps_, 1, kUser, &error_)) << error_;
  EXPECT_EQ(Lstat(mps_).mode, 01777u);
}

TEST_F(JobDirsTest, RefusesAnMpsDirOthersMayWriteWithoutTheStickyBit) {
  ASSERT_EQ(mkdir(mps_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(mps_.c_str(), 0777), 0);
  EXPECT_FALSE(Make(1));
  EXPECT_NE(error_.find("sticky"), std::string::npos) << error_;
  EXPECT_FALSE(fs::exists(mps_ / "job-1"));
  EXPECT_EQ(Lstat(mps_).mode, 0777u);
}

TEST_F(JobDirsTest, RefusesAnMpsDirAUserOwns) {
  ASSERT_EQ(mkdir(mps_.c_str(), 0755), 0);
  ASSERT_EQ(chown(mps_.c_str(), kUser, kGroup), 0);
  EXPECT_FALSE(Make(1));
  EXPECT_NE(error_.find("not root"), std::string::npos) << error_;
  EXPECT_EQ(Lstat(mps_).uid, kUser);
}

// N2: a user who can write mps_dir (sticky /tmp) made job-ID first, as a
// link to a root folder, or as a folder of their own with a link inside.  It
// used to deny MPS to job ID for good; now it is moved aside and removed
// without following its links, and the job gets its own folders.
TEST_F(JobDirsTest, AJobFolderSomeoneElseMadeIsReplaced) {
  MakeDir(mps_, 0, 01777);
  const fs::path target = root_ / "root-owned";
  MakeDir(target, 0);
  Touch(target / "precious");
  fs::create_symlink(target, mps_ / "job-2");
  ASSERT_TRUE(Make(2)) << error_;
  EXPECT_NE(note_.find("was there before the prolog"), std::string::npos) << note_;
  EXPECT_NE(note_.find("removed it"), std::string::npos) << note_;
  EXPECT_EQ(Lstat(target).uid, 0u);
  EXPECT_EQ(Lstat(target).mode, 0755u);
  EXPECT_TRUE(fs::exists(target / "precious"));
  EXPECT_FALSE(fs::exists(target / "pipe"));
  EXPECT_FALSE(Lstat(mps_ / "job-2").link);
  EXPECT_EQ(Lstat(mps_ / "job-2").mode, 0711u);
  EXPECT_TRUE(IsOwnJobDir(mps_, 2, kUser));
  EXPECT_TRUE(JobDirsReady(mps_, 2, kUser, &error_)) << error_;

  const fs::path squat = mps_ / "job-3";
  MakeDir(squat, kOther);
  MakeDir(squat / "pipe", kOther, 0);
  fs::create_symlink(target, squat / "pipe" / "escape");
  fs::create_symlink(target / "precious", squat / "log");
  ASSERT_TRUE(Make(3)) << error_;
  EXPECT_TRUE(fs::exists(target / "precious"));
  EXPECT_EQ(Lstat(mps_ / "job-3").uid, 0u);
  EXPECT_EQ(Lstat(mps_ / "job-3/pipe").uid, kUser);
  EXPECT_TRUE(JobDirsReady(mps_, 3, kUser, &error_)) << error_;
  // Nothing is left beside the two job folders.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(mps_))
    entries += e.path().filename().string().rfind("job-", 0) == 0 ? 1 : 100;
  EXPECT_EQ(entries, 2);
}

// What the squatter's folder holds of a third user is never entered: it
// stays (renamed aside, named in the note) and the job still gets its folder.
TEST_F(JobDirsTest, ASquatHoldingAnotherUsersFolderStillFreesTheName) {
  MakeDir(mps_, 0, 01777);
  MakeDir(mps_ / "job-5", kOther, 0777);
  MakeDir(mps_ / "job-5" / "theirs", kUser);
  Touch(mps_ / "job-5" / "theirs" / "data", kUser);
  ASSERT_TRUE(Make(5)) << error_;
  EXPECT_NE(note_.find("moved it aside"), std::string::npos) << note_;
  EXPECT_NE(note_.find("theirs"), std::string::npos) << note_;
  EXPECT_TRUE(JobDirsReady(mps_, 5, kUser, &error_)) << error_;
  bool kept = false;
  for (const auto& e : fs::directory_iterator(mps_)) kept |= fs::exists(e.path() / "theirs" / "data");
  EXPECT_TRUE(kept);
}

// N2, the step's side: it points tasks only at folders the prolog made.
TEST_F(JobDirsTest, TheStepUsesOnlyWhatThePrologMade) {
  std::string why;
  ASSERT_TRUE(Make(8)) << error_;
  EXPECT_TRUE(JobDirsReady(mps_, 8, kUser, &why)) << why;
  EXPECT_TRUE(ReadyAsUser(mps_, 8, kUser));
  EXPECT_FALSE(JobDirsReady(mps_, 8, kOther, &why));  // another user's job
  EXPECT_FALSE(JobDirsReady(mps_, 9, kUser, &why));
  EXPECT_TRUE(why.empty()) << why;  // no folder: no daemon, nothing to say
  EXPECT_FALSE(JobDirsReady(root_ / "missing", 8, kUser, &why));
  EXPECT_TRUE(why.empty()) << why;  // no mps_dir (mps=auto, no GPU job yet): the same

  // A job folder the prolog did not make (it refused or failed).
  MakeDir(mps_ / "job-10", kOther, 0755);
  MakeDir(mps_ / "job-10" / "pipe", kUser, 0700);
  MakeDir(mps_ / "job-10" / "log", kUser, 0700);
  EXPECT_FALSE(JobDirsReady(mps_, 10, kUser, &why));
  EXPECT_NE(why.find("someone else made it"), std::string::npos) << why;
  EXPECT_FALSE(ReadyAsUser(mps_, 10, kUser));

  // A link, another mode, another owner below a folder of root's.
  for (int c = 0; c < 3; ++c) {
    ASSERT_TRUE(Make(11)) << error_;
    const fs::path pipe = mps_ / "job-11" / "pipe";
    if (c == 0) {
      ASSERT_EQ(rmdir(pipe.c_str()), 0);
      fs::create_symlink(root_, pipe);
    } else if (c == 1) {
      ASSERT_EQ(chmod(pipe.c_str(), 0755), 0);
    } else {
      ASSERT_EQ(chown(pipe.c_str(), kOther, kOther), 0);
    }
    EXPECT_FALSE(JobDirsReady(mps_, 11, kUser, &why)) << c;
    EXPECT_FALSE(why.empty()) << c;
    ASSERT_EQ(chmod((mps_ / "job-11").c_str(), 0700), 0);
    EXPECT_FALSE(JobDirsReady(mps_, 11, kUser, &why)) << c;
    fs::remove_all(mps_ / "job-11");
  }
}

// N10: mps_dir itself, or a folder on the way to it, is a link: refused
// with the fix, nothing made where it points.
TEST_F(JobDirsTest, RefusesAnMpsDirReachedThroughALink) {
  const fs::path real = root_ / "real";
  MakeDir(real, 0);
  fs::create_symlink(real, mps_);
  EXPECT_FALSE(Make(1));
  EXPECT_NE(error_.find("symbolic link"), std::string::npos) << error_;
  EXPECT_NE(error_.find("mps_dir=" + real.string()), std::string::npos) << error_;
  EXPECT_FALSE(fs::exists(real / "job-1"));
  fs::create_symlink(root_, root_ / "via");
  EXPECT_FALSE(MakeJobDirs(root_ / "via" / "real", 1, kUser, kGroup, &error_, &note_));
  EXPECT_NE(error_.find(root_.string() + "/via is a symbolic link"), std::string::npos) << error_;
  EXPECT_FALSE(fs::exists(real / "job-1"));
  // The step and the epilog refuse it too.
  ASSERT_TRUE(MakeJobDirs(real, 1, kUser, kGroup, &error_, &note_)) << error_;
  EXPECT_FALSE(IsOwnJobDir(mps_, 1, kUser));
  EXPECT_FALSE(JobDirsReady(mps_, 1, kUser, &error_));
  EXPECT_TRUE(error_.empty()) << error_;  // the prolog said why, once
  EXPECT_FALSE(RemoveJobDirs(mps_, 1, kUser, &error_));
  EXPECT_TRUE(fs::exists(real / "job-1"));
}

// A folder on the way that a user may change could be swapped for a link.
TEST_F(JobDirsTest, RefusesAnMpsDirBelowAUsersFolder) {
  MakeDir(root_ / "theirs", kUser);
  EXPECT_FALSE(MakeJobDirs(root_ / "theirs" / "mps", 1, kUser, kGroup, &error_, &note_));
  EXPECT_NE(error_.find("lies below " + (root_ / "theirs").string()), std::string::npos) << error_;
  EXPECT_FALSE(fs::exists(root_ / "theirs" / "mps"));
}

// N11: whatever the job leaves in its folders, the epilog removes all of
// it, follows no link, and names what it cannot remove.
TEST_F(JobDirsTest, TheEpilogRemovesEverythingTheJobLeft) {
  ASSERT_TRUE(Make(6)) << error_;
  const fs::path pipe = mps_ / "job-6" / "pipe", log = mps_ / "job-6" / "log";
  const fs::path outside = root_ / "outside";
  MakeDir(outside, 0);
  Touch(outside / "keep");
  Touch(pipe / "control.log", kUser);
  fs::create_symlink(outside, pipe / "to-outside");
  fs::create_symlink(outside / "keep", log / "to-file");
  ASSERT_EQ(mkfifo((pipe / "fifo").c_str(), 0600), 0);
  MakeDir(pipe / "locked", kUser, 0700);
  Touch(pipe / "locked" / "f", kUser);
  ASSERT_EQ(chmod((pipe / "locked").c_str(), 0), 0);
  ASSERT_EQ(chmod(log.c_str(), 0), 0);
  // Deeper than any descriptor chain the removal keeps.
  fs::path deep = pipe;
  for (int i = 0; i < 100; ++i) {
    deep /= "d";
    MakeDir(deep, kUser, 0500);
    if (i % 10 == 0) Touch(deep / "f", kUser);
  }
  ASSERT_TRUE(RemoveJobDirs(mps_, 6, kUser, &error_)) << error_;
  EXPECT_FALSE(fs::exists(mps_ / "job-6"));
  EXPECT_TRUE(fs::exists(outside / "keep"));
  EXPECT_EQ(Lstat(outside).mode, 0755u);
  EXPECT_TRUE(fs::is_empty(mps_));
}

// A root-owned job-ID whose pipe/ is another user's (a leftover of an earlier
// job with the same ID): the prolog refuses it, the step does not use it, and
// this job's epilog leaves it to the admin.
TEST_F(JobDirsTest, ALeftoverOfAnotherUsersJobIsNotThisJobs) {
  MakeDir(mps_, 0, 0755);
  MakeDir(mps_ / "job-9", 0, 0711);
  MakeDir(mps_ / "job-9" / "pipe", kOther, 0700);
  MakeDir(mps_ / "job-9" / "log", kOther, 0700);
  Touch(mps_ / "job-9" / "pipe" / "control", kOther);
  EXPECT_FALSE(Make(9));
  EXPECT_FALSE(JobDirsReady(mps_, 9, kUser, &error_));
  EXPECT_FALSE(IsOwnJobDir(mps_, 9, kUser));
  EXPECT_TRUE(IsOwnJobDir(mps_, 9, kOther));
  EXPECT_FALSE(RemoveJobDirs(mps_, 9, kUser, &error_));
  EXPECT_NE(error_.find("not a folder the prolog made for uid 65534"), std::string::npos) << error_;
  EXPECT_TRUE(fs::exists(mps_ / "job-9" / "pipe" / "control"));
}

TEST_F(JobDirsTest, TheEpilogNamesWhatItLeaves) {
  ASSERT_TRUE(Make(7)) << error_;
  const fs::path foreign = mps_ / "job-7" / "pipe" / "foreign";
  MakeDir(foreign, kOther);  // moved in from elsewhere: not the job user's
  Touch(foreign / "data", kOther);
  EXPECT_FALSE(RemoveJobDirs(mps_, 7, kUser, &error_));
  EXPECT_NE(error_.find("cannot remove all of " + (mps_ / "job-7").string()), std::string::npos) << error_;
  EXPECT_NE(error_.find("job-7/pipe/foreign (a folder of uid 65533"), std::string::npos) << error_;
  EXPECT_TRUE(fs::exists(foreign / "data"));
}

TEST_F(JobDirsTest, AnEmptyLeftoverOfAnEarlierPrologIsReplaced) {
  ASSERT_TRUE(Make(4)) << error_;
  ASSERT_TRUE(Make(4)) << error_;
  EXPECT_EQ(Lstat(mps_ / "job-4/pipe").uid, kUser);
  // Not empty: it may serve the live daemon of another node that shares
  // mps_dir, so it is refused with the fix, not removed.
  {
    FILE* f = std::fopen((mps_ / "job-4/log/control.log").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  EXPECT_FALSE(Make(4));
  EXPECT_NE(error_.find("rm -r " + (mps_ / "job-4").string()), std::string::npos) << error_;
  EXPECT_NE(error_.find("%h"), std::string::npos) << error_;
  EXPECT_TRUE(fs::exists(mps_ / "job-4/log/control.log"));
}

}  // namespace
}  // namespace multilane_spank
