// context.h: what every subcommand of `multilane` needs to know about this
// machine and this installation.
#ifndef MULTILANE_LAUNCHER_CONTEXT_H_
#define MULTILANE_LAUNCHER_CONTEXT_H_

#include <string>
#include <vector>

namespace multilane {

// Where the parts live.  $MULTILANE_LIBRARY and $MULTILANE_PROBE override;
// else the build's own outputs (a build tree), else next to the command
// (`../lib/libmlallreduce.so`, `mlprobe` beside `multilane`).
struct Installation {
  std::string library;  // libmlallreduce.so
  std::string probe;    // mlprobe
};
Installation FindInstallation();

// The first line of MPI_Get_library_version (callable before MPI_Init).
std::string MpiLibraryVersion();

// The version of libmlallreduce this command belongs to; profiles made by
// another version are misses.
std::string LibraryVersion();

// The user name of the effective uid ("uid N" when it has none).
std::string CurrentUser();

// Now, UTC, ISO 8601 ("2026-11-29T20:10:00Z").
std::string UtcNow();

// True inside a Slurm allocation (SLURM_JOB_ID is set).
bool InSlurmAllocation();

// The databases to read, in order: `explicit_paths` when not empty, else the
// user's then the system's (mldb::DefaultDatabasePaths).
std::vector<std::string> DatabasesToRead(const std::vector<std::string>& explicit_paths);

// Prints "multilane: error: MESSAGE" on stderr; returns 1 (the exit status).
int Fail(const std::string& message);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_CONTEXT_H_
