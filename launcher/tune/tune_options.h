// tune_options.h: the options of `multilane tune`, shared by the tune on this
// node (cmd_tune.cc) and the tune of a Slurm partition (tune_partition.cc).
#ifndef MULTILANE_LAUNCHER_TUNE_OPTIONS_H_
#define MULTILANE_LAUNCHER_TUNE_OPTIONS_H_

#include <chrono>
#include <string>

#include "vocab/mpi_families.h"

namespace multilane {

struct TuneOptions {
  double budget_s = 60;  // the whole tune, launch overheads included
  std::string sizes = "4K:64M";
  int step = 4;
  std::string memory = "auto";  // host, device, all, or auto (all where GPUs are present)
  int np = 0;
  int virtual_nodes = 0;
  std::string ranks_per_gpu;  // "" (default), one value, or a list "1,2,4,8"
  std::string weights;        // a job report whose calls per size weight the choice of ranks per GPU
  std::string partition;
  bool system = false;
  std::string database;
  bool exhaustive = false;
  std::string keep;
  bool allow_oversubscribed = false;
  // The MPI family to tune with: a name of vocab/mpi_families.cc (default: its first row's, Open MPI).
  std::string mpi = mla::MpiFamilies().front().name;
  bool for_system = false;  // hidden: a partition's probe job whose profile goes to the system database
};

// `multilane tune --partition P` outside an allocation: one Slurm batch job
// per node type of the partition, each a `multilane tune` in its allocation
// into a private database file; their profiles are then stored (and
// published) here.  The jobs get a time limit from the budget and are
// cancelled (scancel) when this command is interrupted or fails.  `start`:
// when the command started.
int TunePartition(const TuneOptions& opt, std::chrono::steady_clock::time_point start);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_OPTIONS_H_
