// profile_store.h: the SQLite database of tuned profiles, per node type.
//
// One file holds node types, profiles (the text the library reads plus its
// entries as rows) and the raw measurements behind them.  Writers publish a
// whole profile in one transaction, so readers never see half of one; any
// number of processes of one machine may read and write one file at once
// (WAL mode, for files on local disks).  A file on a shared (network) file
// system is written as a private working copy in rollback-journal mode and
// published as a read-only snapshot by atomic rename (db/snapshot.h).
//
// Every failure is reported, never thrown or aborted on: functions return
// false / nullopt / empty and set *error (when error is not null) to one line
// that names the file, says what is wrong and ends with the fix.
//
// The JSON export document (`multilane export` / `import`) is read and
// written by db/profile_json.h, so that users of the store do not depend on
// nlohmann/json.
#ifndef MLDB_PROFILE_STORE_H_
#define MLDB_PROFILE_STORE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "vocab/job_run.h"

struct sqlite3;

namespace mldb {

struct NodeFingerprint;  // db/node_type.h

// The schema version this code writes and reads (PRAGMA user_version).
constexpr int kSchemaVersion = 3;

// One row of a profile's table: calls of mem_kind memory whose size lies in
// [min_bytes, max_bytes) run algo (see docs/profile-format.md).
struct ProfileEntryRow {
  std::string mem_kind = "host";  // "host" or "device"
  int64_t min_bytes = 0;
  std::optional<int64_t> max_bytes;  // nullopt: no upper bound ("inf")
  std::string algo;                  // "passthrough", "lane", "hier", "split", ...
  int ppg = 0;                       // 0: any ranks per GPU
  int lanes = 0;                     // 0: default
  int64_t chunk_bytes = 0;           // 0: default
  std::string transport;             // "": default (auto)
  std::string system_algorithm;      // passthrough mpi=NAME: the MPI's own algorithm; "": its choice
  double time_us = -1;               // -1: unknown
  double mpi_time_us = -1;           // -1: unknown

  bool operator==(const ProfileEntryRow& other) const;
  // The choice as a profile entry writes it, defaults left out:
  // "lane lanes=2 chunk=4M ppg=2", "passthrough mpi=ring".
  std::string ChoiceWords() const;
};

// One probe result the tuner measured (kept for reports; not exported).
struct Measurement {
  std::string mem_kind = "host";  // "host" or "device"
  int64_t bytes = 0;
  std::string candidate;  // e.g. "lane lanes=2 chunk=4M"
  int ppg = 0;
  double time_us = 0;
  int reps = 0;
};

struct ProfileRecord {
  int64_t id = 0;                     // set by Publish / read back
  std::string node_type_key;          // set by Publish from the fingerprint
  std::string node_type_description;  // set by Publish from the fingerprint
  std::string partition;              // "" when tuned without a partition
  int nodes = 0;                      // node count the profile was tuned at
  int ranks_per_gpu = 0;
  std::string library_version;
  std::string mpi_version;
  std::string tuned_by;
  std::string tuned_at;      // ISO 8601 UTC, "2026-11-29T12:00:00Z"; Publish fills it when empty
  double duration_s = 0;     // tuning time
  std::string profile_text;  // docs/profile-format.md: what the library gets
  std::vector<ProfileEntryRow> entries;
  // Read back only: why profile_text and entries disagree (CheckProfileText,
  // db/profile_check.h), "" when they agree.  Publish and import refuse a
  // record whose text and entries disagree, so only an older database or
  // one changed by hand holds such a profile; readers show this, never
  // check again.
  std::string disagreement;
};

struct NodeTypeRow {
  std::string key;
  std::string description;
  std::string fingerprint_json;  // NodeFingerprint::ToJson(), compact
  std::string first_seen;        // ISO 8601 UTC
};

class ProfileStore {
 public:
  enum class Access { kReadOnly, kReadWrite };
  // How a read-write store journals: WAL (one machine's processes, local
  // disks) or a rollback journal (journal_mode=DELETE: the working copy of a
  // published snapshot, db/snapshot.h).
  enum class Journal { kWal, kRollback };

  // What `multilane doctor` shows.
  struct Health {
    bool ok = false;                    // no problems
    std::vector<std::string> problems;  // one line each, with the fix
    int schema_version = 0;
    int profiles = 0;  // complete profiles
  };

  // Opens the database at `path`.
  // kReadWrite: creates missing parent folders (0755) and the file, turns on
  //   `journal` (WAL by default), a 10 s busy timeout and foreign keys, and
  //   brings the schema to kSchemaVersion in one transaction.  An empty
  //   (0-byte) file is initialised like a new one.  A published snapshot
  //   (IsPublishedSnapshot) is refused: it is never written in place.
  // kReadOnly: never creates or modifies anything; a missing file is an error.
  //   A published snapshot is opened immutable (no locks, no -shm/-journal).
  // Fails (nullptr, *error set) on a file that is not SQLite, corrupt or
  // truncated, holds another program's tables, is empty (read-only), or has a
  // schema newer than kSchemaVersion.  Never throws.
  static std::unique_ptr<ProfileStore> Open(const std::string& path, Access access, std::string* error,
                                            Journal journal = Journal::kWal);

