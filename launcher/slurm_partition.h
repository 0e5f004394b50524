// slurm_partition.h: the node types of a Slurm partition, read from `sinfo`,
// for `multilane tune --partition` (which submits one probe job per type).
#ifndef MULTILANE_LAUNCHER_SLURM_PARTITION_H_
#define MULTILANE_LAUNCHER_SLURM_PARTITION_H_

#include <string>
#include <vector>

namespace multilane {

// Nodes that Slurm describes alike: the same CPU count, generic resources
// and features.
struct SlurmNodeGroup {
  std::string cpus;      // sinfo %c
  std::string gres;      // sinfo %G, "(null)" when none
  std::string features;  // sinfo %f
  std::vector<std::string> nodes;
  int gpus = 0;  // GPUs per node from gres ("gpu:4", "gpu:h100:8(S:0-1)")
};

// The sinfo arguments whose output ParseSinfoNodeGroups reads.
std::vector<std::string> SinfoNodeArguments(const std::string& partition);

// Groups `sinfo -h -N -o %N|%c|%G|%f` lines by (cpus, gres, features), in
// order of first appearance; a node listed twice is kept once.  Malformed
// lines are skipped.
std::vector<SlurmNodeGroup> ParseSinfoNodeGroups(const std::string& sinfo_output);

// GPUs per node named by a gres string: the sum of its gpu counts (digits
// only; an item whose count is not a plain number adds nothing), at most
// 2^20; 0 when it names none.
int GpusInGres(const std::string& gres);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_SLURM_PARTITION_H_
