// context.h: what every subcommand of `multilane` needs to know about this
// machine and this installation.
#ifndef MULTILANE_LAUNCHER_CONTEXT_H_
#define MULTILANE_LAUNCHER_CONTEXT_H_

#include <string>
#include <vector>

namespace multilane {

// Where the parts live.  A `multilane` run from its build tree uses the
// build's own outputs; an installed one finds them relative to its own file
// (/proc/self/exe), with the layout of the install (install_paths.h), so a
// moved tree still works and an installed command never uses a build tree.
// $MULTILANE_LIBRARY and $MULTILANE_PROBE override the library and the probe.
struct Installation {
  std::string command;      // this program (/proc/self/exe)
  bool build_tree = false;  // true: run from the build tree, not installed
  std::string library;      // libmlallreduce.so.0
  std::string cuda_module;  // the CUDA module beside the library (mla::FamilyCudaModuleFile)
  std::string probe;        // mlprobe
  std::string plugin;       // spank_multilane.so
  std::string cli_filter;   // the cli_filter.lua shipped with this install
  std::string plugstack;    // the plugstack.conf.d/multilane.conf shipped with this install
};
Installation FindInstallation();

// The first line of MPI_Get_library_version (callable before MPI_Init).
std::string MpiLibraryVersion();

// The version of libmlallreduce this command belongs to; profiles made by
// another version are misses.
std::string LibraryVersion();

// The user name of the effective uid ("uid N" when it has none).
std::string CurrentUser();

// True inside a Slurm allocation (SLURM_JOB_ID is set).
bool InSlurmAllocation();

// True when a job started from here keeps all its ranks on this node: its
// launcher is not srun (`launcher_is_srun`: srun's tasks are Slurm's) and
// no allocation of several nodes is around it.  What this process sets up
// on this node (a private MPS daemon) serves only such a job.
bool RanksStayOnThisNode(bool launcher_is_srun);

// The databases to read, in order: `explicit_paths` when not empty, else the
// user's then the system's (mldb::DefaultDatabasePaths).
std::vector<std::string> DatabasesToRead(const std::vector<std::string>& explicit_paths);

// The database whose job history a command keeps or reads (docs/history.md):
// the first of `explicit_paths` (--db) when given, else the user's
// (mldb::UserDatabasePath; "" without HOME).  Its inbox is
// mldb::HistoryInboxOf of it.
std::string HistoryDatabase(const std::vector<std::string>& explicit_paths);

// Prints "multilane: error: MESSAGE" on stderr; returns 1 (the exit status).
int Fail(const std::string& message);

// A profile header's values: mla::ProfileHeaderValue (vocab/profile.h); a
// ranks-per-GPU list: mla::InRanksPerGpuList (vocab/ranks_per_gpu.h).

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_CONTEXT_H_