  ~ProfileStore();
  ProfileStore(const ProfileStore&) = delete;
  ProfileStore& operator=(const ProfileStore&) = delete;

  // The path given to Open.
  const std::string& path() const { return path_; }

  // Stores `fingerprint` as a node type (when new) and *record with its
  // entries and `measurements` in one transaction: the profile becomes visible
  // whole or not at all.  Sets record->id, node_type_key and
  // node_type_description, and tuned_at when empty.  Waits for (and retries
  // after) concurrent writers of the same file for up to about 30 s.
  // Fails on a read-only store or on an invalid record (bad mem_kind, empty
  // algo, min_bytes >= max_bytes, negative sizes).
  bool Publish(const NodeFingerprint& fingerprint, ProfileRecord* record, const std::vector<Measurement>& measurements,
               std::string* error);

  // The newest complete profile (by tuned_at, then id) of node type
  // `node_type_key` tuned with exactly `library_version` and `mpi_version`.
  // partition "" matches profiles tuned without a partition; another
  // partition matches its own profiles first and else falls back to the
  // partition-less ones.  A miss is nullopt with *error cleared; a database
  // failure is nullopt with *error set.
  std::optional<ProfileRecord> Find(const std::string& node_type_key, const std::string& partition,
                                    const std::string& library_version, const std::string& mpi_version,
                                    std::string* error);

  // Withdraws profile `profile_id` (a bad tune): deletes it, its entries and
  // its measurements in one transaction, so that Find never returns it again
  // (the next newest profile of its node type, partition and versions, if
  // any, is then the one Find returns).  Its node type stays.  Fails on a
  // read-only store and on an id that names no complete profile (the error
  // says how to list the ids).
  bool Withdraw(int64_t profile_id, std::string* error);

  // Every complete profile with its entries, newest first.  On failure
  // returns {} and sets *error (cleared on success).
  std::vector<ProfileRecord> List(std::string* error);

  // The measurements stored with profile `profile_id` (by memory kind, ppg,
  // bytes, candidate); {} for a profile without any.  On failure returns {}
  // and sets *error (cleared on success).
  std::vector<Measurement> Measurements(int64_t profile_id, std::string* error);

  // Every node type, by first_seen then key.  On failure returns {} and sets
  // *error (cleared on success).
  std::vector<NodeTypeRow> NodeTypes(std::string* error);

  // Every node type (as NodeTypes) and every complete profile with its
  // entries (as List, no measurements), read from one snapshot of the
  // database: what an export holds (db/profile_json.h ExportProfiles).  On
  // failure returns false and sets *error (cleared on success).
  bool ReadForExport(std::vector<NodeTypeRow>* node_types, std::vector<ProfileRecord>* profiles, std::string* error);

  // Adds the node types and profiles of an import (db/profile_json.h
  // ImportProfiles, which checks them first) in one transaction, or nothing.
  // Node types already present are kept; profiles already present (same node
  // type, partition, versions, tuned_at and text) are skipped, so importing
  // twice adds nothing.  A profile whose node type is neither in
  // `node_types` nor in the database fails the whole, as does a read-only
  // store.  *imported (when not null) = profiles added, set on success only.
  bool Import(const std::vector<NodeTypeRow>& node_types, std::vector<ProfileRecord> profiles, int* imported,
              std::string* error);

  // Writes a consistent copy of this (read-write) store to `target` as a
  // published snapshot: a new file in target's folder (rollback journal,
  // marked by kSnapshotApplicationId, mode 0644, synced) renamed over
  // `target` in one step.  Readers that opened the old file keep reading it;
  // readers opening `target` afterwards get the new one; nobody sees half a
  // file.  Holds this store's write lock while copying and renaming, so
  // concurrent publishers take turns and a newer snapshot is never replaced
  // by an older one.  Defined in db/snapshot.cc.
  bool PublishSnapshot(const std::string& target, std::string* error);

  // Writes a consistent copy of this store into the (new or empty) file
  // `to`, unmarked and in rollback-journal mode.  Returns "" or what failed.
  // Defined in db/snapshot.cc.
  std::string CopyTo(const std::string& to);

  // The job history (db/job_history.h; defined in db/job_history.cc).
  // Records `run` unless a run of the same key and run_id is there
  // already (then *added = false and nothing changes); then drops the oldest
  // runs beyond kHistoryRunsPerKey of its key and kHistoryRunsInAll in all.
  // Fails on a read-only store or an invalid run (InvalidJobRun).
  bool RecordJobRun(const mla::JobRun& run, bool* added, std::string* error);
  // The runs of `job_key` ("" every key), oldest first by key.  On failure
  // returns {} and sets *error (cleared on success).
  std::vector<mla::JobRun> JobRuns(const std::string& job_key, std::string* error);
  // Forgets the runs of `job_key` ("" every run); *forgotten = how many.
  bool ForgetJobRuns(const std::string& job_key, int* forgotten, std::string* error);

  // Runs PRAGMA integrity_check and foreign_key_check and counts profiles.
  // Never fails: problems are listed in the result.
  Health Check();

 private:
  ProfileStore(std::string path, Access access, sqlite3* db);

  std::string path_;
  Access access_;
  sqlite3* db_;
  std::mutex mu_;  // one call at a time: a store may be shared between threads
};

}  // namespace mldb

#endif  // MLDB_PROFILE_STORE_H_
