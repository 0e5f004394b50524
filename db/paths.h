// paths.h: where the profile databases live.
#ifndef MLDB_PATHS_H_
#define MLDB_PATHS_H_

#include <string>
#include <vector>

namespace mldb {

// The shared database the admin tunes into: $MULTILANE_SYSTEM_DB when set and
// not empty, else the configured one (MULTILANE_SYSTEM_DATABASE at build time,
// /var/lib/multilane/profiles.db unless the admin chose another).
std::string SystemDatabasePath();

// The calling user's own database: $MULTILANE_USER_DB when set and not empty,
// else $XDG_STATE_HOME/multilane/profiles.db when XDG_STATE_HOME is an
// absolute path, else $HOME/.local/state/multilane/profiles.db, else "" (no
// HOME: no user database).
std::string UserDatabasePath();

// The history inbox of the database at `database`: the folder `history`
// beside it, into which `multilane run` has jobs drop their reports
// (MULTILANE_HISTORY) and which `multilane history` records and empties; ""
// for "".
std::string HistoryInboxOf(const std::string& database);

// HistoryInboxOf(UserDatabasePath()).
std::string UserHistoryInboxPath();

// The lookup order for ResolveProfile: the user database (when there is one),
// then the system database.
std::vector<std::string> DefaultDatabasePaths();

}  // namespace mldb

#endif  // MLDB_PATHS_H_
