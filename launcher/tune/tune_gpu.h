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

#include "launcher/tune/tune_request.h"
#include "tuner/candidates.h"
#include "tuner/search.h"
#include "vocab/price.h"

namespace multilane {

// The memory kinds of `--memory` (kAuto: all where the node has GPUs, else
// host).  `gpus` is the node's GPU count.  False with *error (naming the
// option and the fix) for device memory without GPUs.
bool ResolveTuneMemory(TuneMemory memory, int gpus, std::vector<mltuner::MemKind>* kinds, std::string* error);

// Whether `--np` (0: not given) may be given to a tune that launches once
// per ranks-per-GPU value: `device` (it measures device memory) or a list of
// several values.  False with *error naming the cause and the fix (leave
// --np out; for a host tune of that many ranks, --memory host).
bool CheckNpPerGpu(int np, bool device, std::string* error);

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

// The objective of one ranks-per-GPU value.  Without a job's calls: the sum
// over the sizes every launch measured of the time the profile would run at
// that size (the decision's time: the winner, or the system MPI where it was
// kept), `sizes` of them.  With a job's calls (--weights): mla::PriceCalls of
// them under the entries this value's decisions make (tuner MakeBins), the
// rule of the report's ranks-per-GPU advice: each bin's calls x the time
// priced at its mean message size; `sizes` is then the bins priced.
struct RanksPerGpuScore {
  int ranks_per_gpu = 0;
  double total_us = 0;
  int sizes = 0;
  int extrapolated = 0;  // with calls: bins priced beyond the probed sizes of their entry
};

// Scores each value of `decisions` (ranks per GPU -> its launch's decisions)
// and returns the value with the lowest total (ties: the fewer ranks per GPU);
// 0 when `decisions` is empty.  Device sizes (and calls) when any device size
// was measured (the layout is for device buffers), else host ones.  Without
// `calls`, only sizes measured by every value count, so the totals compare
// like with like; with `calls`, a value whose entries cannot price every bin
// of the kind is not recommended.
int RecommendRanksPerGpu(const std::map<int, std::vector<mltuner::Decision>>& decisions,
                         const std::vector<mla::BinCalls>& calls, std::vector<RanksPerGpuScore>* scores);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_GPU_H_
