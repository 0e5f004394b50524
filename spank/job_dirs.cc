#include "spank/job_dirs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

#include "vocab/refuse.h"

namespace multilane_spank {
namespace {

constexpr const char* kChildren[] = {"pipe", "log"};
constexpr int kOpenDir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kOpenPath = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kMaxDepth = 32;          // deeper folders are moved up (RemoveTree)
constexpr size_t kListBatch = 4096;    // names read per pass of one folder
constexpr long kMaxEntries = 1 << 20;  // work limit of one RemoveTree
constexpr int kMakeAttempts = 3;       // a squatter re-making job-ID between our rename and mkdir

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
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string Octal(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// A folder no user but root can change: root's, and writable by others only
// with the sticky bit (then nobody else may rename or remove root's entries).
bool RootGuarded(const struct stat& st) {
  return S_ISDIR(st.st_mode) && st.st_uid == 0 && ((st.st_mode & (S_IWGRP | S_IWOTH)) == 0 || (st.st_mode & S_ISVTX));
}

// The fix for a path through links: the same folder, named without them
// (a missing last component is resolved through its parent).
std::string FixRealFolder(const std::string& mps_dir) {
  char real[PATH_MAX];
  std::string target = "the folder it leads to";
  const size_t slash = mps_dir.find_last_of('/');
  if (realpath(mps_dir.c_str(), real)) {
    target = real;
  } else if (slash != std::string::npos && slash > 0 && realpath(mps_dir.substr(0, slash).c_str(), real)) {
    target = std::string(real) + mps_dir.substr(slash);
  }
  return "name the real folder in plugstack.conf (mps_dir=" + target + ")";
}

// Why `name` below `dir` could not be opened as a folder: a link gets its
// own message, the rest their errno.
std::string OpenFailure(int dir, const std::string& name, const std::string& path, const std::string& mps_dir) {
  const int saved = errno;
  struct stat st;
  if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    return "mps_dir " + mps_dir + ": " + path +
           " is a symbolic link, which the plugin does not follow: " + FixRealFolder(mps_dir);
  }
  errno = saved;
  return Errno("cannot open " + path + " (mps_dir " + mps_dir + ")");
}

// Checks one folder on the way to mps_dir (or mps_dir itself, `last`).
bool CheckAdminFolder(const struct stat& st, const std::string& path, bool last, const std::string& mps_dir,
                      std::string* error) {
  if (RootGuarded(st)) return true;
  if (last && st.st_uid != 0) {
    *error = "mps_dir " + mps_dir + " is owned by uid " + std::to_string(st.st_uid) +
             ", not root: name a folder root owns in plugstack.conf (mps_dir=)";
  } else if (last) {
    *error = "mps_dir " + mps_dir + " may be written by other users and has no sticky bit: chmod 0755 " + mps_dir +
             " (or chmod +t)";
  } else {
    *error = "mps_dir " + mps_dir + " lies below " + path + " (uid " + std::to_string(st.st_uid) + ", mode " +
             Octal(st.st_mode) + "), which a user other than root may change: name a folder whose parents only root " +
             "can change in plugstack.conf (mps_dir=)";
  }
  return false;
}

// Makes the missing last component of mps_dir (0755 root:root) below `dir`.
// False with the reason in *error when it can neither make it nor find it
// made meanwhile (which is then checked like any other).
bool MakeMpsDir(int dir, const std::string& name, const std::string& mps_dir, std::string* error) {
  if (mkdirat(dir, name.c_str(), 0755) != 0) {
    if (errno == EEXIST) return true;
    return mla::Refuse(error, Errno("cannot create mps_dir " + mps_dir));
  }
  Fd fd(openat(dir, name.c_str(), kOpenDir));
  // Only a folder this call made gets its mode set (the umask may have cut it).
  if (fd.ok()) fchmod(fd.get(), 0755);
  return true;
}

// Opens the admin's mps_dir (absolute) from "/" one component at a time,
// never through a link, each folder checked by CheckAdminFolder; with
// `create`, a missing last component is made.  An O_PATH descriptor (usable
// as the dirfd of the *at calls), or -1 with the reason in *error.
int OpenMpsDir(const std::string& mps_dir, bool create, std::string* error) {
  if (mps_dir.empty() || mps_dir[0] != '/') {
    *error = "mps_dir '" + mps_dir + "' is not an absolute path: name one in plugstack.conf (mps_dir=)";
    return -1;
  }
  std::vector<std::string> parts;
  for (size_t at = 0; at < mps_dir.size();) {
    const size_t end = std::min(mps_dir.find('/', at), mps_dir.size());
    const std::string part = mps_dir.substr(at, end - at);
    if (part == "..") {
      *error = "mps_dir " + mps_dir + " holds '..': " + FixRealFolder(mps_dir);
      return -1;
    }
    if (!part.empty() && part != ".") parts.push_back(part);
    at = end + 1;
  }
  Fd cur(open("/", kOpenPath));
  std::string path;
  struct stat st;
  if (!cur.ok() || fstat(cur.get(), &st) != 0) {
    *error = Errno("cannot open /");
    return -1;
  }
  if (!CheckAdminFolder(st, "/", parts.empty(), mps_dir, error)) return -1;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    path += "/" + parts[i];
    Fd next(openat(cur.get(), parts[i].c_str(), kOpenPath));
    if (!next.ok() && errno == ENOENT && last && create) {
      if (!MakeMpsDir(cur.get(), parts[i], mps_dir, error)) return -1;
      next.reset(openat(cur.get(), parts[i].c_str(), kOpenPath));
    }
    if (!next.ok()) {
      *error = OpenFailure(cur.get(), parts[i], path, mps_dir);
      return -1;
    }
    if (fstat(next.get(), &st) != 0) {
      *error = Errno("cannot stat " + path);
      return -1;
    }
    if (!CheckAdminFolder(st, path, last, mps_dir, error)) return -1;
    cur.reset(next.release());
  }
  return cur.release();
}

// Removes the entries of one tree (RemoveTree); what it could not remove is
// collected for one line.
class Remover {
 public:
  Remover(uid_t owner, dev_t dev, int top) : owner_(owner), dev_(dev), top_(top) {}

