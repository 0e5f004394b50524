#include "job_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace multilane_spank {
namespace {

constexpr const char* kChildren[] = {"pipe", "log"};
constexpr int kOpenDir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// A descriptor that closes itself.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Opens the admin's mps_dir (made 0755 root:root if missing) and checks that
// users cannot replace what the prolog makes in it.  mps_dir itself is the
// admin's path and may be reached through links the admin set up.
int OpenMpsDir(const std::string& mps_dir, std::string* error) {
  int fd = open(mps_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    if (mkdir(mps_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = Errno("cannot create mps_dir " + mps_dir);
      return -1;
    }
    fd = open(mps_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    // Only a folder this call made gets its mode set (the umask may have cut it).
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == 0 && (st.st_mode & 07777) != 0755) fchmod(fd, 0755);
  }
  if (fd < 0) {
    *error = Errno("cannot open mps_dir " + mps_dir);
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = Errno("cannot stat mps_dir " + mps_dir);
    close(fd);
    return -1;
  }
  if (st.st_uid != 0) {
    *error = "mps_dir " + mps_dir + " is owned by uid " + std::to_string(st.st_uid) +
             ", not root: name a folder root owns in plugstack.conf (mps_dir=)";
    close(fd);
    return -1;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    *error = "mps_dir " + mps_dir + " may be written by other users and has no sticky bit: chmod 0755 " + mps_dir +
             " (or chmod +t)";
    close(fd);
    return -1;
  }
  return fd;
}

// Whether the entry `name` below `dir` is a real folder owned by root.
bool RootFolderAt(int dir, const char* name) {
  Fd fd(openat(dir, name, kOpenDir));
  struct stat st;
  return fd.ok() && fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0;
}

// Makes `name` below `dir` (a folder only root can write) and hands it to
// the user, through a descriptor that cannot be a link.
bool MakeChild(int dir, const char* name, uid_t uid, gid_t gid) {
  if (mkdirat(dir, name, 0700) != 0) return false;
  Fd fd(openat(dir, name, kOpenDir));
  return fd.ok() && fchown(fd.get(), uid, gid) == 0 && fchmod(fd.get(), 0700) == 0;
}

// Removes job-ID's two children (empty) and job-ID itself below `parent`.
bool RemoveAt(int parent, const std::string& name, std::string* error) {
  Fd job(openat(parent, name.c_str(), kOpenDir));
  if (!job.ok()) {
    *error = Errno("cannot open " + name);
    return false;
  }
  struct stat st;
  if (fstat(job.get(), &st) != 0 || st.st_uid != 0) {
    *error = name + " is not a folder root made; left alone";
    return false;
  }
  for (const char* child : kChildren) {
    if (unlinkat(job.get(), child, AT_REMOVEDIR) != 0 && errno != ENOENT) {
      *error = Errno("cannot remove " + name + "/" + child);
      return false;
    }
  }
  if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) {
    *error = Errno("cannot remove " + name);
    return false;
  }
  return true;
}

}  // namespace

std::string JobDirName(uint32_t job) { return "job-" + std::to_string(job); }

bool MakeJobDirs(const std::string& mps_dir, uint32_t job, uid_t uid, gid_t gid, std::string* error) {
  Fd parent(OpenMpsDir(mps_dir, error));
  if (!parent.ok()) return false;
  const std::string name = JobDirName(job);
  const std::string where = mps_dir + "/" + name;
  if (mkdirat(parent.get(), name.c_str(), 0700) != 0) {
    if (errno != EEXIST) {
      *error = Errno("cannot create " + where);
      return false;
    }
    // A leftover of an earlier prolog of this job (its epilog did not run to
    // the end) is replaced; anything else in its place is refused.
    std::string why;
    if (!RootFolderAt(parent.get(), name.c_str()) || !RemoveAt(parent.get(), name, &why) ||
        mkdirat(parent.get(), name.c_str(), 0700) != 0) {
      *error = where + " exists already and is not an empty folder of an earlier prolog" +
               (why.empty() ? std::string() : " (" + why + ")") + "; remove it";
      return false;
    }
  }
  // From here job-ID is root's and 0700: nobody else can touch its entries.
  bool ok = false;
  {
    Fd dir(openat(parent.get(), name.c_str(), kOpenDir));
    struct stat st;
    if (!dir.ok() || fstat(dir.get(), &st) != 0 || st.st_uid != 0) {
      *error = Errno("cannot open the new " + where);
    } else {
      ok = true;
      for (const char* child : kChildren) {
        if (!MakeChild(dir.get(), child, uid, gid)) {
          *error = Errno("cannot create " + where + "/" + child + " for uid " + std::to_string(uid));
          ok = false;
          break;
        }
      }
      // Users may pass through job-ID to their pipe/ and log/, nothing more.
      if (ok && (fchown(dir.get(), 0, 0) != 0 || fchmod(dir.get(), 0711) != 0)) {
        *error = Errno("cannot set the mode of " + where);
        ok = false;
      }
    }
  }
  if (!ok) {
    std::string ignored;
    RemoveAt(parent.get(), name, &ignored);
  }
  return ok;
}

bool IsOwnJobDir(const std::string& mps_dir, uint32_t job) {
  Fd parent(open(mps_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return parent.ok() && RootFolderAt(parent.get(), JobDirName(job).c_str());
}

bool RemoveJobDirs(const std::string& mps_dir, uint32_t job, std::string* error) {
  Fd parent(open(mps_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent.ok()) {
    *error = Errno("cannot open mps_dir " + mps_dir);
    return false;
  }
  const bool ok = RemoveAt(parent.get(), JobDirName(job), error);
  if (!ok) *error = mps_dir + "/" + *error;
  return ok;
}

}  // namespace multilane_spank
