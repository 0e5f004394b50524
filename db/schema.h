// schema.h: the profile store's tables (internal to db/): what a file must
// hold to be a profile database of this version, and the migrations that
// bring an older (or new, empty) one to kSchemaVersion (profile_store.h).
#ifndef MLDB_SCHEMA_H_
#define MLDB_SCHEMA_H_

#include <set>
#include <string>

struct sqlite3;

namespace mldb {
namespace sql {

// Reads PRAGMA user_version into *version and adds the names of the tables
// (SQLite's own left out) to *tables.  Returns a SQLite result code.
int ReadSchema(sqlite3* db, int* version, std::set<std::string>* tables);

// Whether a schema read by ReadSchema is one this code reads: not newer than
// kSchemaVersion, with every table of the store, or version 0 without any
// table when `fresh_ok` (it will be migrated).  Otherwise returns false and
// sets *error to one line about the file at `path` with the fix.
bool CheckSchema(const std::string& path, int version, const std::set<std::string>& tables, bool fresh_ok,
                 std::string* error);

// Brings the (read-write) database at `path` to kSchemaVersion in one
// IMMEDIATE transaction, checking the schema again inside it; retries while
// other writers hold the lock (kWriteAttempts).  Returns true when the schema
// is current; else false with *error set (nothing changed).
bool MigrateSchema(sqlite3* db, const std::string& path, std::string* error);

}  // namespace sql
}  // namespace mldb

#endif  // MLDB_SCHEMA_H_
