// snapshot.cc: publishing the working copy as a read-only snapshot
// (snapshot.h).
#include "db/snapshot.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "db/paths.h"
#include "vocab/atomic_file.h"

namespace mldb {
namespace {

std::string Folder(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool SyncPath(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}

// Copies database `from` (an open connection) into the file `to` with the
// backup API and leaves it in rollback-journal mode, marked `application_id`
// (0: unmarked).  Returns "" or what failed.
std::string CopyDatabase(sqlite3* from, const std::string& to, int32_t application_id) {
  sqlite3* dst = nullptr;
  int rc = sqlite3_open_v2(to.c_str(), &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::string failed;
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(dst, 10000);
    sqlite3_backup* b = sqlite3_backup_init(dst, "main", from, "main");
    if (b == nullptr) {
      failed = std::string("copying: ") + sqlite3_errmsg(dst);
    } else {
      // Busy or locked: another process is committing; wait (up to ~10 s).
      for (int attempt = 0; attempt < 1000; ++attempt) {
        rc = sqlite3_backup_step(b, -1);
        if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) break;
        usleep(10000);
      }
      const int finish = sqlite3_backup_finish(b);
      if (rc != SQLITE_DONE || finish != SQLITE_OK) failed = std::string("copying: ") + sqlite3_errmsg(dst);
    }
  } else {
    failed = std::string("creating ") + to + ": " + sqlite3_errstr(rc);
  }
  if (failed.empty()) {
    const std::string sql = "PRAGMA journal_mode=DELETE; PRAGMA application_id=" + std::to_string(application_id) + ";";
    char* message = nullptr;
    if (sqlite3_exec(dst, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK)
      failed = std::string("marking the copy: ") + (message ? message : "?");
    sqlite3_free(message);
  }
  if (sqlite3_close(dst) != SQLITE_OK && failed.empty()) failed = "closing the copy";
  return failed;
}

}  // namespace

bool IsPublishedSnapshot(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  unsigned char header[100];
  const bool read_ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                       pread(fd, header, sizeof header, 0) == static_cast<ssize_t>(sizeof header);
  close(fd);
  if (!read_ok || std::memcmp(header, "SQLite format 3", 16) != 0) return false;
  const uint32_t id =
      (uint32_t{header[68]} << 24) | (uint32_t{header[69]} << 16) | (uint32_t{header[70]} << 8) | uint32_t{header[71]};
  return id == static_cast<uint32_t>(kSnapshotApplicationId);
}

std::string WorkingCopyPath(const std::string& published) {
  const char* work = std::getenv("MULTILANE_SYSTEM_WORK_DB");
  if (work != nullptr && *work != '\0' && published == SystemDatabasePath()) return work;
  return published + ".work";
}

std::unique_ptr<ProfileStore> OpenWorkingCopy(const std::string& published, std::string* error) {
  const std::string work = WorkingCopyPath(published);
  struct stat st;
  if (stat(work.c_str(), &st) != 0 && stat(published.c_str(), &st) == 0 && st.st_size > 0) {
    // Start from what readers see today: open it read-only (which also
    // checks it) and copy it into a new working copy, renamed into place.
    auto source = ProfileStore::Open(published, ProfileStore::Access::kReadOnly, error);
    if (!source) return nullptr;
    const std::string failed =
        mla::ReplaceFileAtomically(work, [&](int, const std::string& tmp) { return source->CopyTo(tmp); });
    if (!failed.empty()) {
      *error = "profile database " + work + ": cannot start the working copy from " + published + " (" + failed +
               "); check the disk and that you may write its folder (or set MULTILANE_SYSTEM_WORK_DB)";
      return nullptr;
    }
  }
  return ProfileStore::Open(work, ProfileStore::Access::kReadWrite, error, ProfileStore::Journal::kRollback);
}

std::string ProfileStore::CopyTo(const std::string& to) {
  std::lock_guard<std::mutex> lock(mu_);
  return CopyDatabase(db_, to, 0);
}

bool ProfileStore::PublishSnapshot(const std::string& target, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto fail = [&](const std::string& what) {
    if (error != nullptr)
      *error = "profile database " + target + ": cannot publish " + path_ + " (" + what +
               "); check that you may write " + Folder(target) + " and that its disk has room, then publish again";
    return false;
  };
  if (access_ != Access::kReadWrite) return fail("the working copy is open read-only");
  // The write lock on the working copy: publishers take turns, and nobody
  // changes the copy while it is copied.
  int rc = SQLITE_BUSY;
  for (int attempt = 0; attempt < 3 && (rc & 0xff) == SQLITE_BUSY; ++attempt)
    rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return fail(std::string("locking the working copy: ") + sqlite3_errmsg(db_));
  const std::string failed = mla::ReplaceFileAtomically(target, [&](int, const std::string& tmp) {
    // The copy reads through a second connection: the backup API refuses a
    // source connection that holds a write transaction.  The write lock held
    // here lets readers in and keeps writers out, so it reads this moment's
    // whole database.
    sqlite3* src = nullptr;
    std::string why;
    if (sqlite3_open_v2(path_.c_str(), &src, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      why = std::string("reading the working copy: ") + (src ? sqlite3_errmsg(src) : "out of memory");
    } else {
      sqlite3_busy_timeout(src, 10000);
      why = CopyDatabase(src, tmp, kSnapshotApplicationId);
    }
    sqlite3_close(src);
    if (why.empty() && !SyncPath(tmp, O_RDONLY)) why = std::string("syncing: ") + std::strerror(errno);
    if (why.empty() && chmod(tmp.c_str(), 0644) != 0) why = std::string("chmod: ") + std::strerror(errno);
    return why;
  });
  if (failed.empty()) SyncPath(Folder(target), O_RDONLY | O_DIRECTORY);  // the rename itself, on disk
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  if (!failed.empty()) return fail(failed);
  if (error != nullptr) error->clear();
  return true;
}

}  // namespace mldb
