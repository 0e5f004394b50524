// tune_gpu.cc: the pure parts of tuning GPU nodes (tune_gpu.h).
#include "tune_gpu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>

#include "vocab/outside_input.h"

namespace multilane {

using mltuner::MemKind;

bool ResolveTuneMemory(const std::string& memory, int gpus, std::vector<MemKind>* kinds, std::string* error) {
  kinds->clear();
  if (memory == "host") {
    *kinds = {MemKind::kHost};
  } else if (memory == "device" || memory == "all") {
    if (gpus <= 0) {
      *error = "--memory " + memory +
               ": this node has no GPU that NVML reports (or no NVIDIA driver), so there is no device memory to "
               "measure; tune --memory host here, and device memory on a GPU node";
      return false;
    }
    *kinds = memory == "all" ? std::vector<MemKind>{MemKind::kHost, MemKind::kDevice}
                             : std::vector<MemKind>{MemKind::kDevice};
  } else if (memory == "auto") {
    *kinds = gpus > 0 ? std::vector<MemKind>{MemKind::kHost, MemKind::kDevice} : std::vector<MemKind>{MemKind::kHost};
  } else {
    *error = "--memory must be host, device, all or auto, not '" + mldb::Excerpt(memory) + "'";
    return false;
  }
  return true;
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
      l.skip = "1 rank in all (1 node, 1 GPU, 1 rank per GPU) has nothing to reduce; give --virtual-nodes 2 to "
               "measure it";
    } else if (l.ranks_per_node > cores && !allow_oversubscribed) {
      l.skip = std::to_string(l.ranks_per_node) + " ranks per node exceed its " + std::to_string(cores) +
               " usable cores";
    }
    out.push_back(l);
  }
  return out;
}

SizeWeights WeightsFromCalls(const std::vector<CallBin>& bins,
                             const std::vector<std::pair<MemKind, uint64_t>>& tuned_sizes) {
  SizeWeights w;
  for (const auto& s : tuned_sizes) w[s] = 0;
  for (const CallBin& b : bins) {
    if (b.calls <= 0) continue;
    const double lo = std::max<double>(1, static_cast<double>(b.from));
    const double hi = b.to > b.from ? static_cast<double>(b.to) : lo * 2;
    const double mid = std::log2(std::sqrt(lo * hi));
    const std::pair<MemKind, uint64_t>* best = nullptr;
    double best_d = std::numeric_limits<double>::infinity();
    for (const auto& s : tuned_sizes) {
      if (s.first != b.mem) continue;
      const double d = std::fabs(std::log2(static_cast<double>(std::max<uint64_t>(1, s.second))) - mid);
      if (d < best_d) {
        best_d = d;
        best = &s;
      }
    }
    if (best != nullptr) w[*best] += b.calls;
  }
  return w;
}

int RecommendRanksPerGpu(const std::map<int, std::vector<mltuner::Decision>>& decisions, const SizeWeights& weights,
                         std::vector<RanksPerGpuScore>* scores) {
  scores->clear();
  if (decisions.empty()) return 0;
  // The sizes every value measured, of the memory kind the layout is for.
  bool any_device = false;
  for (const auto& [v, ds] : decisions)
    for (const auto& d : ds) any_device = any_device || d.mem == MemKind::kDevice;
  const MemKind kind = any_device ? MemKind::kDevice : MemKind::kHost;
  std::map<uint64_t, int> measured_by;
  for (const auto& [v, ds] : decisions) {
    std::set<uint64_t> mine;
    for (const auto& d : ds)
      if (d.mem == kind) mine.insert(d.bytes);
    for (uint64_t b : mine) ++measured_by[b];
  }
  int best = 0;
  double best_total = std::numeric_limits<double>::infinity();
  for (const auto& [v, ds] : decisions) {
    RanksPerGpuScore s;
    s.ranks_per_gpu = v;
    for (const auto& d : ds) {
      if (d.mem != kind || measured_by[d.bytes] != static_cast<int>(decisions.size())) continue;
      double w = 1;
      if (!weights.empty()) {
        auto it = weights.find({d.mem, d.bytes});
        w = it == weights.end() ? 0 : it->second;
      }
      s.total_us += w * d.time_us;
      ++s.sizes;
    }
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
