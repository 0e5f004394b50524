// mpi_choice.h: the MPI families as the `multilane` command meets them, in
// one table: which family a job of `multilane run` / `multilane tune` uses,
// what its launcher is and how that launcher hands variables to the ranks,
// and the family's version and probe.  The injected front libmlallreduce.so
// picks the family build inside each process by itself; the command needs
// the family to look up (or tune) the profile of the job's MPI, since
// profiles of one MPI are misses for another (docs/admin.md, "MPI
// families"), and the launcher's kind to hand the ranks the library.
#ifndef MULTILANE_LAUNCHER_MPI_CHOICE_H_
#define MULTILANE_LAUNCHER_MPI_CHOICE_H_

#include <string>
#include <vector>

#include "vocab/mpi_families.h"

namespace multilane {

// What starts the ranks of a command (the family table's kinds).
using LauncherKind = mla::LauncherKind;

// The kind of launcher of `command` (its first word, looked up on PATH).
// srun by name; a program named like an MPI launcher (mpirun, mpiexec,
// orterun, prterun, with any suffix, or a link to one) by what it is: what
// `PROGRAM --version` prints, else the name its links lead to (hydra, mpich,
// openmpi, orterun); anything else kOther.  An MPI launcher that cannot be
// told is kOther, with *note (when not null) saying so and what to do.
LauncherKind KindOfLauncher(const std::vector<std::string>& command, std::string* note);

// Returns `command` with the flags that hand `variables` (names of variables
// set in this process's environment) to every rank, right after the
// launcher's name: "-x NAME" for Open MPI, "-genv NAME VALUE" for hydra;
// unchanged for srun and others, which pass the environment as it is.
std::vector<std::string> ForwardVariables(LauncherKind kind, const std::vector<std::string>& command,
                                          const std::vector<std::string>& variables);

// The family of a job whose launcher is of kind `launcher` (KindOfLauncher):
// `requested` when it names one (mla::FindMpiFamily); for "auto" (or ""),
// `program_family` when not empty (FamilyOfCommand), else the family whose
// launcher is of that kind, else Open MPI.  Any other `requested` gives ""
// and *error says what is allowed.
std::string JobMpiFamily(const std::string& requested, LauncherKind launcher, const std::string& program_family,
                         std::string* error);

// The family named by the job's program (its DT_NEEDED names a family's MPI
// library, or it is a family's launcher process such as hydra_pmi_proxy), found as the program's shell would find it:
// `program` itself when it holds a '/', relative to `dir`; else the first executable of that name on `path`.  "" when
// it cannot tell (a script, python, a static program).
std::string FamilyOfProgram(const std::string& program, const std::string& path, const std::string& dir);

// The family of the program a command runs, for a launcher that does not
// say it: the command itself (kOther), or srun's program (the first word
// after srun that FamilyOfProgram knows); "" otherwise.
std::string FamilyOfCommand(const std::vector<std::string>& command, LauncherKind launcher);

// The probe program of `family` beside `probe` (mla::FamilyProbeFile).
std::string ProbeOfFamily(const std::string& probe, const std::string& family);

// The first line of `family`'s MPI version: this command's own MPI for
// openmpi, else what `PROBE --mpi-version` prints.  "" with *error set when
// the probe cannot tell.
std::string MpiVersionOfFamily(const std::string& family, const std::string& probe, std::string* error);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_MPI_CHOICE_H_
