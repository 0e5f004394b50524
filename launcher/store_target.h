// store_target.h: the database a writing command (`tune`, `import`) stores
// into, and how: written in place (a user's database, WAL on a local disk),
// or through the working copy of a published snapshot (the system database,
// which may sit on a shared file system: db/snapshot.h).
#ifndef MULTILANE_LAUNCHER_STORE_TARGET_H_
#define MULTILANE_LAUNCHER_STORE_TARGET_H_

#include <memory>
#include <string>

#include "db/profile_store.h"

namespace multilane {

struct StoreTarget {
  std::string path;      // what readers open (the published file, or the database itself)
  bool publish = false;  // written through WorkingCopyPath(path), then published as a snapshot
};

// --db `database` when not empty (published through a working copy when it
// already is a published snapshot), else the system database (published)
// when `system`, else the user's database (in place).  `path` is "" when
// there is no user database (no HOME).
StoreTarget ChooseStoreTarget(const std::string& database, bool system);

// Opens the store to write: the database itself (WAL, or a rollback journal
// when `rollback`: a file on a shared file system written by one process,
// such as a partition probe job's own result), or the target's working copy
// (always a rollback journal).  nullptr and *error on failure.
std::unique_ptr<mldb::ProfileStore> OpenStoreTarget(const StoreTarget& target, std::string* error,
                                                    bool rollback = false);

// After writing: publishes the working copy as the new snapshot when the
// target is published; nothing to do otherwise.  false and *error on failure
// (what was written stays in the working copy).
bool FinishStoreTarget(mldb::ProfileStore* store, const StoreTarget& target, std::string* error);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_STORE_TARGET_H_
