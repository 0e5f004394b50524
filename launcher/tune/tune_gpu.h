// tune_gpu.h: the pure parts of tuning GPU nodes (issue: device-memory probes
// and ranks per GPU as a tuned dimension).  No MPI, no processes: which
// memory kinds a tune measures, which ranks-per-GPU values it launches, how
// many ranks each launch has, and which value it recommends.
#ifndef MULTILANE_LAUNCHER_TUNE_GPU_H_
#define MULTILANE_LAUNCHER_TUNE_GPU_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tuner/candidates.h"
#include "tuner/search.h"

namespace multilane {

// The memory kinds of `--memory` ("host", "device", "all", or "auto": all
// where the node has GPUs, else host).  `gpus` is the node's GPU count.  False
// with *error (naming the option and the fix) for device memory without GPUs
// or an unknown word.
bool ResolveTuneMemory(const std::string& memory, int gpus, std::vector<mltuner::MemKind>* kinds,
                       std::string* error);

// A --ranks-per-gpu list: mla::ParseRanksPerGpuList (vocab/ranks_per_gpu.h).

// The default list: powers of two up to min(8, cores per GPU), at least {1}.
std::vector<int> DefaultRanksPerGpuList(int cores, int gpus);

// One probe launch of a tune: `ranks_per_gpu` ranks on each GPU of each of
// `nodes` nodes (real or virtual).  `skip` is non-empty when the launch
// cannot run (fewer than 2 ranks in all, more ranks on a node than its
// cores) and says why.
struct TuneLaunch {
  int ranks_per_gpu = 1;
  int np = 0;
  int ranks_per_node = 0;
  std::string skip;
};

// The launches for `values` on `nodes` nodes of `gpus` GPUs (at least 1) and
// `cores` usable cores each; `allow_oversubscribed` keeps launches with more
// ranks per node than cores.
std::vector<TuneLaunch> PlanLaunches(const std::vector<int>& values, int nodes, int gpus, int cores,
                                     bool allow_oversubscribed);

// Weight per (memory kind, size) of the objective; empty: every size 1.
using SizeWeights = std::map<std::pair<mltuner::MemKind, uint64_t>, double>;

// Weights from a job's calls per size bin: each bin's calls go to the tuned
// size of its memory kind nearest to the bin (geometric middle of [from, to),
// log distance).  `bins`: (memory kind, from, to (0: no bound), calls).
struct CallBin {
  mltuner::MemKind mem = mltuner::MemKind::kHost;
  uint64_t from = 0;
  uint64_t to = 0;
  double calls = 0;
};
SizeWeights WeightsFromCalls(const std::vector<CallBin>& bins,
                             const std::vector<std::pair<mltuner::MemKind, uint64_t>>& tuned_sizes);

// The objective of one ranks-per-GPU value: the weighted sum over the sizes
// every launch measured of the time the profile would run at that size (the
// decision's time: the winner, or the system MPI where it was kept).
struct RanksPerGpuScore {
  int ranks_per_gpu = 0;
  double total_us = 0;
  int sizes = 0;
};

// Scores each value of `decisions` (ranks per GPU -> its launch's decisions)
// and returns the value with the lowest total (ties: the fewer ranks per GPU);
// 0 when `decisions` is empty.  Only sizes measured by every value count, so
// the totals compare like with like; device sizes when any were measured
// (the layout is for device buffers), else host sizes.
int RecommendRanksPerGpu(const std::map<int, std::vector<mltuner::Decision>>& decisions, const SizeWeights& weights,
                         std::vector<RanksPerGpuScore>* scores);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_GPU_H_
