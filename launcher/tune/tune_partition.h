// tune_partition.h: `multilane tune --partition P` outside an allocation.
#ifndef MULTILANE_LAUNCHER_TUNE_PARTITION_H_
#define MULTILANE_LAUNCHER_TUNE_PARTITION_H_

#include <chrono>

#include "launcher/tune/tune_request.h"

namespace multilane {

// One Slurm batch job per node type of the partition, each a `multilane
// tune` of the same request in its allocation into a private database file;
// their profiles are then stored (and published) here.  The jobs get a time
// limit from the budget and are cancelled (scancel) when this command is
// interrupted or fails.  `start`: when the command started.
int TunePartition(const TuneRequest& request, std::chrono::steady_clock::time_point start);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_PARTITION_H_
