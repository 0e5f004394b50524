// store_target.cc: where writing commands store (store_target.h).
#include "launcher/store_target.h"

#include "db/paths.h"
#include "db/snapshot.h"

namespace multilane {

StoreTarget ChooseStoreTarget(const std::string& database, bool system) {
  StoreTarget t;
  if (!database.empty()) {
    t.path = database;
    t.publish = mldb::IsPublishedSnapshot(database);
  } else if (system) {
    t.path = mldb::SystemDatabasePath();
    t.publish = true;
  } else {
    t.path = mldb::UserDatabasePath();
  }
  return t;
}

std::unique_ptr<mldb::ProfileStore> OpenStoreTarget(const StoreTarget& target, std::string* error, bool rollback) {
  if (target.publish) return mldb::OpenWorkingCopy(target.path, error);
  return mldb::ProfileStore::Open(
      target.path, mldb::ProfileStore::Access::kReadWrite, error,
      rollback ? mldb::ProfileStore::Journal::kRollback : mldb::ProfileStore::Journal::kWal);
}

bool FinishStoreTarget(mldb::ProfileStore* store, const StoreTarget& target, std::string* error) {
  if (!target.publish) return true;
  if (store->PublishSnapshot(target.path, error)) return true;
  *error += " (the profiles are kept in the working copy " + store->path() + ")";
  return false;
}

}  // namespace multilane