  // Removes every entry of the folder `fd` (at `path`, `depth` below the top).
  bool Empty(int fd, const std::string& path, int depth) {
    std::set<std::string> kept;
    for (;;) {
      const std::vector<std::string> names = List(fd, kept);
      if (names.empty()) return kept.empty();
      if (budget_ <= 0) return Keep(path, "more entries than one removal handles");
      bool progress = false;
      for (const std::string& name : names) {
        if (Entry(fd, name, path + "/" + name, depth)) {
          progress = true;
        } else {
          kept.insert(name);
        }
      }
      if (!progress) return false;
    }
  }

  // One line: the first few paths left and why.
  std::string Left() const {
    std::string line;
    for (size_t i = 0; i < left_.size() && i < 3; ++i) line += (i ? ", " : "") + left_[i];
    if (left_.size() > 3) line += " and " + std::to_string(left_.size() - 3) + " more";
    return line;
  }

  bool Keep(const std::string& path, const std::string& why) {
    left_.push_back(path + " (" + why + ")");
    return false;
  }

 private:
  static std::vector<std::string> List(int fd, const std::set<std::string>& skip) {
    std::vector<std::string> names;
    const int copy = dup(fd);
    DIR* dir = copy >= 0 ? fdopendir(copy) : nullptr;
    if (dir == nullptr) {
      if (copy >= 0) close(copy);
      return names;
    }
    rewinddir(dir);
    while (names.size() < kListBatch) {
      const struct dirent* e = readdir(dir);
      if (e == nullptr) break;
      const std::string name = e->d_name;
      if (name != "." && name != ".." && skip.count(name) == 0) names.push_back(name);
    }
    closedir(dir);
    return names;
  }

