// paths.cc: database locations from the environment.
#include "db/paths.h"

#include <cstdlib>

#include "multilane/install_paths.h"  // generated: kSystemDatabase

namespace mldb {

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

std::string SystemDatabasePath() {
  std::string v = Env("MULTILANE_SYSTEM_DB");
  return v.empty() ? multilane_install::kSystemDatabase : v;
}

std::string UserDatabasePath() {
  std::string v = Env("MULTILANE_USER_DB");
  if (!v.empty()) return v;
  // The XDG spec says relative values are invalid and must be ignored.
  std::string state = Env("XDG_STATE_HOME");
  if (!state.empty() && state[0] == '/') return state + "/multilane/profiles.db";
  std::string home = Env("HOME");
  if (!home.empty()) return home + "/.local/state/multilane/profiles.db";
  return "";
}

std::string HistoryInboxOf(const std::string& database) {
  if (database.empty()) return "";
  const size_t slash = database.rfind('/');
  return (slash == std::string::npos ? std::string(".") : database.substr(0, slash)) + "/history";
}

std::string UserHistoryInboxPath() { return HistoryInboxOf(UserDatabasePath()); }

std::vector<std::string> DefaultDatabasePaths() {
  std::vector<std::string> paths;
  std::string user = UserDatabasePath();
  if (!user.empty()) paths.push_back(user);
  paths.push_back(SystemDatabasePath());
  return paths;
}

}  // namespace mldb
