// profile_store.cc: the SQLite profile store.
#include "db/profile_store.h"
#include "db/snapshot.h"

#include "vocab/outside_input.h"
#include "db/profile_check.h"

#include <errno.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <set>
#include <thread>
#include <utility>

namespace mldb {

bool ProfileEntryRow::operator==(const ProfileEntryRow& o) const {
  return mem_kind == o.mem_kind && min_bytes == o.min_bytes && max_bytes == o.max_bytes &&
         algo == o.algo && ppg == o.ppg && lanes == o.lanes && chunk_bytes == o.chunk_bytes &&
         transport == o.transport && time_us == o.time_us && mpi_time_us == o.mpi_time_us;
}

namespace {

constexpr char kDamagedFix[] =
    "run `multilane doctor` (or move the file away to start a new database)";
constexpr char kForeignFix[] =
    "point multilane at another file (MULTILANE_USER_DB / MULTILANE_SYSTEM_DB), or move this "
    "one away to start a new database";
constexpr int kBusyTimeoutMs = 10000;
constexpr int kWriteAttempts = 3;  // x the busy timeout: about 30 s in all

// Schema migrations: kMigrations[v] brings user_version v to v + 1.
const char* const kMigrations[] = {
    // 0 -> 1
    "CREATE TABLE node_types("
    "  key TEXT PRIMARY KEY NOT NULL,"
    "  description TEXT NOT NULL,"
    "  fingerprint_json TEXT NOT NULL,"
    "  first_seen TEXT NOT NULL);"
    "CREATE TABLE profiles("
    "  id INTEGER PRIMARY KEY,"
    "  node_type_key TEXT NOT NULL REFERENCES node_types(key),"
    "  partition TEXT NOT NULL DEFAULT '',"
    "  nodes INTEGER NOT NULL,"
    "  ranks_per_gpu INTEGER NOT NULL,"
    "  library_version TEXT NOT NULL,"
    "  mpi_version TEXT NOT NULL,"
    "  tuned_by TEXT NOT NULL,"
    "  tuned_at TEXT NOT NULL,"
    "  duration_s REAL NOT NULL,"
    "  profile_text TEXT NOT NULL,"
    "  complete INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX profiles_lookup ON profiles("
    "  node_type_key, library_version, mpi_version, partition, complete);"
    "CREATE TABLE profile_entries("
    "  profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,"
    "  mem_kind TEXT NOT NULL CHECK (mem_kind IN ('host', 'device')),"
    "  min_bytes INTEGER NOT NULL,"
    "  max_bytes INTEGER,"
    "  algo TEXT NOT NULL,"
    "  ppg INTEGER,"
    "  lanes INTEGER,"
    "  chunk_bytes INTEGER,"
    "  transport TEXT,"
    "  time_us REAL,"
    "  mpi_time_us REAL);"
    "CREATE INDEX profile_entries_profile ON profile_entries(profile_id);"
    "CREATE TABLE measurements("
    "  profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,"
    "  mem_kind TEXT NOT NULL CHECK (mem_kind IN ('host', 'device')),"
    "  bytes INTEGER NOT NULL,"
    "  candidate TEXT NOT NULL,"
    "  ppg INTEGER,"
    "  time_us REAL NOT NULL,"
    "  reps INTEGER NOT NULL);"
    "CREATE INDEX measurements_profile ON measurements(profile_id);",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion,
              "one migration per schema version");

const char* const kTables[] = {"node_types", "profiles", "profile_entries", "measurements"};

void SetError(std::string* error, const std::string& message) {
  if (error != nullptr) *error = message;
}

void ClearError(std::string* error) {
  if (error != nullptr) error->clear();
}

std::string Prefix(const std::string& path) { return "profile database " + path + ": "; }

// A message for SQLite result `rc`: what is wrong with the file and the fix.
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

std::string NowIso() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

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

  int Step() { return stmt_ == nullptr ? rc_ : sqlite3_step(stmt_); }
  int Reset() { return sqlite3_reset(stmt_); }

