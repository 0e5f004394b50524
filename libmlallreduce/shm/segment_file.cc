#include "libmlallreduce/shm/segment_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>

namespace mla::lib {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

unsigned long long RandomWord() {
  std::random_device device;  // the kernel's random bytes
  return (static_cast<unsigned long long>(device()) << 32) ^ device();
}

// Maps `fd` (of `bytes` bytes) shared and writable.
bool MapFd(int fd, size_t bytes, SegmentMap* out, std::string* error) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    *error = Errno("mmap of the shared-memory segment failed");
    return false;
  }
  out->base = p;
  out->bytes = bytes;
  return true;
}

// Reserves the segment's pages now.  tmpfs (/dev/shm) gives a page on its
// first touch, and a full one then ends the toucher with SIGBUS, the user's
// job with it; posix_fallocate fails instead (ENOSPC), and the set-up falls
// back to the MPI node steps.  A file system without it (EOPNOTSUPP) keeps
// the old behaviour.
bool Reserve(int fd, const std::string& name, size_t bytes, std::string* error) {
  const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc == 0 || rc == EOPNOTSUPP || rc == EINVAL) return true;
  *error = "reserving " + std::to_string(bytes >> 10) + " KiB for the shared-memory segment " + name +
           " failed: " + std::strerror(rc) + " (/dev/shm is too small for this node's ranks: give it more room)";
  return false;
}

}  // namespace

std::string SegmentName(uid_t uid, pid_t pid, unsigned long long random) {
  char name[96];
  std::snprintf(name, sizeof name, "/%s%u-%d-%016llx", kSegmentPrefix, static_cast<unsigned>(uid),
                static_cast<int>(pid), random);
  return name;
}

bool ParseSegmentName(const std::string& name, uid_t* uid, pid_t* pid) {
  const char* s = name.c_str();
  if (*s == '/') ++s;
  const size_t prefix = sizeof kSegmentPrefix - 1;
  if (std::strncmp(s, kSegmentPrefix, prefix) != 0) return false;
  unsigned u = 0;
  int p = 0, used = 0;
  char random[17] = {0};
  if (std::sscanf(s + prefix, "%u-%d-%16[0-9a-f]%n", &u, &p, random, &used) != 3) return false;
  if (s[prefix + used] != '\0' || std::strlen(random) != 16 || p <= 0) return false;
  *uid = static_cast<uid_t>(u);
  *pid = static_cast<pid_t>(p);
  return true;
}

bool CreateSegment(size_t bytes, std::string* name, SegmentMap* out, std::string* error) {
  *name = SegmentName(geteuid(), getpid(), RandomWord());
  return CreateSegmentNamed(*name, bytes, out, error);
}

bool CreateSegmentNamed(const std::string& name, size_t bytes, SegmentMap* out, std::string* error) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = Errno("shm_open of " + name + " failed");
    return false;
  }
  bool ok = ftruncate(fd, static_cast<off_t>(bytes)) == 0;
  if (!ok) *error = Errno("sizing the shared-memory segment " + name + " failed");
  ok = ok && Reserve(fd, name, bytes, error);
  ok = ok && MapFd(fd, bytes, out, error);
  close(fd);
  if (!ok) UnlinkSegment(name);  // ours: O_EXCL made it
  return ok;
}

bool AttachSegment(const std::string& name, size_t bytes, SegmentMap* out, std::string* error) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) {
    *error = Errno("shm_open of " + name + " failed");
    return false;
  }
  struct stat st {};
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 0777) == 0600 &&
            static_cast<size_t>(st.st_size) == bytes;
  if (!ok) *error = "the shared-memory segment " + name + " is not this user's 0600 file of the size agreed";
  ok = ok && MapFd(fd, bytes, out, error);
  close(fd);
  return ok;
}

void UnlinkSegment(const std::string& name) { shm_unlink(name.c_str()); }

void UnmapSegment(SegmentMap* map) {
  if (map->base != nullptr) munmap(map->base, map->bytes);
  *map = SegmentMap{};
}

}  // namespace mla::lib
