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
                                            const std::string& node_type_key,
                                            const std::string& partition,
                                            const std::string& library_version,
                                            const std::string& mpi_version,
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
                                                     const std::string& partition,
                                                     const std::string& library_version,
                                                     const std::vector<std::string>& mpi_versions,
                                                     std::vector<std::string>* notes);

}  // namespace mldb

#endif  // MLDB_RESOLVE_H_
