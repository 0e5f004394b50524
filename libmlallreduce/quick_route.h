// quick_route.h: the calls the settings send to the system MPI unchanged,
// told from one cache line.
//
// A call on host buffers whose choice is plain passthrough (no mpi=NAME) ends
// in PMPI_Allreduce on the caller's communicator whatever else the whole path
// (dispatch.cc) looks at: its communicator's scope, the start-up verdict, the
// profile.  The quick route keeps, once the start-up agreement has spoken,
// the sizes for which that holds, so that such a call reads one line instead
// of the settings, the profile's entries and the communicator's attributes:
// on a node whose caches the call's own data has just emptied, each of those
// is a read from memory (issue 44, docs/benchmarks.md).
#ifndef MLA_QUICK_ROUTE_H_
#define MLA_QUICK_ROUTE_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "libmlallreduce/startup/config.h"
#include "mlallreduce.h"

namespace mla::lib {

// Sets *choice to the choice the settings give a call without a caller's
// choice: MULTILANE_ALGO's, else the profile's entry for `kind`, `bytes` and
// `ppg` (and *system_algorithm to that entry's mpi=NAME); leaves both as they
// are when neither applies.  The one rule both routes take a choice by.
void SettingsChoice(const Config& config, MemKind kind, uint64_t bytes, int ppg, mla_choice* choice,
                    const std::string** system_algorithm);

// Returns true when `choice` runs a call on the system MPI unchanged:
// passthrough (or a number that is no algorithm of the library's) with no
// system algorithm named (`system_algorithm` null or empty).
inline bool RunsUnchanged(const mla_choice& choice, const std::string* system_algorithm) {
  return (choice.algo <= MLA_ALGO_PASSTHROUGH || choice.algo >= MLA_ALGO_COUNT) &&
         (system_algorithm == nullptr || system_algorithm->empty());
}

// The route's state, in one cache line: off, or on with up to kWindows byte
// ranges [lo, hi) of the calls without a caller's choice that the settings
// send through unchanged.
struct alignas(64) QuickRouteState {
  static constexpr int kWindows = 3;
  std::atomic<bool> on{false};
  bool everything = false;  // every size (multilane off, or passthrough at every size)
  int windows = 0;
  uint64_t lo[kWindows] = {};
  uint64_t hi[kWindows] = {};
};

namespace quick_route_internal {
extern QuickRouteState g_route;
}  // namespace quick_route_internal

// Turns the route on from the settings and the start-up agreement's verdict
// (`enabled`, `consistent`): the windows are where SettingsChoice, for host
// memory at this process's ranks per GPU, RunsUnchanged.  Ranges beyond the
// first kWindows take the whole path.  Called once MPI_Init returned.
void BuildQuickRoute(const Config& config, bool enabled, bool consistent);

// Turns the route off: every call takes the whole path (while the job report
// times calls, and from MPI_Finalize on).
void ClearQuickRoute();

// Returns true when the route is on and a call of `bytes` on host buffers
// with the caller's choice `forced` (nullptr: none) goes to the system MPI
// unchanged.  The caller still has to know its buffers are host memory.
inline bool QuickPassthrough(uint64_t bytes, const mla_choice* forced) {
  const QuickRouteState& r = quick_route_internal::g_route;
  if (!r.on.load(std::memory_order_acquire)) return false;
  if (forced != nullptr) return RunsUnchanged(*forced, nullptr);
  if (r.everything) return true;
  for (int i = 0; i < r.windows; ++i)
    if (bytes >= r.lo[i] && bytes < r.hi[i]) return true;
  return false;
}

}  // namespace mla::lib

#endif  // MLA_QUICK_ROUTE_H_
