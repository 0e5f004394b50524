// tune_gpu.cc: the pure parts of tuning GPU nodes (tune_gpu.h).
#include "launcher/tune/tune_gpu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>

#include "vocab/refuse.h"
#include "vocab/terminal_text.h"

namespace multilane {

using mltuner::MemKind;

bool ResolveTuneMemory(TuneMemory memory, int gpus, std::vector<MemKind>* kinds, std::string* error) {
  kinds->clear();
  if ((memory == TuneMemory::kDevice || memory == TuneMemory::kAll) && gpus <= 0)
    return mla::Refuse(
        error, std::string("--memory ") + TuneMemoryName(memory) +
                   ": this node has no GPU that NVML reports (or no NVIDIA driver), so there is no device memory to "
                   "measure; tune --memory host here, and device memory on a GPU node");
  if (memory != TuneMemory::kDevice) kinds->push_back(MemKind::kHost);
  if (memory == TuneMemory::kDevice || memory == TuneMemory::kAll || (memory == TuneMemory::kAuto && gpus > 0))
    kinds->push_back(MemKind::kDevice);
  return true;
}

bool CheckNpPerGpu(int np, bool device, std::string* error) {
  if (np <= 0) return true;
  const std::string n = std::to_string(np);
  if (device)
    return mla::Refuse(error, "--np " + n +
                                  " cannot be given with device memory (--memory auto and all measure it on a node "
                                  "with GPUs): each launch has (ranks per GPU) x (GPUs per node) x (nodes) ranks; for "
                                  "a host tune of " +
                                  n + " ranks give --memory host, else leave --np out");
  return mla::Refuse(error, "--np " + n +
                                " cannot be given with several --ranks-per-gpu values: each launch has (ranks per "
                                "GPU) x (GPUs per node) x (nodes) ranks; leave --np out, or give one value");
}

std::vector<int> DefaultRanksPerGpuList(int cores, int gpus) {
  const int per_gpu = std::max(1, cores / std::max(1, gpus));
  std::vector<int> out;
  for (int v = 1; v <= std::min(8, per_gpu); v *= 2) out.push_back(v);
  return out;
}

std::vector<TuneLaunch> PlanLaunches(const std::vector<int>& values, int nodes, int gpus, int cores,
                                     bool allow_oversubscribed) {
  std::vector<TuneLaunch> out;
  nodes = std::max(1, nodes);
  gpus = std::max(1, gpus);
  for (int v : values) {
    TuneLaunch l;
    l.ranks_per_gpu = v;
    l.ranks_per_node = v * gpus;
    l.np = l.ranks_per_node * nodes;
    if (l.np < 2) {
      l.skip =
          "1 rank in all (1 node, 1 GPU, 1 rank per GPU) has nothing to reduce; give --virtual-nodes 2 to "
          "measure it";
    } else if (l.ranks_per_node > cores && !allow_oversubscribed) {
      l.skip = std::to_string(l.ranks_per_node) + " ranks per node exceed its " + mla::CountOf(cores, "usable core");
    }
    out.push_back(l);
  }
  return out;
}

namespace {

// The memory kind the layout is for: device when any device size was measured.
MemKind LayoutKind(const std::map<int, std::vector<mltuner::Decision>>& decisions) {
  for (const auto& [v, ds] : decisions)
    for (const auto& d : ds)
      if (d.mem == MemKind::kDevice) return MemKind::kDevice;
  return MemKind::kHost;
}

// The equal-weight sum over the sizes of `kind` every value measured.
RanksPerGpuScore SumOverCommonSizes(const std::map<int, std::vector<mltuner::Decision>>& decisions, MemKind kind,
                                    int value) {
  std::map<uint64_t, int> measured_by;
  for (const auto& [v, ds] : decisions) {
    std::set<uint64_t> mine;
    for (const auto& d : ds)
      if (d.mem == kind) mine.insert(d.bytes);
    for (uint64_t b : mine) ++measured_by[b];
  }
  RanksPerGpuScore s;
  s.ranks_per_gpu = value;
  for (const auto& d : decisions.at(value)) {
    if (d.mem != kind || measured_by[d.bytes] != static_cast<int>(decisions.size())) continue;
    s.total_us += d.time_us;
    ++s.sizes;
  }
  return s;
}

// The job's calls of `kind` priced under the entries `ds` make.
RanksPerGpuScore PriceJobCalls(const std::vector<mltuner::Decision>& ds, const std::vector<mla::BinCalls>& calls,
                               MemKind kind, int value) {
  const mla::MemKind vkind = kind == MemKind::kDevice ? mla::MemKind::kDevice : mla::MemKind::kHost;
  std::vector<mltuner::Decision> mine;
  for (const auto& d : ds)
    if (d.mem == kind) mine.push_back(d);
  std::vector<mla::ProfileEntry> entries;
  for (const mltuner::Bin& b : mltuner::MakeBins(mine)) entries.push_back(mltuner::PricingEntry(b));
  std::vector<mla::BinCalls> of_kind;
  for (const mla::BinCalls& c : calls)
    if (c.kind == vkind) of_kind.push_back(c);
  const mla::CallsPrice price = mla::PriceCalls(entries, of_kind);
  RanksPerGpuScore s;
  s.ranks_per_gpu = value;
  s.total_us = price.total_us;
  s.sizes = price.complete ? price.bins : 0;  // an incomplete price is not recommended
  s.extrapolated = price.extrapolated;
  return s;
}

}  // namespace

int RecommendRanksPerGpu(const std::map<int, std::vector<mltuner::Decision>>& decisions,
                         const std::vector<mla::BinCalls>& calls, std::vector<RanksPerGpuScore>* scores) {
  scores->clear();
  if (decisions.empty()) return 0;
  const MemKind kind = LayoutKind(decisions);
  int best = 0;
  double best_total = std::numeric_limits<double>::infinity();
  for (const auto& [v, ds] : decisions) {
    const RanksPerGpuScore s =
        calls.empty() ? SumOverCommonSizes(decisions, kind, v) : PriceJobCalls(ds, calls, kind, v);
    scores->push_back(s);
    if (s.sizes > 0 && s.total_us < best_total) {  // map order: ties keep the fewer ranks per GPU
      best_total = s.total_us;
      best = v;
    }
  }
  if (best == 0) best = decisions.begin()->first;
  return best;
}

}  // namespace multilane
