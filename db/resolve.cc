// resolve.cc: profile lookup across databases.
#include "db/resolve.h"

#include <errno.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <map>
#include <set>
#include <utility>

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
                                            const std::string& node_type_key, const std::string& partition,
                                            const std::string& library_version, const std::string& mpi_version,
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
      const std::string what = "node type " + node_type_key + (partition.empty() ? "" : ", partition " + partition) +
                               ", library " + library_version + ", MPI " + mpi_version;
      if (!found) {
        note("no profile for " + what + " in " + label + " " + path);
        continue;
      }
      note("using profile " + std::to_string(found->id) + " (tuned " + found->tuned_at +
           (found->partition.empty() ? "" : " on partition " + found->partition) + ") for " + what + " from " + label +
           " " + path);
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
                                                     const std::string& partition, const std::string& library_version,
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

std::vector<ProfileRecord> OutdatedProfiles(const std::vector<ProfileRecord>& profiles,
                                            const std::string& library_version,
                                            const std::vector<std::string>& mpi_versions) {
  std::set<std::pair<std::string, std::string>> served;
  for (const ProfileRecord& p : profiles)
    if (p.library_version == library_version &&
        std::find(mpi_versions.begin(), mpi_versions.end(), p.mpi_version) != mpi_versions.end())
      served.insert({p.node_type_key, p.partition});
  std::map<std::pair<std::string, std::string>, size_t> newest;  // group -> index into profiles
  for (size_t i = 0; i < profiles.size(); ++i) {
    const std::pair<std::string, std::string> group{profiles[i].node_type_key, profiles[i].partition};
    if (served.count(group)) continue;
    auto it = newest.find(group);
    if (it == newest.end())
      newest[group] = i;
    else if (std::make_pair(profiles[i].tuned_at, profiles[i].id) >
             std::make_pair(profiles[it->second].tuned_at, profiles[it->second].id))
      it->second = i;
  }
  std::vector<size_t> picked;
  for (const auto& [group, index] : newest) picked.push_back(index);
  std::sort(picked.begin(), picked.end());
  std::vector<ProfileRecord> out;
  for (size_t i : picked) out.push_back(profiles[i]);
  return out;
}

std::string TunedWith(const ProfileRecord& profile) {
  return "tuned with libmlallreduce " + profile.library_version + " and MPI '" + profile.mpi_version + "'";
}

namespace {

// Why a job on `node_type_key` without a partition found nothing in `all`
// (one database's profiles): "" when `all` has none of this node type.
std::string WhyNoProfile(const std::vector<ProfileRecord>& all, const std::string& node_type_key,
                         const std::string& library_version, const std::string& mpi_version, const std::string& label) {
  std::vector<ProfileRecord> mine;
  for (const ProfileRecord& p : all)
    if (p.node_type_key == node_type_key) mine.push_back(p);
  if (mine.empty()) return "";
  std::set<std::string> partitions;
  for (const ProfileRecord& p : mine)
    if (!p.partition.empty() && p.library_version == library_version && p.mpi_version == mpi_version)
      partitions.insert(p.partition);
  if (partitions.size() > 1) {
    std::string names;
    for (const std::string& n : partitions) names += (names.empty() ? "" : ", ") + n;
    return "the " + label + " has profiles of this node type for partitions " + names +
           ": give the job's partition with --partition NAME";
  }
  const std::vector<ProfileRecord> old = OutdatedProfiles(mine, library_version, {mpi_version});
  if (old.empty()) return "";
  const ProfileRecord& p = old.front();
  return "profile " + std::to_string(p.id) + " of this node type" +
         (p.partition.empty() ? "" : " (partition " + p.partition + ")") + " in the " + label + " was " + TunedWith(p) +
         ", not libmlallreduce " + library_version + " and MPI '" + mpi_version +
         "': every job misses it; tune again (`multilane tune" +
         (p.partition.empty() ? std::string() : " --partition " + p.partition) + "`)";
}

}  // namespace

std::optional<ProfileRecord> ResolveWithoutPartition(const std::vector<std::string>& database_paths_in_order,
                                                     const std::string& node_type_key,
                                                     const std::string& library_version, const std::string& mpi_version,
                                                     std::string* why_not, std::vector<std::string>* notes) {
  auto found = ResolveProfile(database_paths_in_order, node_type_key, "", library_version, mpi_version, notes);
  if (found) return found;
  std::string why;
  try {
    for (const std::string& path : database_paths_in_order) {
      struct stat st;
      if (path.empty() || stat(path.c_str(), &st) != 0) continue;
      std::string error;
      auto store = ProfileStore::Open(path, ProfileStore::Access::kReadOnly, &error);
      if (store == nullptr) continue;  // ResolveProfile noted it
      const std::vector<ProfileRecord> all = store->List(&error);
      std::set<std::string> partitions;
      for (const ProfileRecord& p : all)
        if (p.node_type_key == node_type_key && !p.partition.empty() && p.library_version == library_version &&
            p.mpi_version == mpi_version)
          partitions.insert(p.partition);
      if (partitions.size() == 1) {
        found = store->Find(node_type_key, *partitions.begin(), library_version, mpi_version, &error);
        if (found) {
          if (notes != nullptr)
            notes->push_back("using profile " + std::to_string(found->id) + " of partition " + found->partition +
                             ", the only partition with a profile of node type " + node_type_key + " in " +
                             Label(path) + " " + path + " (--partition chooses another)");
          return found;
        }
      }
      if (why.empty()) why = WhyNoProfile(all, node_type_key, library_version, mpi_version, Label(path) + " " + path);
    }
  } catch (const std::exception& e) {
    if (notes != nullptr) notes->push_back(std::string("profile lookup failed: ") + e.what());
  }
  if (why_not != nullptr)
    *why_not = why.empty() ? "no database has a profile of node type " + node_type_key +
                                 " for any partition: `multilane tune` makes one"
                           : why;
  return std::nullopt;
}

}  // namespace mldb
