// mpi_choice.h: which MPI family a job of `multilane run` / `multilane tune`
// uses, and that family's version and probe.  The injected front
// libmlallreduce.so picks the family build inside each process by itself;
// the command needs the family only to look up (or tune) the profile of the
// job's MPI, since profiles of one MPI are misses for another (docs/admin.md,
// "MPI families").
#ifndef MULTILANE_LAUNCHER_MPI_CHOICE_H_
#define MULTILANE_LAUNCHER_MPI_CHOICE_H_

#include <string>
#include <vector>

namespace multilane {

// "openmpi" or "mpich" for a job's command: `requested` when it is one of
// them; for "auto" (or ""), "mpich" when the command's program (its first
// word, looked up on PATH, links followed) is MPICH's hydra (mpiexec.mpich,
// mpirun.mpich, mpiexec.hydra), else "openmpi".  Any other `requested`
// gives "" and *error says what is allowed.
std::string JobMpiFamily(const std::string& requested, const std::vector<std::string>& command, std::string* error);

// The probe program of `family`: `probe` itself for openmpi, mlprobe-<family>
// beside it for the others.
std::string ProbeOfFamily(const std::string& probe, const std::string& family);

// The MPI launcher for probes of `family` outside Slurm: mpirun (Open MPI, the
// default MPI) or mpiexec.mpich.
std::string LauncherOfFamily(const std::string& family);

// The first line of `family`'s MPI version: this command's own MPI for
// openmpi, else what `PROBE --mpi-version` prints.  "" with *error set when
// the probe cannot tell.
std::string MpiVersionOfFamily(const std::string& family, const std::string& probe, std::string* error);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_MPI_CHOICE_H_
