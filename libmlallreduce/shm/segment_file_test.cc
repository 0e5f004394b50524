// The segment's file: private to its user, exclusive, never through a link,
// and stale names of dead creators removed.
#include "libmlallreduce/shm/segment_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "libmlallreduce/shm/stale_segments.h"

namespace mla::lib {
namespace {

bool InDevShm(const std::string& name) {
  struct stat st {};
  return lstat(("/dev/shm" + name).c_str(), &st) == 0;
}

TEST(ShmSegment, NameCarriesUidPidAndRandomBytes) {
  const std::string name = SegmentName(1234, 5678, 0xabcdef0123456789ull);
  EXPECT_EQ(name, "/mla-1234-5678-abcdef0123456789");
  uid_t uid = 0;
  pid_t pid = 0;
  ASSERT_TRUE(ParseSegmentName(name, &uid, &pid));
  EXPECT_EQ(uid, 1234u);
  EXPECT_EQ(pid, 5678);
  for (const char* bad : {"mla-1-2-abc", "mla-1-2-abcdef0123456789x", "other-1-2-abcdef0123456789", "mla-1--2-0"})
    EXPECT_FALSE(ParseSegmentName(bad, &uid, &pid)) << bad;
}

TEST(ShmSegment, CreatedPrivateAndExclusive) {
  std::string name, error;
  SegmentMap map;
  ASSERT_TRUE(CreateSegment(8192, &name, &map, &error)) << error;
  struct stat st {};
  ASSERT_EQ(lstat(("/dev/shm" + name).c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, geteuid());
  EXPECT_EQ(st.st_size, 8192);
  // O_EXCL: the name cannot be created a second time, and the file stays.
  SegmentMap again;
  EXPECT_FALSE(CreateSegmentNamed(name, 4096, &again, &error)) << "created over an existing segment";
  EXPECT_TRUE(InDevShm(name));
  // Another user cannot open it (checked where the test may change user).
  if (geteuid() == 0) {
    const pid_t child = fork();
    if (child == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
      const int fd = shm_open(name.c_str(), O_RDONLY, 0);
      _exit(fd < 0 && errno == EACCES ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "another uid could open the segment";
  }
  SegmentMap other;
  EXPECT_TRUE(AttachSegment(name, 8192, &other, &error)) << error;
  EXPECT_FALSE(AttachSegment(name, 4096, &other, &error)) << "a size other than the one agreed";
  UnlinkSegment(name);
  EXPECT_FALSE(InDevShm(name));
  UnmapSegment(&other);
  UnmapSegment(&map);
}

// A link planted at the name the creator will use: creating fails and
// nothing is created where the link points.
TEST(ShmSegment, CreateRefusesAPlantedLink) {
  const std::string name = SegmentName(geteuid(), getpid(), 3);
  const std::string target = "/dev/shm/mla-planted-target-" + std::to_string(getpid());
  ASSERT_EQ(symlink(target.c_str(), ("/dev/shm" + name).c_str()), 0);
  SegmentMap map;
  std::string error;
  EXPECT_FALSE(CreateSegmentNamed(name, 4096, &map, &error)) << "created through a link";
  struct stat st {};
  EXPECT_NE(lstat(target.c_str(), &st), 0) << "the link's target was created";
  unlink(("/dev/shm" + name).c_str());
  unlink(target.c_str());
}

TEST(ShmSegment, AttachRefusesLinksAndLooseModes) {
  const std::string target = SegmentName(geteuid(), getpid(), 1);
  const std::string link = SegmentName(geteuid(), getpid(), 2);
  const int fd = shm_open(target.c_str(), O_RDWR | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fchmod(fd, 0644), 0);
  ASSERT_EQ(ftruncate(fd, 4096), 0);
  close(fd);
  ASSERT_EQ(symlink(("/dev/shm" + target).c_str(), ("/dev/shm" + link).c_str()), 0);
  SegmentMap map;
  std::string error;
  EXPECT_FALSE(AttachSegment(link, 4096, &map, &error)) << "followed a link";
  EXPECT_FALSE(AttachSegment(target, 4096, &map, &error)) << "took a file of mode 0644";
  unlink(("/dev/shm" + link).c_str());
  UnlinkSegment(target);
}

TEST(ShmSegment, StaleNamesOfDeadCreatorsAreRemoved) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);  // its pid is gone now
  const std::string dead = SegmentName(geteuid(), child, 0x1111);
  const std::string alive = SegmentName(geteuid(), getpid(), 0x2222);
  for (const std::string& n : {dead, alive}) {
    const int fd = shm_open(n.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0) << n;
    close(fd);
  }
  EXPECT_GE(RemoveStaleSegments(), 1);
  EXPECT_FALSE(InDevShm(dead));
  EXPECT_TRUE(InDevShm(alive));
  UnlinkSegment(alive);
}

// A /dev/shm too small for the segment (a container's 64 MiB, many ranks):
// creating it fails and says why, instead of handing back pages whose first
// touch ends the process with SIGBUS (tmpfs gives pages on first touch).
// In a child with a mount namespace of its own and a 256 KiB /dev/shm.
TEST(ShmSegment, AFullDevShmRefusesTheSegmentInsteadOfFaultingLater) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: a mount namespace with a small /dev/shm of its own";
  const pid_t child = fork();
  if (child == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=256k") != 0)
      _exit(2);
    constexpr size_t kBytes = 4u << 20;
    SegmentMap map;
    std::string error;
    if (CreateSegmentNamed(SegmentName(geteuid(), getpid(), 7), kBytes, &map, &error)) {
      std::memset(map.base, 1, kBytes);  // without the reservation: SIGBUS here
      _exit(3);
    }
    _exit(error.find("No space left on device") != std::string::npos ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << "could not make a small /dev/shm";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "exit " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1) << ", signal "
      << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ": the segment was not refused";
}

}  // namespace
}  // namespace mla::lib
