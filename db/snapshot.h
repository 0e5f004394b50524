// snapshot.h: the system database on a shared (network) file system.
//
// SQLite's WAL mode needs shared memory between all its users, which a
// network file system does not give, and NFS byte-range locks are only as
// good as the lock daemon.  So the shared file is never written in place:
//
//   * the admin's commands write a working copy (rollback journal,
//     WorkingCopyPath) and then publish it: a consistent copy is written to a
//     new file beside the published one and renamed over it (atomic on one
//     file system, NFS included) - ProfileStore::PublishSnapshot;
//   * readers (jobs, the Slurm plugin, `show`) open the published file
//     read-only and immutable: no locks, no -wal/-shm/-journal files, and a
//     reader that has it open keeps its (old) file until it closes it.
//
// A published snapshot is marked by kSnapshotApplicationId in its header.
#ifndef MLDB_SNAPSHOT_H_
#define MLDB_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "db/profile_store.h"

namespace mldb {

// PRAGMA application_id of a published snapshot ("MLsn").
constexpr int32_t kSnapshotApplicationId = 0x4D4C736E;

// True when `path` is a SQLite file marked as a published snapshot (reads its
// 100-byte header; false for anything else, missing files included).
bool IsPublishedSnapshot(const std::string& path);

// The working copy that publishes to `published`:
// $MULTILANE_SYSTEM_WORK_DB when set and `published` is the system database
// (SystemDatabasePath), else `published` + ".work" in the same folder.
std::string WorkingCopyPath(const std::string& published);

// Opens the working copy of `published` read-write with a rollback journal.
// When the working copy does not exist yet and `published` does (a snapshot,
// or a database from before this scheme), the working copy starts as a copy
// of it, so publishing never loses profiles.  nullptr and *error (one line
// with the fix) on failure.
std::unique_ptr<ProfileStore> OpenWorkingCopy(const std::string& published, std::string* error);

}  // namespace mldb

#endif  // MLDB_SNAPSHOT_H_
