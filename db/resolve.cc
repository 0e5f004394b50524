// resolve.cc: profile lookup across databases.
#include "db/resolve.h"

#include <errno.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>

#include "db/paths.h"

namespace mldb {

namespace {

// "user database", "system database" or "database", for notes.
std::string Label(const std::string& path) {
  if (path == UserDatabasePath()) return "user database";
  if (path == SystemDatabasePath()) return "system database";
  return "database";
}

}  // namespace

std::optional<ProfileRecord> ResolveProfile(const std::vector<std::string>& database_paths_in_order,
                                            const std::string& node_type_key,
                                            const std::string& partition,
                                            const std::string& library_version,
                                            const std::string& mpi_version,
                                            std::vector<std::string>* notes) {
  auto note = [notes](const std::string& line) {
    if (notes != nullptr) notes->push_back(line);
  };
  try {
    for (const std::string& path : database_paths_in_order) {
      if (path.empty()) continue;
      const std::string label = Label(path);
      struct stat st;
      if (stat(path.c_str(), &st) != 0 && errno == ENOENT) {
        note("no " + label + " at " + path);
        continue;
      }
      std::string error;
      auto store = ProfileStore::Open(path, ProfileStore::Access::kReadOnly, &error);
      if (store == nullptr) {
        note("skipping " + label + ": " + error);
        continue;
      }
      auto found = store->Find(node_type_key, partition, library_version, mpi_version, &error);
      if (!error.empty()) {
        note("skipping " + label + ": " + error);
        continue;
      }
      const std::string what = "node type " + node_type_key +
                               (partition.empty() ? "" : ", partition " + partition) +
                               ", library " + library_version + ", MPI " + mpi_version;
      if (!found) {
        note("no profile for " + what + " in " + label + " " + path);
        continue;
      }
      note("using profile " + std::to_string(found->id) + " (tuned " + found->tuned_at +
           (found->partition.empty() ? "" : " on partition " + found->partition) + ") for " +
           what + " from " + label + " " + path);
      return found;
    }
  } catch (const std::exception& e) {
    note(std::string("profile lookup failed: ") + e.what());
  } catch (...) {
    note("profile lookup failed");
  }
  return std::nullopt;
}

std::optional<ProfileRecord> ResolvePartitionProfile(const std::vector<std::string>& database_paths_in_order,
                                                     const std::string& partition,
                                                     const std::string& library_version,
                                                     const std::vector<std::string>& mpi_versions,
                                                     std::vector<std::string>* notes) {
  try {
    for (const std::string& path : database_paths_in_order) {
      std::string error;
      auto store = ProfileStore::Open(path, ProfileStore::Access::kReadOnly, &error);
      if (store == nullptr) {
        if (notes != nullptr) notes->push_back(error);
        continue;
      }
      const std::vector<ProfileRecord> all = store->List(&error);
      std::optional<ProfileRecord> best;
      for (const std::string& wanted : {partition, std::string()}) {  // the partition's own, else partition-less
        for (const ProfileRecord& p : all) {
          if (p.partition != wanted || p.library_version != library_version) continue;
          if (std::find(mpi_versions.begin(), mpi_versions.end(), p.mpi_version) == mpi_versions.end()) continue;
          if (!best || p.ranks_per_gpu < best->ranks_per_gpu) best = p;
        }
        if (best) return best;
      }
    }
  } catch (const std::exception& e) {
    if (notes != nullptr) notes->push_back(std::string("profile lookup failed: ") + e.what());
  }
  return std::nullopt;
}

}  // namespace mldb
