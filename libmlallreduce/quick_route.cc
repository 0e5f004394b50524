// quick_route.cc: the quick route's state and how it is built (quick_route.h).
#include "libmlallreduce/quick_route.h"

#include <algorithm>
#include <vector>

#include "vocab/ranks_per_gpu.h"

namespace mla::lib {

namespace quick_route_internal {
QuickRouteState g_route;
}  // namespace quick_route_internal

namespace {

// The sizes at which the host entries of `profile` start or end: the
// settings' choice for host memory is the same from one to the next.
std::vector<uint64_t> HostBounds(const Profile& profile) {
  std::vector<uint64_t> bounds{0};
  for (const ProfileEntry& e : profile.entries()) {
    if (e.kind != MemKind::kHost) continue;
    bounds.push_back(e.min_bytes);
    if (e.max_bytes != UINT64_MAX) bounds.push_back(e.max_bytes);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  return bounds;
}

// Adds [lo, hi) to r's windows, joined to the last one where they meet;
// false when there is no room left for another.
bool AddWindow(QuickRouteState& r, uint64_t lo, uint64_t hi) {
  if (r.windows > 0 && r.hi[r.windows - 1] == lo) {
    r.hi[r.windows - 1] = hi;
    return true;
  }
  if (r.windows == QuickRouteState::kWindows) return false;
  r.lo[r.windows] = lo;
  r.hi[r.windows] = hi;
  ++r.windows;
  return true;
}

}  // namespace

void SettingsChoice(const Config& config, MemKind kind, uint64_t bytes, int ppg, mla_choice* choice,
                    const std::string** system_algorithm) {
  if (config.has_forced) {
    *choice = config.forced;
  } else if (const ProfileEntry* entry = config.profile.Lookup(kind, bytes, ppg)) {
    *choice = entry->choice;
    *system_algorithm = &entry->system_algorithm;
  }
}

void BuildQuickRoute(const Config& config, bool enabled, bool consistent) {
  QuickRouteState& r = quick_route_internal::g_route;
  r.on.store(false, std::memory_order_release);
  r.windows = 0;
  // Multilane off: every call without a caller's choice goes through unchanged.
  r.everything = !enabled || !consistent;
  if (!r.everything) {
    const int ppg = RanksPerGpuOrOne(config.ranks_per_gpu);
    const std::vector<uint64_t> bounds = HostBounds(config.profile);
    for (size_t i = 0; i < bounds.size(); ++i) {
      mla_choice choice{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
      const std::string* system_algorithm = nullptr;
      SettingsChoice(config, MemKind::kHost, bounds[i], ppg, &choice, &system_algorithm);
      const uint64_t end = i + 1 < bounds.size() ? bounds[i + 1] : UINT64_MAX;
      if (RunsUnchanged(choice, system_algorithm) && !AddWindow(r, bounds[i], end)) break;
    }
    r.everything = r.windows == 1 && r.lo[0] == 0 && r.hi[0] == UINT64_MAX;
  }
  r.on.store(true, std::memory_order_release);
}

void ClearQuickRoute() { quick_route_internal::g_route.on.store(false, std::memory_order_release); }

}  // namespace mla::lib