  bool Unlink(int dir, const std::string& name, int flags, const std::string& path) {
    if (unlinkat(dir, name.c_str(), flags) == 0 || errno == ENOENT) return true;
    return Keep(path, std::strerror(errno));
  }

  // A folder too deep for one more descriptor goes up to the top, under a
  // fresh name, and is emptied from there in a later pass.
  bool MoveUp(int dir, const std::string& name, const std::string& path) {
    const std::string fresh = ".deep-" + std::to_string(++moved_) + "-" + std::to_string(getpid());
    if (renameat2(dir, name.c_str(), top_, fresh.c_str(), RENAME_NOREPLACE) == 0) return true;
    return Keep(path, std::string("cannot move it up: ") + std::strerror(errno));
  }

  bool Entry(int dir, const std::string& name, const std::string& path, int depth) {
    --budget_;
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return errno == ENOENT || Keep(path, std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) return Unlink(dir, name, 0, path);  // a file, link, socket: only its name goes
    if (st.st_uid != owner_ || st.st_dev != dev_) {
      return Keep(path, "a folder of uid " + std::to_string(st.st_uid) + " or another file system, not entered");
    }
    if (depth >= kMaxDepth) return MoveUp(dir, name, path);
    Fd sub(openat(dir, name.c_str(), kOpenDir));
    struct stat now;
    if (!sub.ok() || fstat(sub.get(), &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev ||
        now.st_uid != owner_) {
      return Keep(path, "changed while it was being removed");
    }
    if ((now.st_mode & S_IRWXU) != S_IRWXU) fchmod(sub.get(), (now.st_mode & 07777) | S_IRWXU);
    Empty(sub.get(), path, depth + 1);
    return Unlink(dir, name, AT_REMOVEDIR, path);
  }

  uid_t owner_;
  dev_t dev_;
  int top_;
  long budget_ = kMaxEntries;
  unsigned moved_ = 0;
  std::vector<std::string> left_;
};

// Whether job-ID (`name` below `parent`) is what MakeJobDirs made for `uid`,
// whatever modes the user gave pipe/ and log/ since: a real folder of root's
// whose pipe/ and log/ are real folders of uid's (the user cannot change
// their owner, nor replace them in root's folder).
bool MadeFor(int parent, const std::string& name, uid_t uid) {
  Fd dir(openat(parent, name.c_str(), kOpenPath));
  struct stat st;
  if (!dir.ok() || fstat(dir.get(), &st) != 0 || st.st_uid != 0) return false;
  for (const char* child : kChildren) {
    Fd fd(openat(dir.get(), child, kOpenPath));
    if (!fd.ok() || fstat(fd.get(), &st) != 0 || st.st_uid != uid) return false;
  }
  return true;
}

// Makes `name` below `dir` (a folder only root can write) and hands it to
// the user, through a descriptor that cannot be a link.
bool MakeChild(int dir, const char* name, uid_t uid, gid_t gid) {
  if (mkdirat(dir, name, 0700) != 0) return false;
  Fd fd(openat(dir, name, kOpenDir));
  return fd.ok() && fchown(fd.get(), uid, gid) == 0 && fchmod(fd.get(), 0700) == 0;
}

// Removes an empty leftover of MakeJobDirs: job-ID's two children (empty)
// and job-ID itself below `parent`.
bool RemoveEmptyLeftover(int parent, const std::string& name, std::string* error) {
  Fd job(openat(parent, name.c_str(), kOpenDir));
  if (!job.ok()) return mla::Refuse(error, Errno("cannot open " + name));
  struct stat st;
  if (fstat(job.get(), &st) != 0 || st.st_uid != 0)
    return mla::Refuse(error, name + " is not a folder root made; left alone");
  for (const char* child : kChildren) {
    if (unlinkat(job.get(), child, AT_REMOVEDIR) != 0 && errno != ENOENT)
      return mla::Refuse(error, Errno("cannot remove " + name + "/" + child));
  }
  if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) return mla::Refuse(error, Errno("cannot remove " + name));
  return true;
}

// What someone else left at job-ID (a link, a file, a user's folder) is not
// ours: renamed aside at once (so the name is free whatever it holds) and
// removed as its owner could remove it.  *note says what happened.
bool MoveAsideAndRemove(int parent, const std::string& name, const std::string& mps_dir, std::string* error,
                        std::string* note) {
  const std::string aside = "." + name + ".stale-" + std::to_string(getpid()) + "-" + std::to_string(time(nullptr));
  const std::string where = mps_dir + "/" + name;
  if (renameat2(parent, name.c_str(), parent, aside.c_str(), RENAME_NOREPLACE) != 0)
    return mla::Refuse(error, Errno("cannot move aside " + where + ", which the prolog did not make") + "; remove it");
  struct stat st;
  const uid_t owner = fstatat(parent, aside.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_uid : 0;
  std::string left;
  *note = where + " was there before the prolog (uid " + std::to_string(owner) + "'s, not the prolog's): ";
  if (RemoveTree(parent, aside, owner, &left)) {
    *note += "removed it";
  } else {
    *note += "moved it aside to " + mps_dir + "/" + aside + " and could not remove all of it (left " + left +
             "): remove it by hand";
  }
  return true;
}

// Frees the name job-ID below `parent` for MakeJobDirs: an empty leftover of
// ours is removed, one holding files refused, anything else moved aside.
bool FreeJobName(int parent, const std::string& name, const std::string& mps_dir, std::string* error,
                 std::string* note) {
  struct stat st;
  if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    return mla::Refuse(error, Errno("cannot stat " + mps_dir + "/" + name));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0) return MoveAsideAndRemove(parent, name, mps_dir, error, note);
  std::string why;
  if (RemoveEmptyLeftover(parent, name, &why)) return true;
  // Root's with files in it: a leftover of this job whose epilog never ran,
  // or the live daemon of another node that shares mps_dir.
  const std::string where = mps_dir + "/" + name;
  return mla::Refuse(error, where + " exists already, a folder of an earlier prolog that still holds files (" + why +
                                "): if job " + name.substr(4) + " runs nowhere else, remove it (rm -r " + where +
                                "); nodes that share mps_dir need %h in it");
}

// Makes pipe/ and log/ in the new job-ID below `parent` and gives job-ID its
// final mode.
bool FillJobDir(int parent, const std::string& name, const std::string& where, uid_t uid, gid_t gid,
                std::string* error) {
  Fd dir(openat(parent, name.c_str(), kOpenDir));
  struct stat st;
  if (!dir.ok() || fstat(dir.get(), &st) != 0 || st.st_uid != 0)
    return mla::Refuse(error, Errno("cannot open the new " + where));
  for (const char* child : kChildren) {
    if (!MakeChild(dir.get(), child, uid, gid))
      return mla::Refuse(error, Errno("cannot create " + where + "/" + child + " for uid " + std::to_string(uid)));
  }
  // Users may pass through job-ID to their pipe/ and log/, nothing more.
  if (fchown(dir.get(), 0, 0) != 0 || fchmod(dir.get(), 0711) != 0)
    return mla::Refuse(error, Errno("cannot set the mode of " + where));
  return true;
}

// Checks one entry the step relies on: a real folder of `uid` with `mode`.
bool CheckMade(int dir, const std::string& name, const std::string& where, uid_t uid, mode_t mode, std::string* why) {
  Fd fd(openat(dir, name.c_str(), kOpenPath));
  struct stat st;
  if (!fd.ok() || fstat(fd.get(), &st) != 0) {
    *why =
        Errno(where + " is not a folder the prolog made") + "; the admin checks the prolog's lines in the slurmd log";
    return false;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 07777) != mode)
    return mla::Refuse(why, where + " is uid " + std::to_string(st.st_uid) + "'s with mode " + Octal(st.st_mode) +
                                ", not uid " + std::to_string(uid) + "'s " + Octal(mode) +
                                " as the prolog makes it: someone else made it; the admin " +
                                "removes it and checks the prolog's lines in the slurmd log");
  return true;
}

}  // namespace

