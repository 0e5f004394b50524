// mpi_families.h: the one table of the MPI families multilane serves, and the
// one rule that turns an MPI's version text into the key profiles are stored
// under.  A PMPI interposer is bound to its MPI's ABI, so each family has a
// build of its own (docs/admin.md, "MPI families"); everything that names a
// family, its files, its launcher or its flags reads it here: the front
// library, the family builds, the launcher, the probe and the benchmark.
// Later platforms add a row (or a field) here, nowhere else.
#ifndef MLVOCAB_MPI_FAMILIES_H_
#define MLVOCAB_MPI_FAMILIES_H_

#include <string>
#include <string_view>
#include <vector>

namespace mla {

enum class MpiFamily { kNeither, kOpenMpi, kMpich };

// What starts the ranks of a command.
enum class LauncherKind {
  kOpenMpi,  // Open MPI's mpirun/mpiexec/orterun/prterun: variables reach remote ranks only through -x NAME
  kHydra,    // MPICH's hydra (mpiexec.hydra, mpiexec.mpich, Intel MPI's mpirun): -genv NAME VALUE
  kSrun,     // Slurm's srun: exports the environment by default
  kOther,    // anything else (a wrapper script, the program itself): the environment alone
};

// One major version of a family's launcher that multilane knows, and what
// differs between them.  Open MPI 4 starts ranks with ORTE; Open MPI 5 with
// PRRTE, which reads PRTE_MCA_* variables (not OMPI_MCA_rmaps_*) and
// deprecates --oversubscribe; both take --map-by :OVERSUBSCRIBE.
struct LauncherGeneration {
  int major;                           // the launcher's major version (LauncherMajorVersion)
  std::string runtime;                 // what starts the ranks: "ORTE", "PRRTE", "hydra"
  std::string oversubscribe_variable;  // NAME=VALUE that lets this generation oversubscribe; "": none needed
  // The variable naming the folder this generation makes its session folder
  // in (TMPDIR's place); "": none.  ORTE's is ompi.HOST.UID, shared by a
  // user's launches, which can race for it ("mkdir ... File exists"); PRRTE's
  // is one per launch (prterun.HOST.PID.UID).
  std::string session_base_variable;
};

// One MPI family.
struct MpiFamilyInfo {
  MpiFamily family;
  std::string name;                        // "openmpi", "mpich": --mpi, file and package names
  std::vector<std::string> version_words;  // one of them is in MPI_Get_library_version's text
  std::vector<std::string> mpi_libraries;  // sonames of the family's MPI library (DT_NEEDED)
  std::string launcher;                    // its launcher outside Slurm, on PATH
  LauncherKind launcher_kind;
  std::string ranks_flag;                           // the launcher's flag for the number of ranks
  std::vector<std::string> launcher_version_words;  // one of them is in `LAUNCHER --version`
  std::vector<std::string> launcher_name_words;     // or in the launcher's (resolved) file name
  // Its launchers' own program names besides the generic mpirun and mpiexec:
  // a command whose file name starts with one is a launcher, and a file name
  // holding one names the family (as launcher_name_words do).
  std::vector<std::string> launcher_programs;
  // srun's --mpi= that makes its ranks one world ("": the cluster's
  // MpiDefault).  Without it, under MpiDefault=none, srun starts every task
  // as a world of its own.
  std::string srun_mpi;
  // The launcher's flags to start more ranks than a host has cores (tune's
  // probes on small hosts and virtual nodes), the same for every generation
  // below; {} where the launcher oversubscribes without being told (hydra).
  std::vector<std::string> oversubscribe_flags;
  std::vector<LauncherGeneration> generations;  // the launcher versions multilane was tested with
};

// The families, Open MPI (the default MPI) first.
const std::vector<MpiFamilyInfo>& MpiFamilies();

// The family called `name` ("openmpi", "mpich"); nullptr for any other name.
const MpiFamilyInfo* FindMpiFamily(std::string_view name);

// The row of `family`; Open MPI's for kNeither.
const MpiFamilyInfo& MpiFamilyRow(MpiFamily family);

// "openmpi or mpich": the names a --mpi option takes, for messages.
std::string MpiFamilyChoices();

// "srun --mpi=pmix for Open MPI, --mpi=pmi2 for MPICH": the srun type of
// every family that names one, for messages that tell how to make a Slurm
// step's tasks one MPI world.
std::string SrunMpiAdvice();

// Classifies the text of MPI_Get_library_version: "Open MPI" is kOpenMpi;
// MPICH and the MPIs of its ABI (MVAPICH, Intel MPI) are kMpich; anything
// else kNeither.
MpiFamily MpiFamilyFromVersion(std::string_view version);

// "openmpi", "mpich" or "neither".
const char* MpiFamilyName(MpiFamily family);

// File names of a family's parts, as the build installs them side by side;
// "" for a name no row of the table has.  The names come from the build
// (multilane_family_files in cmake/MultilaneMpiFamilies.cmake), their one
// owner, through a generated header.
std::string FamilyLibraryFile(const std::string& family);     // libmlallreduce-<family>.so.0
std::string FamilyCudaModuleFile(const std::string& family);  // libmlallreduce_cuda[-<family>].so
std::string FamilyProbeFile(const std::string& family);       // mlprobe[-<family>]

// The family the build names first (its programs carry no suffix); the
// table's first row must be the same family (a unit test checks it).
const char* BuildDefaultFamily();

// The major version in a launcher's or MPI library's version text: the first
// number followed by '.' and a digit ("mpirun (Open MPI) 5.0.7" is 5, "Open
// MPI v4.1.4" 4, hydra's "Version: 4.2.1" 4); 0 when there is none.
int LauncherMajorVersion(std::string_view version_text);

// The generation of `family`'s launcher with major version `major`; nullptr
// for one multilane does not know.
const LauncherGeneration* FindLauncherGeneration(const MpiFamilyInfo& family, int major);

// "4, 5": the major versions of `family`'s launcher that multilane knows, for messages.
std::string LauncherGenerationChoices(const MpiFamilyInfo& family);

// The MPI version key of profiles: the first line of a version text (up to
// CR, LF or NUL), tabs made spaces, trailing spaces and commas dropped.
// Every part that stores or looks up a profile builds the key with this.
std::string MpiVersionKey(std::string_view version_text);

}  // namespace mla

#endif  // MLVOCAB_MPI_FAMILIES_H_
