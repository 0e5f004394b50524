// profile_rows.h: the SQL of the store's rows (internal to db/): node types,
// profiles with their entries, and measurements, written and read back as
// the structs of profile_store.h.  Every function returns a SQLite result
// code and runs inside the caller's transaction.
#ifndef MLDB_PROFILE_ROWS_H_
#define MLDB_PROFILE_ROWS_H_

#include <string>
#include <vector>

#include "db/profile_store.h"
#include "db/sql.h"

namespace mldb {
namespace sql {

// Adds node type `row` unless its key is present already.
int InsertNodeType(sqlite3* db, const NodeTypeRow& row);

// Adds *record as a complete profile with its entries and `measurements`;
// sets record->id.
int InsertProfile(sqlite3* db, ProfileRecord* record, const std::vector<Measurement>& measurements);

// The start of every profile query: the columns ReadProfileRow reads, from
// profiles p joined with node_types n; add " WHERE ...".
extern const char kProfileColumns[];

// The profile (without entries) of the row `s` stands on, of a query that
// starts with kProfileColumns.
ProfileRecord ReadProfileRow(Stmt& s);

// Fills r->entries from the table, in the order the profile lists them, and
// r->disagreement (CheckProfileText: "" when the text says what they say).
int LoadEntries(sqlite3* db, ProfileRecord* r);

// Runs the profile query `sql` (starting with kProfileColumns) whose
// parameters bind(Stmt&) sets, and appends its profiles with their entries
// to *out.
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

// Appends every complete profile with its entries, newest first, to *out.
int QueryAllProfiles(sqlite3* db, std::vector<ProfileRecord>* out);

// Appends every node type, by first_seen then key, to *out.
int QueryNodeTypes(sqlite3* db, std::vector<NodeTypeRow>* out);

}  // namespace sql
}  // namespace mldb

#endif  // MLDB_PROFILE_ROWS_H_