std::string JobDirName(uint32_t job) { return "job-" + std::to_string(job); }

bool MakeJobDirs(const std::string& mps_dir, uint32_t job, uid_t uid, gid_t gid, std::string* error,
                 std::string* note) {
  error->clear();
  note->clear();
  Fd parent(OpenMpsDir(mps_dir, true, error));
  if (!parent.ok()) return false;
  const std::string name = JobDirName(job);
  const std::string where = mps_dir + "/" + name;
  for (int attempt = 0;; ++attempt) {
    if (!FreeJobName(parent.get(), name, mps_dir, error, note)) return false;
    if (mkdirat(parent.get(), name.c_str(), 0700) == 0) break;
    if (errno != EEXIST || attempt + 1 == kMakeAttempts) return mla::Refuse(error, Errno("cannot create " + where));
  }
  // From here job-ID is root's and 0700: nobody else can touch its entries.
  if (FillJobDir(parent.get(), name, where, uid, gid, error)) return true;
  std::string ignored;
  RemoveTree(parent.get(), name, uid, &ignored);
  return false;
}

bool IsOwnJobDir(const std::string& mps_dir, uint32_t job, uid_t uid) {
  std::string ignored;
  Fd parent(OpenMpsDir(mps_dir, false, &ignored));
  return parent.ok() && MadeFor(parent.get(), JobDirName(job), uid);
}

