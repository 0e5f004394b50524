// resolve.h: find the profile for a job across the user's and the system's
// databases, without ever failing the job.
#ifndef MLDB_RESOLVE_H_
#define MLDB_RESOLVE_H_

#include <optional>
#include <string>
#include <vector>

#include "db/profile_store.h"

namespace mldb {

// Looks the profile up (ProfileStore::Find semantics: exact node type,
// library and MPI version; partition with fallback to partition-less) in each
// database of `database_paths_in_order`, opened read-only, and returns the
// first hit (DefaultDatabasePaths() gives the usual order: user, then system).
// Appends one line per database to *notes (when not null): a missing
// database ("no user database at PATH"), an unreadable or damaged one (the
// file, the problem and the fix), a miss, or the hit.  Never throws, never
// writes; returns nullopt when no database has a profile.
std::optional<ProfileRecord> ResolveProfile(const std::vector<std::string>& database_paths_in_order,
                                            const std::string& node_type_key, const std::string& partition,
                                            const std::string& library_version, const std::string& mpi_version,
                                            std::vector<std::string>* notes);

// The profile for a job of `partition` on whichever of its node types (for
// a submit host, which is not a node of the partition): a profile tuned on
// `partition`, else one tuned without a partition (as ProfileStore::Find
// falls back for one node type), of this library version
// and of one of `mpi_versions`; among several node types, the one with the
// fewest ranks per GPU, so that every node type has the CPUs for it.  The
// first database of `database_paths_in_order` with such a profile wins.
// Appends what it skipped to *notes (when not null); never throws.
std::optional<ProfileRecord> ResolvePartitionProfile(const std::vector<std::string>& database_paths_in_order,
                                                     const std::string& partition, const std::string& library_version,
                                                     const std::vector<std::string>& mpi_versions,
                                                     std::vector<std::string>* notes);

// The profile for a job that names no partition (`multilane run` outside an
// allocation) on a node of type `node_type_key`: ResolveProfile without a
// partition; on a miss, one tuned for a partition (`multilane tune
// --partition`) of this node type, library and MPI version, when the first
// database that has such profiles has them for one partition only.  On a
// miss *why_not (when not null) says in one line why, ending with the fix:
// the partitions to choose from (--partition), the profiles tuned with
// other versions (retune), or that none was tuned.  Notes as ResolveProfile.
std::optional<ProfileRecord> ResolveWithoutPartition(const std::vector<std::string>& database_paths_in_order,
                                                     const std::string& node_type_key,
                                                     const std::string& library_version, const std::string& mpi_version,
                                                     std::string* why_not, std::vector<std::string>* notes);

// The profiles of `profiles` that no job of this installation can get: for
// each node type and partition that has profiles but none of
// `library_version` and one of `mpi_versions` (multilane or the MPI changed
// since the tune), the newest of them.  In the order of `profiles`.
std::vector<ProfileRecord> OutdatedProfiles(const std::vector<ProfileRecord>& profiles,
                                            const std::string& library_version,
                                            const std::vector<std::string>& mpi_versions);

// "tuned with libmlallreduce V and MPI 'M'": what an outdated profile was
// tuned with, for messages.
std::string TunedWith(const ProfileRecord& profile);

}  // namespace mldb

#endif  // MLDB_RESOLVE_H_
