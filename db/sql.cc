// sql.cc: the profile store's messages about SQLite results (sql.h).
#include "db/sql.h"

#include <cstring>
#include <ctime>

namespace mldb {
namespace sql {

const char kDamagedFix[] = "run `multilane doctor` (or move the file away to start a new database)";
const char kForeignFix[] =
    "point multilane at another file (MULTILANE_USER_DB / MULTILANE_SYSTEM_DB), or move this "
    "one away to start a new database";

bool SetError(std::string* error, const std::string& message) {
  if (error != nullptr) *error = message;
  return false;
}

void ClearError(std::string* error) {
  if (error != nullptr) error->clear();
}

std::string Prefix(const std::string& path) { return "profile database " + path + ": "; }

std::string DbError(const std::string& path, sqlite3* db, int rc, const std::string& doing) {
  std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  int sys = db != nullptr ? sqlite3_system_errno(db) : 0;
  if (sys != 0 && (rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB) {
    detail += std::string(", ") + std::strerror(sys);
  }
  std::string what;
  std::string fix = kDamagedFix;
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      what = "not a SQLite database (or damaged)";
      break;
    case SQLITE_CORRUPT:
      what = "the database is damaged or truncated";
      break;
    case SQLITE_CANTOPEN:
      what = "cannot open the file";
      fix = "check that the file and its folder exist and that you may read them (and write, to tune)";
      break;
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_READONLY:
      what = "the file is read-only for you";
      fix = "tune into your own database (MULTILANE_USER_DB) or ask the file's owner";
      break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      what = "another process kept the database locked for too long";
      fix = "try again; if it persists, look for a hung `multilane` process";
      break;
    case SQLITE_FULL:
      what = "the disk is full";
      fix = "free some space and try again";
      break;
    case SQLITE_IOERR:
      what = "I/O error";
      fix = "check the disk and file system, then " + std::string(kDamagedFix);
      break;
    default:
      what = "SQLite error";
      break;
  }
  return Prefix(path) + what + " (" + doing + ": " + detail + "); " + fix;
}

bool IsBusy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

}  // namespace sql
}  // namespace mldb