bool JobDirsReady(const std::string& mps_dir, uint32_t job, uid_t uid, std::string* why) {
  why->clear();
  // An mps_dir the prolog could not use holds nothing of its: it said why.
  std::string unusable;
  Fd parent(OpenMpsDir(mps_dir, false, &unusable));
  if (!parent.ok()) return false;
  const std::string name = JobDirName(job);
  const std::string where = mps_dir + "/" + name;
  struct stat st;
  if (fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) return false;
  if (!CheckMade(parent.get(), name, where, 0, 0711, why)) return false;
  Fd dir(openat(parent.get(), name.c_str(), kOpenPath));
  for (const char* child : kChildren) {
    if (!CheckMade(dir.get(), child, where + "/" + child, uid, 0700, why)) return false;
  }
  return true;
}

bool RemoveJobDirs(const std::string& mps_dir, uint32_t job, uid_t uid, std::string* error) {
  Fd parent(OpenMpsDir(mps_dir, false, error));
  if (!parent.ok()) return false;
  const std::string name = JobDirName(job);
  if (!MadeFor(parent.get(), name, uid))
    return mla::Refuse(error, mps_dir + "/" + name + " is not a folder the prolog made for uid " + std::to_string(uid) +
                                  "; left alone");
  std::string left;
  if (RemoveTree(parent.get(), name, uid, &left)) return true;
  return mla::Refuse(error, "cannot remove all of " + mps_dir + "/" + name + ": left " + left + " below " + mps_dir);
}

bool RemoveTree(int dir, const std::string& name, uid_t owner, std::string* left) {
  struct stat st;
  if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    return mla::Refuse(left, Errno(name));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (unlinkat(dir, name.c_str(), 0) == 0) return true;
    return mla::Refuse(left, Errno(name));
  }
  Fd top(openat(dir, name.c_str(), kOpenDir));
  struct stat now;
  if (!top.ok() || fstat(top.get(), &now) != 0 || now.st_ino != st.st_ino || (now.st_uid != 0 && now.st_uid != owner))
    return mla::Refuse(left, name + " (not a folder of root or of uid " + std::to_string(owner) + ")");
  if ((now.st_mode & S_IRWXU) != S_IRWXU) fchmod(top.get(), (now.st_mode & 07777) | S_IRWXU);
  Remover tree(owner, st.st_dev, top.get());
  tree.Empty(top.get(), name, 0);
  if (unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0) return true;
  tree.Keep(name, std::strerror(errno));
  return mla::Refuse(left, tree.Left());
}

}  // namespace multilane_spank
