// sql.h: the profile store's thin layer over SQLite (internal to db/):
// prepared statements and transactions that clean up after themselves, and
// the one-line messages that name the file, say what is wrong and end with
// the fix.  Every function returns SQLite result codes; none throws.
#ifndef MLDB_SQL_H_
#define MLDB_SQL_H_

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

namespace mldb {
namespace sql {

// The fix for a damaged file, and for a file that belongs to another program.
extern const char kDamagedFix[];
extern const char kForeignFix[];

// How long one statement waits for another process's lock, and how many
// times a write transaction is tried (x the busy timeout: about 30 s in all).
constexpr int kBusyTimeoutMs = 10000;
constexpr int kWriteAttempts = 3;

// *error = message, when error is not null; false, so that a refusal reads
// `return SetError(error, "why");`.
bool SetError(std::string* error, const std::string& message);

// Clears *error, when error is not null.
void ClearError(std::string* error);

// "profile database PATH: ", the start of every message about that file.
std::string Prefix(const std::string& path);

// A message for SQLite result `rc` met while `doing` something with the file
// at `path` (db may be null): what is wrong with the file and the fix.
std::string DbError(const std::string& path, sqlite3* db, int rc, const std::string& doing);

// True when `rc` says that another connection holds the lock.
bool IsBusy(int rc);

// A prepared statement, finalized when it goes out of scope.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  int prepare_rc() const { return rc_; }
  void Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void BindDouble(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }
  // 0 / "" / negative stand for "none" in the structs and NULL in the table.
  void BindOptInt(int i, int64_t v) { v > 0 ? Bind(i, v) : BindNull(i); }
  void BindOptText(int i, const std::string& v) { v.empty() ? BindNull(i) : Bind(i, v); }
  void BindOptDouble(int i, double v) { v >= 0 ? BindDouble(i, v) : BindNull(i); }

  // Binds the field v (an empty optional as NULL), for tables read and
  // written field by field (Read below).
  void Put(int i, const std::string& v) { Bind(i, v); }
  void Put(int i, int v) { Bind(i, int64_t{v}); }
  void Put(int i, double v) { BindDouble(i, v); }
  void Put(int i, const std::optional<double>& v) { v ? BindDouble(i, *v) : BindNull(i); }

  int Step() { return stmt_ == nullptr ? rc_ : sqlite3_step(stmt_); }
  int Reset() { return sqlite3_reset(stmt_); }

  bool IsNull(int c) { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  int64_t Int(int c) { return sqlite3_column_int64(stmt_, c); }
  double Double(int c) { return sqlite3_column_double(stmt_, c); }
  // Column c into the field *v, the inverse of Put (NULL as an empty optional).
  void Read(int c, std::string* v) { *v = Text(c); }
  void Read(int c, int* v) { *v = static_cast<int>(Int(c)); }
  void Read(int c, double* v) { *v = Double(c); }
  void Read(int c, std::optional<double>* v) { *v = IsNull(c) ? std::nullopt : std::optional<double>(Double(c)); }
  std::string Text(int c) {
    const unsigned char* t = sqlite3_column_text(stmt_, c);
    return t == nullptr
               ? std::string()
               : std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, c)));
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

// Reads inside one transaction, so that the rows and their entries agree.
// rc: how BEGIN went; the transaction ends with the object.
struct ReadTransaction {
  explicit ReadTransaction(sqlite3* db) : db_(db) { rc = sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr); }
  ~ReadTransaction() {
    if (rc == SQLITE_OK && sqlite3_get_autocommit(db_) == 0) {
      sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    }
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

  sqlite3* db_;
  int rc;
};

// Runs body() inside BEGIN IMMEDIATE ... COMMIT, retrying the whole
// transaction while other writers hold the lock (kWriteAttempts times).
// body takes a std::string* message and returns a SQLite code; a non-busy
// failure with *message set by body is reported as is, any other as
// DbError(path, db, rc, doing).  Returns true on commit; else sets *error.
template <typename Body>
bool WriteTransaction(sqlite3* db, const std::string& path, const char* doing, Body body, std::string* error) {
  for (int attempt = 0;; ++attempt) {
    std::string message;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) {
      rc = body(&message);
      if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) return true;
      if (message.empty()) message = DbError(path, db, rc, doing);
      if (sqlite3_get_autocommit(db) == 0) {
        sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      }
    } else {
      message = DbError(path, db, rc, doing);
    }
    if (!IsBusy(rc) || attempt + 1 >= kWriteAttempts) {
      SetError(error, message);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * (attempt + 1)));
  }
}

}  // namespace sql
}  // namespace mldb

#endif  // MLDB_SQL_H_
