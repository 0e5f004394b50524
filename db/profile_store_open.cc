// profile_store_open.cc: ProfileStore::Open (profile_store.h): the file
// checks before SQLite sees the path, the connection, and for writers the
// journal mode and the schema.
#include "db/profile_store.h"

#include <errno.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <thread>

#include "db/schema.h"
#include "db/snapshot.h"
#include "db/sql.h"

namespace mldb {

using sql::ClearError;
using sql::DbError;
using sql::Prefix;
using sql::SetError;

namespace {

// Creates the folders above `path` (0755).  On failure sets *error.
bool MakeParents(const std::string& path, std::string* error) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    std::string dir = path.substr(0, pos);
    if (dir.empty() || dir.back() == '/') continue;
    struct stat st;
    if (stat(dir.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        SetError(error, Prefix(path) + "cannot create the database: " + dir +
                            " is a file, not a folder; choose another path (MULTILANE_USER_DB / "
                            "MULTILANE_SYSTEM_DB) or move " +
                            dir + " away");
        return false;
      }
      continue;
    }
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      SetError(error, Prefix(path) + "cannot create folder " + dir + ": " + std::strerror(errno) +
                          "; choose another path (MULTILANE_USER_DB / MULTILANE_SYSTEM_DB) or "
                          "create the folder with write access for you");
      return false;
    }
  }
  return true;
}

// A database file that does not exist yet needs a folder we may write (SQLite
// would say "No such file or directory").  On failure sets *error.
bool CanCreateIn(const std::string& path, std::string* error) {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) return true;
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::access(dir.c_str(), W_OK | X_OK) == 0) return true;
  SetError(error, Prefix(path) + "cannot create the database in " + dir + ": " + std::strerror(errno) +
                      "; choose another path (MULTILANE_USER_DB / MULTILANE_SYSTEM_DB) or give yourself "
                      "write access to the folder");
  return false;
}

// What the file at `path` must be before SQLite opens it: not a folder, for
// writers not a published snapshot, for readers present and not empty.
// Writers get the missing folders created.  On failure sets *error.
bool CheckPath(const std::string& path, bool rw, std::string* error) {
  if (rw && !MakeParents(path, error)) return false;
  if (rw && !CanCreateIn(path, error)) return false;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      SetError(error, Prefix(path) + "is a folder, not a database file; " + sql::kForeignFix);
      return false;
    }
    if (rw && IsPublishedSnapshot(path)) {
      SetError(error, Prefix(path) + "a published snapshot, never written in place; write its working copy " +
                          WorkingCopyPath(path) +
                          " (`multilane tune --system` / `import --system` do) and "
                          "publish again (docs/admin.md, \"The system database on a shared file system\")");
      return false;
    }
    if (!rw && st.st_size == 0) {
      SetError(error, Prefix(path) +
                          "the file is empty: it holds no multilane profiles yet; run `multilane "
                          "tune` to create them (or remove the empty file)");
      return false;
    }
  } else if (!rw) {
    SetError(error, Prefix(path) + "no such file (" + std::strerror(errno) +
                        "); run `multilane tune` to create it, or check the path");
    return false;
  }
  return true;
}

std::string UriEscape(const std::string& path) {
  std::string out = "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Opens the connection and reads the schema (*version, *tables).  On a
// read-only WAL database whose -shm cannot be created (a folder the reader
// may not write), reopens immutable.  A published snapshot is never changed
// in place: immutable at once.  nullptr with *error set on failure.
sqlite3* Connect(const std::string& path, bool rw, int* version, std::set<std::string>* tables, std::string* error) {
  const bool snapshot = !rw && IsPublishedSnapshot(path);
  for (int attempt = snapshot ? 1 : 0; attempt < 2; ++attempt) {
    const bool immutable = attempt == 1;
    int flags = rw ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    flags |= SQLITE_OPEN_FULLMUTEX;
    std::string name = path;
    if (immutable) {
      flags |= SQLITE_OPEN_URI;
      name = UriEscape(path) + "?immutable=1";
    }
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
    if (rc == SQLITE_OK) {
      sqlite3_extended_result_codes(db, 1);
      sqlite3_busy_timeout(db, sql::kBusyTimeoutMs);
      tables->clear();
      rc = sql::ReadSchema(db, version, tables);
    }
    if (rc == SQLITE_OK) return db;
    std::string message = DbError(path, db, rc, "opening");
    sqlite3_close_v2(db);
    if (!rw && !immutable && ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY) &&
        !FileExists(path + "-wal")) {
      continue;
    }
    SetError(error, message);
    return nullptr;
  }
  return nullptr;
}

// A writer's connection: the journal mode, foreign keys.  On failure sets
// *error.
bool SetUpWriter(sqlite3* db, const std::string& path, ProfileStore::Journal journal, std::string* error) {
  // Switching the journal mode does not wait in the busy handler: a second
  // writer creating the same new database at the same moment gets
  // SQLITE_BUSY at once, so wait and retry here (up to about 10 s).
  const bool wal_mode = journal == ProfileStore::Journal::kWal;
  for (int attempt = 0;; ++attempt) {
    sql::Stmt mode(db, wal_mode ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=DELETE");
    int rc = mode.Step();
    if (rc == SQLITE_ROW) break;
    if (!sql::IsBusy(rc) || attempt >= 500)
      return SetError(error, DbError(path, db, rc, wal_mode ? "turning on WAL" : "turning on the rollback journal"));
    std::this_thread::sleep_for(std::chrono::milliseconds(10 + attempt % 11));
  }
  // Keep -wal and -shm after the last writer closes, so that readers who may
  // not write the folder can still open the database.
  int persist = 1;
  if (wal_mode) sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  int rc = sqlite3_exec(db, "PRAGMA foreign_keys=ON", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SetError(error, DbError(path, db, rc, "turning on foreign keys"));
  return true;
}

}  // namespace

std::unique_ptr<ProfileStore> ProfileStore::Open(const std::string& path, Access access, std::string* error,
                                                 Journal journal) {
  std::string local_error;
  if (error == nullptr) error = &local_error;
  ClearError(error);
  if (path.empty()) {
    SetError(error, "profile database: no path given; set MULTILANE_USER_DB or HOME");
    return nullptr;
  }
  const bool rw = access == Access::kReadWrite;
  if (!CheckPath(path, rw, error)) return nullptr;
  int version = 0;
  std::set<std::string> tables;
  sqlite3* db = Connect(path, rw, &version, &tables, error);
  if (db == nullptr) return nullptr;
  const bool ok = sql::CheckSchema(path, version, tables, rw, error) &&
                  (!rw || (SetUpWriter(db, path, journal, error) && sql::MigrateSchema(db, path, error)));
  if (!ok) {
    sqlite3_close_v2(db);
    return nullptr;
  }
  return std::unique_ptr<ProfileStore>(new ProfileStore(path, access, db));
}

}  // namespace mldb
