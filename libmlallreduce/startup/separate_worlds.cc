// separate_worlds.cc: a step's tasks as separate worlds (separate_worlds.h).
#include "libmlallreduce/startup/separate_worlds.h"

#include "vocab/mpi_families.h"

namespace mla::lib {

std::string SeparateWorldsLine(int step_tasks, int world_size, bool spawned) {
  if (step_tasks <= 1 || world_size != 1 || spawned) return "";
  return "this Slurm step has " + std::to_string(step_tasks) +
         " tasks, but each runs as an MPI world of 1 rank: srun's --mpi does not match this MPI, so the tasks do "
         "not communicate and multilane has nothing to speed up; run " +
         mla::SrunMpiAdvice() + " (or ask the admin for that MpiDefault in slurm.conf)";
}

}  // namespace mla::lib
