// profile_rows.cc: the SQL of the store's rows (profile_rows.h).
#include "db/profile_rows.h"

#include <utility>

#include "db/profile_check.h"

namespace mldb {
namespace sql {

const char kProfileColumns[] =
    "SELECT p.id, p.node_type_key, n.description, p.partition, p.nodes, p.ranks_per_gpu,"
    " p.library_version, p.mpi_version, p.tuned_by, p.tuned_at, p.duration_s, p.profile_text"
    " FROM profiles p JOIN node_types n ON n.key = p.node_type_key";

namespace {

int InsertEntries(sqlite3* db, int64_t id, const std::vector<ProfileEntryRow>& entries) {
  Stmt e(db,
         "INSERT INTO profile_entries(profile_id, mem_kind, min_bytes, max_bytes, algo, ppg, lanes,"
         " chunk_bytes, transport, time_us, mpi_time_us, system_algorithm)"
         " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (e.prepare_rc() != SQLITE_OK) return e.prepare_rc();
  for (const ProfileEntryRow& row : entries) {
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
    e.BindOptText(12, row.system_algorithm);
    int rc = e.Step();
    if (rc != SQLITE_DONE) return rc;
  }
  return SQLITE_OK;
}

int InsertMeasurements(sqlite3* db, int64_t id, const std::vector<Measurement>& measurements) {
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
    int rc = m.Step();
    if (rc != SQLITE_DONE) return rc;
  }
  return SQLITE_OK;
}

}  // namespace

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
  if ((rc = InsertEntries(db, id, record->entries)) != SQLITE_OK) return rc;
  if ((rc = InsertMeasurements(db, id, measurements)) != SQLITE_OK) return rc;
  record->id = id;
  return SQLITE_OK;
}

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

namespace {

// Schema 1 (before passthrough mpi=NAME) has no system_algorithm column; a
// store opened read-only is never migrated, so a user's job still reads the
// system database an older multilane wrote until the admin next tunes.
bool HasSystemAlgorithm(sqlite3* db) {
  Stmt s(db, "SELECT 1 FROM pragma_table_info('profile_entries') WHERE name = 'system_algorithm'");
  return s.prepare_rc() == SQLITE_OK && s.Step() == SQLITE_ROW;
}

}  // namespace

int LoadEntries(sqlite3* db, ProfileRecord* r) {
  const std::string query = std::string(
                                "SELECT mem_kind, min_bytes, max_bytes, algo, ppg, lanes, chunk_bytes, transport,"
                                " time_us, mpi_time_us, ") +
                            (HasSystemAlgorithm(db) ? "system_algorithm" : "NULL") +
                            " FROM profile_entries WHERE profile_id = ?"
                            " ORDER BY mem_kind DESC, ppg IS NOT NULL, ppg, min_bytes, rowid";
  Stmt s(db, query.c_str());
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
    e.system_algorithm = s.IsNull(10) ? "" : s.Text(10);
    r->entries.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return rc;
  std::string why;
  if (!CheckProfileText(r->profile_text, r->entries, &why)) r->disagreement = why;
  return SQLITE_OK;
}

int QueryAllProfiles(sqlite3* db, std::vector<ProfileRecord>* out) {
  return QueryProfiles(
      db, std::string(kProfileColumns) + " WHERE p.complete = 1 ORDER BY p.tuned_at DESC, p.id DESC", [](Stmt&) {},
      out);
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

}  // namespace sql
}  // namespace mldb
