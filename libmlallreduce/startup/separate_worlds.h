// separate_worlds.h: a Slurm step whose tasks did not become one MPI world.
// srun with a --mpi type that does not match the MPI (MpiDefault=none, or
// pmix for MPICH) starts every task as a world of one rank: the job runs,
// each task alone, and nothing of multilane's can tell it from a one-rank
// job except the step's size, which the Slurm plugin hands over
// (MULTILANE_STEP_TASKS).
#ifndef MLA_STARTUP_SEPARATE_WORLDS_H_
#define MLA_STARTUP_SEPARATE_WORLDS_H_

#include <string>

namespace mla::lib {

// The one line that says a step of `step_tasks` tasks runs as separate
// worlds, with the fix; "" when it does not: the step's size is not known
// (0), the world has the step's tasks or more than one rank (an MPMD part,
// a world of several), or it was spawned (`spawned`: MPI_Comm_get_parent is
// not null).  Printed by the step's task 0 only, so a step sees it once.
std::string SeparateWorldsLine(int step_tasks, int world_size, bool spawned);

}  // namespace mla::lib

#endif  // MLA_STARTUP_SEPARATE_WORLDS_H_
