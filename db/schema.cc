// schema.cc: the profile store's tables and their migrations (schema.h).
#include "db/schema.h"

#include "db/profile_store.h"
#include "db/sql.h"

#include <iterator>
#include <vector>

namespace mldb {
namespace sql {
namespace {

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
    // 1 -> 2: passthrough mpi=NAME (the system MPI's own algorithm)
    "ALTER TABLE profile_entries ADD COLUMN system_algorithm TEXT;",
    // 2 -> 3: the job history (db/job_history.h)
    "CREATE TABLE job_history("
    "  id INTEGER PRIMARY KEY,"
    "  job_key TEXT NOT NULL,"
    "  run_id TEXT NOT NULL,"
    "  job_name TEXT NOT NULL,"
    "  job_id TEXT NOT NULL,"
    "  started_utc TEXT NOT NULL,"
    "  recorded_utc TEXT NOT NULL,"
    "  node_type TEXT NOT NULL,"
    "  profile_digest TEXT NOT NULL,"
    "  nodes INTEGER NOT NULL,"
    "  ranks INTEGER NOT NULL,"
    "  gpus INTEGER NOT NULL,"
    "  ranks_per_gpu INTEGER NOT NULL,"
    "  algorithms TEXT NOT NULL,"
    "  wall_s REAL NOT NULL,"
    "  compute_s REAL NOT NULL,"
    "  allreduce_s REAL NOT NULL,"
    "  wait_s REAL NOT NULL,"
    "  energy_j REAL,"
    "  histogram_json TEXT NOT NULL,"
    "  UNIQUE (job_key, run_id));"
    "CREATE INDEX job_history_key ON job_history(job_key, started_utc);",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion, "one migration per schema version");

// The tables every version has, and the version that added each later one.
const char* const kTables[] = {"node_types", "profiles", "profile_entries", "measurements"};
const struct {
  const char* name;
  int since;
} kLaterTables[] = {{"job_history", 3}};

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

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

bool CheckSchema(const std::string& path, int version, const std::set<std::string>& tables, bool fresh_ok,
                 std::string* error) {
  if (version > kSchemaVersion) {
    SetError(error, Prefix(path) + "written by a newer multilane (schema version " + std::to_string(version) +
                        "; this multilane knows up to " + std::to_string(kSchemaVersion) +
                        "); use the newer multilane (or move the file away to start a new "
                        "database)");
    return false;
  }
  if (version == 0) {
    if (!tables.empty()) {
      SetError(error, Prefix(path) + "not a multilane profile database (it holds tables " + Join(tables) + "); " +
                          kForeignFix);
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
  std::vector<const char*> wanted(std::begin(kTables), std::end(kTables));
  for (const auto& later : kLaterTables)
    if (version >= later.since) wanted.push_back(later.name);
  for (const char* t : wanted) {
    if (tables.count(t) == 0) {
      SetError(error, Prefix(path) + "the table " + t + " is missing (schema version " + std::to_string(version) +
                          "); " + kDamagedFix);
      return false;
    }
  }
  return true;
}

bool MigrateSchema(sqlite3* db, const std::string& path, std::string* error) {
  for (int attempt = 0;; ++attempt) {
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) {
      int version = 0;
      std::set<std::string> tables;
      rc = ReadSchema(db, &version, &tables);
      if (rc == SQLITE_OK && !CheckSchema(path, version, tables, true, error)) {
        sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
        return false;
      }
      for (int v = version; rc == SQLITE_OK && v < kSchemaVersion; ++v) {
        rc = sqlite3_exec(db, kMigrations[v], nullptr, nullptr, nullptr);
      }
      if (rc == SQLITE_OK && version < kSchemaVersion) {
        rc = sqlite3_exec(db, ("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str(), nullptr, nullptr,
                          nullptr);
      }
      if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) return true;
      std::string message = DbError(path, db, rc, "creating the schema");
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      if (!IsBusy(rc) || attempt + 1 >= kWriteAttempts) return SetError(error, message);
    } else if (!IsBusy(rc) || attempt + 1 >= kWriteAttempts) {
      return SetError(error, DbError(path, db, rc, "creating the schema"));
    }
  }
}

}  // namespace sql
}  // namespace mldb
