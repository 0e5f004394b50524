// profile_store.cc: the SQLite profile store (profile_store.h): publishing,
// looking up and listing profiles, and the health check.  Opening is in
// profile_store_open.cc, the tables in schema.cc, the rows' SQL in
// profile_rows.cc, the export document in profile_json.cc.
#include "db/profile_store.h"

#include <sqlite3.h>

#include <utility>

#include "db/node_type.h"
#include "db/profile_rows.h"
#include "db/record_check.h"
#include "db/sql.h"
#include "vocab/byte_size.h"
#include "vocab/utc_time.h"

namespace mldb {

using sql::ClearError;
using sql::DbError;
using sql::Prefix;
using sql::SetError;
using sql::Stmt;

bool ProfileEntryRow::operator==(const ProfileEntryRow& o) const {
  return mem_kind == o.mem_kind && min_bytes == o.min_bytes && max_bytes == o.max_bytes && algo == o.algo &&
         ppg == o.ppg && lanes == o.lanes && chunk_bytes == o.chunk_bytes && transport == o.transport &&
         system_algorithm == o.system_algorithm && time_us == o.time_us && mpi_time_us == o.mpi_time_us;
}

std::string ProfileEntryRow::ChoiceWords() const {
  std::string s = algo;
  if (lanes > 0) s += " lanes=" + std::to_string(lanes);
  if (chunk_bytes > 0) s += " chunk=" + mla::FormatByteSize(static_cast<uint64_t>(chunk_bytes));
  if (!transport.empty() && transport != "auto") s += " transport=" + transport;
  if (!system_algorithm.empty()) s += " mpi=" + system_algorithm;
  if (ppg > 0) s += " ppg=" + std::to_string(ppg);
  return s;
}

ProfileStore::ProfileStore(std::string path, Access access, sqlite3* db)
    : path_(std::move(path)), access_(access), db_(db) {}

ProfileStore::~ProfileStore() { sqlite3_close_v2(db_); }

namespace {

// The measurements Publish stores: "" when all are, else what is wrong.
std::string InvalidMeasurement(const std::vector<Measurement>& measurements) {
  for (size_t i = 0; i < measurements.size(); ++i) {
    const Measurement& m = measurements[i];
    if ((m.mem_kind != "host" && m.mem_kind != "device") || m.bytes < 0 || m.candidate.empty()) {
      return "measurements[" + std::to_string(i) + "]: needs mem_kind host/device, bytes >= 0 and a candidate";
    }
  }
  return "";
}

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
  if (ValidRecord(*record, "profile.", &invalid)) invalid = InvalidMeasurement(measurements);
  if (!invalid.empty()) return SetError(error, Prefix(path_) + "cannot publish an invalid profile: " + invalid);
  NodeTypeRow node;
  node.key = fingerprint.Key();
  node.description = fingerprint.Description();
  node.fingerprint_json = fingerprint.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  node.first_seen = mla::UtcNow();
  ProfileRecord copy = *record;
  copy.node_type_key = node.key;
  copy.node_type_description = node.description;
  if (copy.tuned_at.empty()) copy.tuned_at = node.first_seen;
  bool ok = sql::WriteTransaction(
      db_, path_, "publishing a profile",
      [&](std::string*) {
        int rc = sql::InsertNodeType(db_, node);
        return rc == SQLITE_OK ? sql::InsertProfile(db_, &copy, measurements) : rc;
      },
      error);
  if (ok) *record = std::move(copy);
  return ok;
}

std::optional<ProfileRecord> ProfileStore::Find(const std::string& node_type_key, const std::string& partition,
                                                const std::string& library_version, const std::string& mpi_version,
                                                std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  sql::ReadTransaction txn(db_);
  if (txn.rc != SQLITE_OK) {
    SetError(error, DbError(path_, db_, txn.rc, "looking up a profile"));
    return std::nullopt;
  }
  std::vector<ProfileRecord> found;
  int rc = sql::QueryProfiles(
      db_,
      std::string(sql::kProfileColumns) +
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

bool ProfileStore::Withdraw(int64_t profile_id, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  if (access_ != Access::kReadWrite)
    return SetError(error, Prefix(path_) + "opened read-only, cannot withdraw a profile; open it read-write");
  return sql::WriteTransaction(
      db_, path_, "withdrawing a profile",
      [&](std::string* message) {
        // The entries and measurements go with it (ON DELETE CASCADE).
        Stmt s(db_, "DELETE FROM profiles WHERE id = ?1 AND complete = 1");
        if (s.prepare_rc() != SQLITE_OK) return s.prepare_rc();
        s.Bind(1, profile_id);
        const int rc = s.Step();
        if (rc != SQLITE_DONE) return rc;
        if (sqlite3_changes(db_) > 0) return SQLITE_OK;
        *message = Prefix(path_) + "has no profile " + std::to_string(profile_id) + "; `multilane show --db " + path_ +
                   "` lists its profiles with their ids";
        return SQLITE_NOTFOUND;
      },
      error);
}

std::vector<ProfileRecord> ProfileStore::List(std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  sql::ReadTransaction txn(db_);
  std::vector<ProfileRecord> out;
  int rc = txn.rc == SQLITE_OK ? sql::QueryAllProfiles(db_, &out) : txn.rc;
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
  int rc = sql::QueryNodeTypes(db_, &out);
  if (rc != SQLITE_OK) {
    SetError(error, DbError(path_, db_, rc, "listing node types"));
    return {};
  }
  return out;
}

bool ProfileStore::ReadForExport(std::vector<NodeTypeRow>* node_types, std::vector<ProfileRecord>* profiles,
                                 std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  sql::ReadTransaction txn(db_);  // node types and profiles from one snapshot
  int rc = txn.rc;
  if (rc == SQLITE_OK) rc = sql::QueryNodeTypes(db_, node_types);
  if (rc == SQLITE_OK) rc = sql::QueryAllProfiles(db_, profiles);
  if (rc != SQLITE_OK) return SetError(error, DbError(path_, db_, rc, "exporting"));
  return true;
}

namespace {

// Adds `profiles` not present yet (all of whose node types must be known);
// *added counts them.  Runs inside Import's transaction; a profile of an
// unknown node type sets *message and fails the whole.
int AddNewProfiles(sqlite3* db, const std::string& path, std::vector<ProfileRecord>* profiles, int* added,
                   std::string* message) {
  Stmt known(db, "SELECT 1 FROM node_types WHERE key = ?");
  Stmt dup(db,
           "SELECT 1 FROM profiles WHERE node_type_key = ? AND partition = ? AND"
           " library_version = ? AND mpi_version = ? AND tuned_at = ? AND profile_text = ?"
           " AND complete = 1");
  if (known.prepare_rc() != SQLITE_OK) return known.prepare_rc();
  if (dup.prepare_rc() != SQLITE_OK) return dup.prepare_rc();
  for (size_t i = 0; i < profiles->size(); ++i) {
    ProfileRecord& r = (*profiles)[i];
    known.Reset();
    known.Bind(1, r.node_type_key);
    int rc = known.Step();
    if (rc == SQLITE_DONE) {
      *message = "import: profiles[" + std::to_string(i) + "].node_type_key: node type " + r.node_type_key +
                 " is neither in the document's node_types nor in " + path +
                 "; fix the document (nothing was imported)";
      return SQLITE_CONSTRAINT;
    }
    if (rc != SQLITE_ROW) return rc;
    dup.Reset();
    int param = 1;
    for (const std::string* v :
         {&r.node_type_key, &r.partition, &r.library_version, &r.mpi_version, &r.tuned_at, &r.profile_text})
      dup.Bind(param++, *v);
    rc = dup.Step();
    if (rc == SQLITE_ROW) continue;
    if (rc != SQLITE_DONE) return rc;
    if ((rc = sql::InsertProfile(db, &r, {})) != SQLITE_OK) return rc;
    ++*added;
  }
  return SQLITE_OK;
}

}  // namespace

bool ProfileStore::Import(const std::vector<NodeTypeRow>& node_types, std::vector<ProfileRecord> profiles,
                          int* imported, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  if (access_ != Access::kReadWrite) {
    SetError(error, Prefix(path_) + "opened read-only, cannot import; open it read-write");
    return false;
  }
  int added = 0;
  bool ok = sql::WriteTransaction(
      db_, path_, "importing profiles",
      [&](std::string* message) {
        added = 0;
        for (const NodeTypeRow& n : node_types) {
          int rc = sql::InsertNodeType(db_, n);
          if (rc != SQLITE_OK) return rc;
        }
        return AddNewProfiles(db_, path_, &profiles, &added, message);
      },
      error);
  if (ok && imported != nullptr) *imported = added;
  return ok;
}

ProfileStore::Health ProfileStore::Check() {
  std::lock_guard<std::mutex> lock(mu_);
  Health h;
  auto problem = [&](int rc, const char* doing) { h.problems.push_back(DbError(path_, db_, rc, doing)); };
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
        h.problems.push_back(Prefix(path_) + "integrity check: " + row + "; " + sql::kDamagedFix);
      }
    }
    if (rc != SQLITE_DONE) problem(rc, "checking integrity");
  }
  {
    Stmt s(db_, "PRAGMA foreign_key_check");
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) {
      h.problems.push_back(Prefix(path_) + "row " + s.Text(1) + " of table " + s.Text(0) +
                           " refers to a missing row of " + s.Text(2) + "; " + sql::kDamagedFix);
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