  bool IsNull(int c) { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  int64_t Int(int c) { return sqlite3_column_int64(stmt_, c); }
  double Double(int c) { return sqlite3_column_double(stmt_, c); }
  std::string Text(int c) {
    const unsigned char* t = sqlite3_column_text(stmt_, c);
    return t == nullptr ? std::string()
                        : std::string(reinterpret_cast<const char*>(t),
                                      static_cast<size_t>(sqlite3_column_bytes(stmt_, c)));
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

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
                            "MULTILANE_SYSTEM_DB) or move " + dir + " away");
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

// Reads PRAGMA user_version and the names of the tables.
int ReadSchema(sqlite3* db, int* version, std::set<std::string>* tables) {
  Stmt v(db, "PRAGMA user_version");
  int rc = v.Step();
  if (rc != SQLITE_ROW) return rc;
  *version = static_cast<int>(v.Int(0));
  Stmt t(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  if (t.prepare_rc() != SQLITE_OK) return t.prepare_rc();
  while ((rc = t.Step()) == SQLITE_ROW) tables->insert(t.Text(0));
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Checks a schema read by ReadSchema.  `fresh_ok`: version 0 without tables
// is acceptable (it will be migrated).
bool CheckSchema(const std::string& path, int version, const std::set<std::string>& tables,
                 bool fresh_ok, std::string* error) {
  if (version > kSchemaVersion) {
    SetError(error, Prefix(path) + "written by a newer multilane (schema version " +
                        std::to_string(version) + "; this multilane knows up to " +
                        std::to_string(kSchemaVersion) +
                        "); use the newer multilane (or move the file away to start a new "
                        "database)");
    return false;
  }
  if (version == 0) {
    if (!tables.empty()) {
      SetError(error, Prefix(path) + "not a multilane profile database (it holds tables " +
                          Join(tables) + "); " + kForeignFix);
      return false;
    }
    if (!fresh_ok) {
      SetError(error, Prefix(path) +
                          "empty: it holds no multilane profiles yet; run `multilane tune` to "
                          "create them (or remove the empty file)");
      return false;
    }
    return true;
  }
  for (const char* t : kTables) {
    if (tables.count(t) == 0) {
      SetError(error, Prefix(path) + "the table " + t + " is missing (schema version " +
                          std::to_string(version) + "); " + kDamagedFix);
      return false;
    }
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

}  // namespace

ProfileStore::ProfileStore(std::string path, Access access, sqlite3* db)
    : path_(std::move(path)), access_(access), db_(db) {}

ProfileStore::~ProfileStore() { sqlite3_close_v2(db_); }

std::unique_ptr<ProfileStore> ProfileStore::Open(const std::string& path, Access access,
                                                 std::string* error, Journal journal) {
  std::string local_error;
  if (error == nullptr) error = &local_error;
  ClearError(error);
  if (path.empty()) {
    SetError(error, "profile database: no path given; set MULTILANE_USER_DB or HOME");
    return nullptr;
  }
  const bool rw = access == Access::kReadWrite;
  if (rw && !MakeParents(path, error)) return nullptr;
  if (rw && !CanCreateIn(path, error)) return nullptr;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      SetError(error, Prefix(path) + "is a folder, not a database file; " + kForeignFix);
      return nullptr;
    }
    if (rw && IsPublishedSnapshot(path)) {
      SetError(error, Prefix(path) + "a published snapshot, never written in place; write its working copy " +
                          WorkingCopyPath(path) + " (`multilane tune --system` / `import --system` do) and "
                          "publish again (docs/admin.md, \"The system database on a shared file system\")");
      return nullptr;
    }
    if (!rw && st.st_size == 0) {
      SetError(error, Prefix(path) +
                          "the file is empty: it holds no multilane profiles yet; run `multilane "
                          "tune` to create them (or remove the empty file)");
      return nullptr;
    }
  } else if (!rw) {
    SetError(error, Prefix(path) + "no such file (" + std::strerror(errno) +
                        "); run `multilane tune` to create it, or check the path");
    return nullptr;
  }

  // Opens, tries a first read; on a read-only WAL database whose -shm cannot
  // be created (a folder the reader may not write), reopens immutable.  A
  // published snapshot is never changed in place: immutable at once.
  sqlite3* db = nullptr;
  int version = 0;
  std::set<std::string> tables;
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
    int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
    if (rc == SQLITE_OK) {
      sqlite3_extended_result_codes(db, 1);
      sqlite3_busy_timeout(db, kBusyTimeoutMs);
      tables.clear();
      rc = ReadSchema(db, &version, &tables);
    }
    if (rc == SQLITE_OK) break;
    std::string message = DbError(path, db, rc, "opening");
    sqlite3_close_v2(db);
    db = nullptr;
    if (!rw && !immutable &&
        ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY) &&
        !FileExists(path + "-wal")) {
      continue;
    }
    SetError(error, message);
    return nullptr;
  }
  auto fail = [&](const std::string& message) {
    SetError(error, message);
    sqlite3_close_v2(db);
    return nullptr;
  };
  if (!CheckSchema(path, version, tables, rw, error)) return fail(*error);
  if (!rw) return std::unique_ptr<ProfileStore>(new ProfileStore(path, access, db));

  // Read-write: the journal mode, foreign keys, migrations.
  // Switching the journal mode does not wait in the busy handler: a second
  // writer creating the same new database at the same moment gets
  // SQLITE_BUSY at once, so wait and retry here (up to about 10 s).
  const bool wal_mode = journal == Journal::kWal;
  for (int attempt = 0;; ++attempt) {
    Stmt mode(db, wal_mode ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=DELETE");
    int rc = mode.Step();
    if (rc == SQLITE_ROW) break;
    if (!IsBusy(rc) || attempt >= 500)
      return fail(DbError(path, db, rc, wal_mode ? "turning on WAL" : "turning on the rollback journal"));
    std::this_thread::sleep_for(std::chrono::milliseconds(10 + attempt % 11));
  }
  // Keep -wal and -shm after the last writer closes, so that readers who may
  // not write the folder can still open the database.
  int persist = 1;
  if (wal_mode) sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  int rc = sqlite3_exec(db, "PRAGMA foreign_keys=ON", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return fail(DbError(path, db, rc, "turning on foreign keys"));

  for (int attempt = 0;; ++attempt) {
    rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) {
      tables.clear();
      rc = ReadSchema(db, &version, &tables);
      if (rc == SQLITE_OK && !CheckSchema(path, version, tables, true, error)) {
        sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
        return fail(*error);
      }
      for (int v = version; rc == SQLITE_OK && v < kSchemaVersion; ++v) {
        rc = sqlite3_exec(db, kMigrations[v], nullptr, nullptr, nullptr);
      }
      if (rc == SQLITE_OK && version < kSchemaVersion) {
        rc = sqlite3_exec(db, ("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str(),
                          nullptr, nullptr, nullptr);
      }
      if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) break;
      std::string message = DbError(path, db, rc, "creating the schema");
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      if (!IsBusy(rc) || attempt + 1 >= kWriteAttempts) return fail(message);
    } else if (!IsBusy(rc) || attempt + 1 >= kWriteAttempts) {
      return fail(DbError(path, db, rc, "creating the schema"));
    }
  }
  return std::unique_ptr<ProfileStore>(new ProfileStore(path, access, db));
}

namespace {

bool ValidEntry(const ProfileEntryRow& e, const std::string& where, std::string* error) {
  if (e.mem_kind != "host" && e.mem_kind != "device") {
    *error = where + "mem_kind: must be \"host\" or \"device\", not \"" + Excerpt(e.mem_kind) + "\"";
  } else if (e.min_bytes < 0) {
    *error = where + "min_bytes: must not be negative";
  } else if (e.max_bytes && *e.max_bytes <= e.min_bytes) {
    *error = where + "max_bytes: must be larger than min_bytes (or null for no upper bound)";
  } else if (e.algo.empty()) {
    *error = where + "algo: must not be empty";
  } else if (e.ppg < 0 || e.lanes < 0 || e.chunk_bytes < 0) {
    *error = where + "ppg, lanes, chunk_bytes: must not be negative (0 = default)";
  } else {
    return true;
  }
  return false;
}

bool ValidRecord(const ProfileRecord& r, const std::string& where, std::string* error) {
  if (r.nodes < 0 || r.ranks_per_gpu < 0) {
    *error = where + "nodes, ranks_per_gpu: must not be negative";
    return false;
  }
  if (r.profile_text.empty()) {
    *error = where + "profile_text: must not be empty";
    return false;
  }
  for (size_t i = 0; i < r.entries.size(); ++i) {
    if (!ValidEntry(r.entries[i], where + "entries[" + std::to_string(i) + "].", error)) {
      return false;
    }
  }
  // What `run` gives the library (the text) must be what `show` lists (the rows).
  std::string why;
  if (!CheckProfileText(r.profile_text, r.entries, &why)) {
    *error = where + why;
    return false;
  }
  return true;
}

// Inserts a complete profile and its entries and measurements; sets
// record->id.  Runs inside the caller's transaction.
int InsertProfile(sqlite3* db, ProfileRecord* record, const std::vector<Measurement>& measurements) {
  Stmt p(db,
         "INSERT INTO profiles(node_type_key, partition, nodes, ranks_per_gpu, library_version,"
         " mpi_version, tuned_by, tuned_at, duration_s, profile_text, complete)"
         " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)");
  if (p.prepare_rc() != SQLITE_OK) return p.prepare_rc();
  p.Bind(1, record->node_type_key);
  p.Bind(2, record->partition);
  p.Bind(3, int64_t{record->nodes});
  p.Bind(4, int64_t{record->ranks_per_gpu});
  p.Bind(5, record->library_version);
  p.Bind(6, record->mpi_version);
  p.Bind(7, record->tuned_by);
  p.Bind(8, record->tuned_at);
  p.BindDouble(9, record->duration_s);
  p.Bind(10, record->profile_text);
  int rc = p.Step();
  if (rc != SQLITE_DONE) return rc;
  const int64_t id = sqlite3_last_insert_rowid(db);

  Stmt e(db,
         "INSERT INTO profile_entries(profile_id, mem_kind, min_bytes, max_bytes, algo, ppg, lanes,"
         " chunk_bytes, transport, time_us, mpi_time_us) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (e.prepare_rc() != SQLITE_OK) return e.prepare_rc();
  for (const ProfileEntryRow& row : record->entries) {
    e.Reset();
    e.Bind(1, id);
    e.Bind(2, row.mem_kind);
    e.Bind(3, row.min_bytes);
    row.max_bytes ? e.Bind(4, *row.max_bytes) : e.BindNull(4);
    e.Bind(5, row.algo);
    e.BindOptInt(6, row.ppg);
    e.BindOptInt(7, row.lanes);
    e.BindOptInt(8, row.chunk_bytes);
    e.BindOptText(9, row.transport);
    e.BindOptDouble(10, row.time_us);
    e.BindOptDouble(11, row.mpi_time_us);
    if ((rc = e.Step()) != SQLITE_DONE) return rc;
  }

  Stmt m(db,
         "INSERT INTO measurements(profile_id, mem_kind, bytes, candidate, ppg, time_us, reps)"
         " VALUES(?, ?, ?, ?, ?, ?, ?)");
  if (m.prepare_rc() != SQLITE_OK) return m.prepare_rc();
  for (const Measurement& row : measurements) {
    m.Reset();
    m.Bind(1, id);
    m.Bind(2, row.mem_kind);
    m.Bind(3, row.bytes);
    m.Bind(4, row.candidate);
    m.BindOptInt(5, row.ppg);
    m.BindDouble(6, row.time_us);
    m.Bind(7, int64_t{row.reps});
    if ((rc = m.Step()) != SQLITE_DONE) return rc;
  }
  record->id = id;
  return SQLITE_OK;
}

int InsertNodeType(sqlite3* db, const NodeTypeRow& row) {
  Stmt s(db,
         "INSERT INTO node_types(key, description, fingerprint_json, first_seen)"
         " VALUES(?, ?, ?, ?) ON CONFLICT(key) DO NOTHING");
  if (s.prepare_rc() != SQLITE_OK) return s.prepare_rc();
  s.Bind(1, row.key);
  s.Bind(2, row.description);
  s.Bind(3, row.fingerprint_json);
  s.Bind(4, row.first_seen);
  int rc = s.Step();
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

// Runs body() inside BEGIN IMMEDIATE ... COMMIT, retrying the whole
// transaction while other writers hold the lock.  body returns a SQLite code;
// a non-busy failure with *message set by body is reported as is.
template <typename Body>
bool WriteTransaction(sqlite3* db, const std::string& path, const char* doing, Body body,
                      std::string* error) {
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

constexpr char kProfileColumns[] =
    "SELECT p.id, p.node_type_key, n.description, p.partition, p.nodes, p.ranks_per_gpu,"
    " p.library_version, p.mpi_version, p.tuned_by, p.tuned_at, p.duration_s, p.profile_text"
    " FROM profiles p JOIN node_types n ON n.key = p.node_type_key";

ProfileRecord ReadProfileRow(Stmt& s) {
  ProfileRecord r;
  r.id = s.Int(0);
  r.node_type_key = s.Text(1);
  r.node_type_description = s.Text(2);
  r.partition = s.Text(3);
  r.nodes = static_cast<int>(s.Int(4));
  r.ranks_per_gpu = static_cast<int>(s.Int(5));
  r.library_version = s.Text(6);
  r.mpi_version = s.Text(7);
  r.tuned_by = s.Text(8);
  r.tuned_at = s.Text(9);
  r.duration_s = s.Double(10);
  r.profile_text = s.Text(11);
  return r;
}

// Fills r->entries.
int LoadEntries(sqlite3* db, ProfileRecord* r) {
  Stmt s(db,
         "SELECT mem_kind, min_bytes, max_bytes, algo, ppg, lanes, chunk_bytes, transport,"
         " time_us, mpi_time_us FROM profile_entries WHERE profile_id = ?"
         " ORDER BY mem_kind DESC, ppg IS NOT NULL, ppg, min_bytes, rowid");
  if (s.prepare_rc() != SQLITE_OK) return s.prepare_rc();
  s.Bind(1, r->id);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    ProfileEntryRow e;
    e.mem_kind = s.Text(0);
    e.min_bytes = s.Int(1);
    if (!s.IsNull(2)) e.max_bytes = s.Int(2);
    e.algo = s.Text(3);
    e.ppg = s.IsNull(4) ? 0 : static_cast<int>(s.Int(4));
    e.lanes = s.IsNull(5) ? 0 : static_cast<int>(s.Int(5));
    e.chunk_bytes = s.IsNull(6) ? 0 : s.Int(6);
    e.transport = s.Text(7);
    e.time_us = s.IsNull(8) ? -1 : s.Double(8);
    e.mpi_time_us = s.IsNull(9) ? -1 : s.Double(9);
    r->entries.push_back(std::move(e));
  }
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

// Runs a profile query whose parameters `bind` sets; loads entries.
template <typename Bind>
int QueryProfiles(sqlite3* db, const std::string& sql, Bind bind, std::vector<ProfileRecord>* out) {
  Stmt s(db, sql.c_str());
  if (s.prepare_rc() != SQLITE_OK) return s.prepare_rc();
  bind(s);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out->push_back(ReadProfileRow(s));
  if (rc != SQLITE_DONE) return rc;
  for (ProfileRecord& r : *out) {
    if ((rc = LoadEntries(db, &r)) != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

int QueryAllProfiles(sqlite3* db, std::vector<ProfileRecord>* out) {
  return QueryProfiles(
      db, std::string(kProfileColumns) + " WHERE p.complete = 1 ORDER BY p.tuned_at DESC, p.id DESC",
      [](Stmt&) {}, out);
}

int QueryNodeTypes(sqlite3* db, std::vector<NodeTypeRow>* out) {
  Stmt s(db,
         "SELECT key, description, fingerprint_json, first_seen FROM node_types"
         " ORDER BY first_seen, key");
  if (s.prepare_rc() != SQLITE_OK) return s.prepare_rc();
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out->push_back({s.Text(0), s.Text(1), s.Text(2), s.Text(3)});
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

// Reads inside one transaction, so that the rows and their entries agree.
struct ReadTransaction {
  explicit ReadTransaction(sqlite3* db) : db_(db) {
    rc = sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  }
  ~ReadTransaction() {
    if (rc == SQLITE_OK && sqlite3_get_autocommit(db_) == 0) {
      sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    }
  }
  sqlite3* db_;
  int rc;
};

}  // namespace

bool ProfileStore::Publish(const NodeFingerprint& fingerprint, ProfileRecord* record,
                           const std::vector<Measurement>& measurements, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  if (access_ != Access::kReadWrite) {
    SetError(error, Prefix(path_) + "opened read-only, cannot publish; open it read-write");
    return false;
  }
  std::string invalid;
  if (!ValidRecord(*record, "profile.", &invalid)) {
    SetError(error, Prefix(path_) + "cannot publish an invalid profile: " + invalid);
    return false;
  }
  for (size_t i = 0; i < measurements.size(); ++i) {
    const Measurement& m = measurements[i];
    if ((m.mem_kind != "host" && m.mem_kind != "device") || m.bytes < 0 || m.candidate.empty()) {
      SetError(error, Prefix(path_) + "cannot publish an invalid profile: measurements[" +
                          std::to_string(i) +
                          "]: needs mem_kind host/device, bytes >= 0 and a candidate");
      return false;
    }
  }
  NodeTypeRow node;
  node.key = fingerprint.Key();
  node.description = fingerprint.Description();
  node.fingerprint_json = fingerprint.ToJson().dump(-1, ' ', false,
                                                     nlohmann::json::error_handler_t::replace);
  node.first_seen = NowIso();
  ProfileRecord copy = *record;
  copy.node_type_key = node.key;
  copy.node_type_description = node.description;
  if (copy.tuned_at.empty()) copy.tuned_at = node.first_seen;
  bool ok = WriteTransaction(
      db_, path_, "publishing a profile",
      [&](std::string*) {
        int rc = InsertNodeType(db_, node);
        return rc == SQLITE_OK ? InsertProfile(db_, &copy, measurements) : rc;
      },
      error);
  if (ok) *record = std::move(copy);
  return ok;
}

std::optional<ProfileRecord> ProfileStore::Find(const std::string& node_type_key,
                                                const std::string& partition,
                                                const std::string& library_version,
                                                const std::string& mpi_version,
                                                std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  ReadTransaction txn(db_);
  if (txn.rc != SQLITE_OK) {
    SetError(error, DbError(path_, db_, txn.rc, "looking up a profile"));
    return std::nullopt;
  }
  std::vector<ProfileRecord> found;
  int rc = QueryProfiles(
      db_,
      std::string(kProfileColumns) +
          " WHERE p.node_type_key = ?1 AND p.library_version = ?2 AND p.mpi_version = ?3"
          " AND p.complete = 1 AND (p.partition = ?4 OR p.partition = '')"
          " ORDER BY (p.partition = ?4) DESC, p.tuned_at DESC, p.id DESC LIMIT 1",
      [&](Stmt& s) {
        s.Bind(1, node_type_key);
        s.Bind(2, library_version);
        s.Bind(3, mpi_version);
        s.Bind(4, partition);
      },
      &found);
  if (rc != SQLITE_OK) {
    SetError(error, DbError(path_, db_, rc, "looking up a profile"));
    return std::nullopt;
  }
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::vector<ProfileRecord> ProfileStore::List(std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  ReadTransaction txn(db_);
  std::vector<ProfileRecord> out;
  int rc = txn.rc == SQLITE_OK ? QueryAllProfiles(db_, &out) : txn.rc;
  if (rc != SQLITE_OK) {
    SetError(error, DbError(path_, db_, rc, "listing profiles"));
    return {};
  }
  return out;
}

std::vector<Measurement> ProfileStore::Measurements(int64_t profile_id, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  std::vector<Measurement> out;
  Stmt s(db_,
         "SELECT mem_kind, bytes, candidate, ppg, time_us, reps FROM measurements WHERE profile_id = ?"
         " ORDER BY mem_kind DESC, ppg, bytes, candidate");
  int rc = s.prepare_rc();
  if (rc == SQLITE_OK) {
    s.Bind(1, profile_id);
    while ((rc = s.Step()) == SQLITE_ROW) {
      Measurement m;
      m.mem_kind = s.Text(0);
      m.bytes = s.Int(1);
      m.candidate = s.Text(2);
      m.ppg = s.IsNull(3) ? 0 : static_cast<int>(s.Int(3));
      m.time_us = s.Double(4);
      m.reps = static_cast<int>(s.Int(5));
      out.push_back(std::move(m));
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) {
    SetError(error, DbError(path_, db_, rc, "reading measurements"));
    return {};
  }
  return out;
}

std::vector<NodeTypeRow> ProfileStore::NodeTypes(std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  std::vector<NodeTypeRow> out;
  int rc = QueryNodeTypes(db_, &out);
  if (rc != SQLITE_OK) {
    SetError(error, DbError(path_, db_, rc, "listing node types"));
    return {};
  }
  return out;
}

namespace {

nlohmann::json EntryToJson(const ProfileEntryRow& e) {
  nlohmann::json j = {{"mem_kind", e.mem_kind}, {"min_bytes", e.min_bytes},
                      {"max_bytes", nullptr},   {"algo", e.algo},
                      {"ppg", e.ppg},           {"lanes", e.lanes},
                      {"chunk_bytes", e.chunk_bytes}, {"transport", e.transport},
                      {"time_us", e.time_us},   {"mpi_time_us", e.mpi_time_us}};
  if (e.max_bytes) j["max_bytes"] = *e.max_bytes;
  return j;
}

// Field readers for Import: each names the field on failure.
bool JString(const nlohmann::json& o, const char* k, const std::string& where, std::string* out,
             std::string* error, bool allow_empty = true) {
  auto it = o.find(k);
  if (it == o.end() || !it->is_string() || (!allow_empty && it->get_ref<const std::string&>().empty())) {
    *error = where + k + (allow_empty ? ": missing or not a string" : ": missing, empty or not a string");
    return false;
  }
  *out = it->get<std::string>();
  return true;
}

bool JInt(const nlohmann::json& o, const char* k, const std::string& where, int64_t* out,
          std::string* error) {
  auto it = o.find(k);
  if (it == o.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    *error = where + k + ": missing or not a non-negative integer";
    return false;
  }
  *out = it->get<int64_t>();
  return true;
}

bool JSmallInt(const nlohmann::json& o, const char* k, const std::string& where, int* out,
               std::string* error) {
  int64_t v = 0;
  if (!JInt(o, k, where, &v, error)) return false;
  if (v > 1000000000) {
    *error = where + k + ": too large";
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

bool JDouble(const nlohmann::json& o, const char* k, const std::string& where, double* out,
             std::string* error) {
  auto it = o.find(k);
  if (it == o.end() || !it->is_number()) {
    *error = where + k + ": missing or not a number";
    return false;
  }
  *out = it->get<double>();
  return true;
}

bool ParseEntry(const nlohmann::json& j, const std::string& where, ProfileEntryRow* e,
                std::string* error) {
  if (!j.is_object()) {
    *error = where.substr(0, where.size() - 1) + ": not an object";
    return false;
  }
  if (!JString(j, "mem_kind", where, &e->mem_kind, error) ||
      !JInt(j, "min_bytes", where, &e->min_bytes, error) ||
      !JString(j, "algo", where, &e->algo, error) || !JSmallInt(j, "ppg", where, &e->ppg, error) ||
      !JSmallInt(j, "lanes", where, &e->lanes, error) ||
      !JInt(j, "chunk_bytes", where, &e->chunk_bytes, error) ||
      !JString(j, "transport", where, &e->transport, error) ||
      !JDouble(j, "time_us", where, &e->time_us, error) ||
      !JDouble(j, "mpi_time_us", where, &e->mpi_time_us, error)) {
    return false;
  }
  auto max = j.find("max_bytes");
  if (max == j.end() || !(max->is_null() || (max->is_number_integer() && max->get<int64_t>() >= 0))) {
    *error = where + "max_bytes: missing, or neither null nor a non-negative integer";
    return false;
  }
  if (!max->is_null()) e->max_bytes = max->get<int64_t>();
  return ValidEntry(*e, where, error);
}

bool ParseProfile(const nlohmann::json& j, const std::string& where, ProfileRecord* r,
                  std::string* error) {
  if (!j.is_object()) {
    *error = where.substr(0, where.size() - 1) + ": not an object";
    return false;
  }
  if (!JString(j, "node_type_key", where, &r->node_type_key, error, false) ||
      !JString(j, "partition", where, &r->partition, error) ||
      !JSmallInt(j, "nodes", where, &r->nodes, error) ||
      !JSmallInt(j, "ranks_per_gpu", where, &r->ranks_per_gpu, error) ||
      !JString(j, "library_version", where, &r->library_version, error) ||
      !JString(j, "mpi_version", where, &r->mpi_version, error) ||
      !JString(j, "tuned_by", where, &r->tuned_by, error) ||
      !JString(j, "tuned_at", where, &r->tuned_at, error, false) ||
      !JDouble(j, "duration_s", where, &r->duration_s, error) ||
      !JString(j, "profile_text", where, &r->profile_text, error, false)) {
    return false;
  }
  auto entries = j.find("entries");
  if (entries == j.end() || !entries->is_array()) {
    *error = where + "entries: missing or not an array";
    return false;
  }
  for (size_t i = 0; i < entries->size(); ++i) {
    ProfileEntryRow e;
    if (!ParseEntry((*entries)[i], where + "entries[" + std::to_string(i) + "].", &e, error)) {
      return false;
    }
    r->entries.push_back(std::move(e));
  }
  return ValidRecord(*r, where, error);
}

}  // namespace

nlohmann::json ProfileStore::Export(std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  std::vector<NodeTypeRow> nodes;
  std::vector<ProfileRecord> profiles;
  {
    ReadTransaction txn(db_);  // node types and profiles from one snapshot
    int rc = txn.rc;
    if (rc == SQLITE_OK) rc = QueryNodeTypes(db_, &nodes);
    if (rc == SQLITE_OK) rc = QueryAllProfiles(db_, &profiles);
    if (rc != SQLITE_OK) {
      SetError(error, DbError(path_, db_, rc, "exporting"));
      return nullptr;
    }
  }
  nlohmann::json doc = {{"format", "multilane-profiles"},
                        {"version", 1},
                        {"exported_at", NowIso()},
                        {"node_types", nlohmann::json::array()},
                        {"profiles", nlohmann::json::array()}};
  for (const NodeTypeRow& n : nodes) {
    nlohmann::json fingerprint = nlohmann::json::parse(n.fingerprint_json, nullptr, false);
    if (fingerprint.is_discarded()) {
      SetError(error, Prefix(path_) + "node type " + n.key +
                          " has a damaged fingerprint_json; " + kDamagedFix);
      return nullptr;
    }
    doc["node_types"].push_back({{"key", n.key},
                                 {"description", n.description},
                                 {"fingerprint", fingerprint},
                                 {"first_seen", n.first_seen}});
  }
  for (const ProfileRecord& r : profiles) {
    nlohmann::json entries = nlohmann::json::array();
    for (const ProfileEntryRow& e : r.entries) entries.push_back(EntryToJson(e));
    doc["profiles"].push_back({{"node_type_key", r.node_type_key},
                               {"partition", r.partition},
                               {"nodes", r.nodes},
                               {"ranks_per_gpu", r.ranks_per_gpu},
                               {"library_version", r.library_version},
                               {"mpi_version", r.mpi_version},
                               {"tuned_by", r.tuned_by},
                               {"tuned_at", r.tuned_at},
                               {"duration_s", r.duration_s},
                               {"profile_text", r.profile_text},
                               {"entries", entries}});
  }
  return doc;
}

bool ProfileStore::Import(const nlohmann::json& doc, int* imported, std::string* error) {
  if (imported != nullptr) *imported = 0;
  ClearError(error);
  const std::string prefix = "import: ";
  std::string problem;
  std::vector<NodeTypeRow> nodes;
  std::vector<ProfileRecord> profiles;
  try {
    // 1. Validate everything.
    if (!doc.is_object()) {
      SetError(error, prefix + "the document is not a JSON object; give a file written by "
                               "`multilane export`");
      return false;
    }
    auto format = doc.find("format");
    if (format == doc.end() || *format != "multilane-profiles") {
      SetError(error, prefix + "format: not \"multilane-profiles\", so this is not a multilane "
                               "profile export; give a file written by `multilane export`");
      return false;
    }
    auto version = doc.find("version");
    if (version == doc.end() || !version->is_number_integer()) {
      SetError(error, prefix + "version: missing or not an integer");
      return false;
    }
    if (*version != 1) {
      SetError(error, prefix + "version: " + version->dump() +
                          " is not supported (this multilane reads version 1); import it with "
                          "the multilane that exported it");
      return false;
    }
    auto node_list = doc.find("node_types");
    auto profile_list = doc.find("profiles");
    if (node_list == doc.end() || !node_list->is_array()) {
      SetError(error, prefix + "node_types: missing or not an array");
      return false;
    }
    if (profile_list == doc.end() || !profile_list->is_array()) {
      SetError(error, prefix + "profiles: missing or not an array");
      return false;
    }
    std::set<std::string> doc_keys;
    for (size_t i = 0; i < node_list->size(); ++i) {
      const nlohmann::json& n = (*node_list)[i];
      const std::string where = "node_types[" + std::to_string(i) + "].";
      NodeTypeRow row;
      NodeFingerprint fp;
      if (!n.is_object()) {
        problem = "node_types[" + std::to_string(i) + "]: not an object";
      } else if (JString(n, "key", where, &row.key, &problem, false) &&
                 JString(n, "description", where, &row.description, &problem) &&
                 JString(n, "first_seen", where, &row.first_seen, &problem, false)) {
        auto f = n.find("fingerprint");
        if (f == n.end()) {
          problem = where + "fingerprint: missing";
        } else if (!NodeFingerprint::FromJson(*f, &fp, &problem)) {
          problem = where + problem;
        } else if (fp.Key() != row.key) {
          problem = where + "key: " + row.key + " does not match its fingerprint (" + fp.Key() + ")";
        } else {
          row.fingerprint_json =
              fp.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        }
      }
      if (!problem.empty()) break;
      doc_keys.insert(row.key);
      nodes.push_back(std::move(row));
    }
    for (size_t i = 0; problem.empty() && i < profile_list->size(); ++i) {
      ProfileRecord r;
      if (ParseProfile((*profile_list)[i], "profiles[" + std::to_string(i) + "].", &r, &problem)) {
        profiles.push_back(std::move(r));
      }
    }
    if (!problem.empty()) {
      SetError(error, prefix + problem + "; fix the document (nothing was imported)");
      return false;
    }
  } catch (const std::exception& e) {
    SetError(error, prefix + "malformed document (" + e.what() + "); nothing was imported");
    return false;
  }

  // 2. Write everything in one transaction.
  std::lock_guard<std::mutex> lock(mu_);
  if (access_ != Access::kReadWrite) {
    SetError(error, Prefix(path_) + "opened read-only, cannot import; open it read-write");
    return false;
  }
  int added = 0;
  bool ok = WriteTransaction(
      db_, path_, "importing profiles",
      [&](std::string* message) {
        added = 0;
        for (const NodeTypeRow& n : nodes) {
          int rc = InsertNodeType(db_, n);
          if (rc != SQLITE_OK) return rc;
        }
        Stmt known(db_, "SELECT 1 FROM node_types WHERE key = ?");
        Stmt dup(db_,
                 "SELECT 1 FROM profiles WHERE node_type_key = ? AND partition = ? AND"
                 " library_version = ? AND mpi_version = ? AND tuned_at = ? AND profile_text = ?"
                 " AND complete = 1");
        if (known.prepare_rc() != SQLITE_OK) return known.prepare_rc();
        if (dup.prepare_rc() != SQLITE_OK) return dup.prepare_rc();
        for (size_t i = 0; i < profiles.size(); ++i) {
          ProfileRecord& r = profiles[i];
          known.Reset();
          known.Bind(1, r.node_type_key);
          int rc = known.Step();
          if (rc == SQLITE_DONE) {
            *message = prefix + "profiles[" + std::to_string(i) + "].node_type_key: node type " +
                       r.node_type_key +
                       " is neither in the document's node_types nor in " + path_ +
                       "; fix the document (nothing was imported)";
            return SQLITE_CONSTRAINT;
          }
          if (rc != SQLITE_ROW) return rc;
          dup.Reset();
          dup.Bind(1, r.node_type_key);
          dup.Bind(2, r.partition);
          dup.Bind(3, r.library_version);
          dup.Bind(4, r.mpi_version);
          dup.Bind(5, r.tuned_at);
          dup.Bind(6, r.profile_text);
          rc = dup.Step();
          if (rc == SQLITE_ROW) continue;
          if (rc != SQLITE_DONE) return rc;
          if ((rc = InsertProfile(db_, &r, {})) != SQLITE_OK) return rc;
          ++added;
        }
        return SQLITE_OK;
      },
      error);
  if (ok && imported != nullptr) *imported = added;
  return ok;
}

ProfileStore::Health ProfileStore::Check() {
  std::lock_guard<std::mutex> lock(mu_);
  Health h;
  auto problem = [&](int rc, const char* doing) {
    h.problems.push_back(DbError(path_, db_, rc, doing));
  };
  {
    Stmt s(db_, "PRAGMA user_version");
    int rc = s.Step();
    if (rc == SQLITE_ROW) {
      h.schema_version = static_cast<int>(s.Int(0));
    } else {
      problem(rc, "reading the schema version");
    }
  }
  {
    Stmt s(db_, "PRAGMA integrity_check(20)");
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) {
      std::string row = s.Text(0);
      if (row != "ok") {
        h.problems.push_back(Prefix(path_) + "integrity check: " + row + "; " + kDamagedFix);
      }
    }
    if (rc != SQLITE_DONE) problem(rc, "checking integrity");
  }
  {
    Stmt s(db_, "PRAGMA foreign_key_check");
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) {
      h.problems.push_back(Prefix(path_) + "row " + s.Text(1) + " of table " + s.Text(0) +
                           " refers to a missing row of " + s.Text(2) + "; " + kDamagedFix);
    }
    if (rc != SQLITE_DONE) problem(rc, "checking references");
  }
  {
    Stmt s(db_, "SELECT count(*) FROM profiles WHERE complete = 1");
    int rc = s.Step();
    if (rc == SQLITE_ROW) {
      h.profiles = static_cast<int>(s.Int(0));
    } else {
      problem(rc, "counting profiles");
    }
  }
  h.ok = h.problems.empty();
  return h;
}

}  // namespace mldb
