// price.h: what a profile says one call of a given message size costs (the
// pricing rule of docs/report.md): log-log interpolation between the
// measured points nearest the size (ProfileEntry::points, the `pts=` key).
// The one owner of that rule: the report's per-bin figures, its savings and
// re-tune verdict, its ranks-per-GPU advice and `multilane tune --weights`
// all call it.  Pure arithmetic: no MPI, unit-tested on its own.
#ifndef MLA_PRICE_H_
#define MLA_PRICE_H_

#include <cstdint>
#include <vector>

#include "vocab/profile.h"

namespace mla {

// How a price was obtained.
enum class PriceBasis {
  kMeasured,      // the size is a probed size: its medians as they are
  kInterpolated,  // between two probed sizes
  kExtrapolated,  // below the smallest or above the largest probed size
  kEntry,         // the entry has no points (a profile written before pts=): its one time_us / mpi_time_us
};

// "measured", "interpolated", "extrapolated", "entry".
const char* PriceBasisName(PriceBasis basis);

// The price of one message size.
struct Price {
  double time_us = -1;      // the entry's algorithm; -1 when unknown
  double mpi_time_us = -1;  // the system MPI; -1 when unknown
  double noise = -1;        // relative noise at the size (fraction); -1 when not recorded
  PriceBasis basis = PriceBasis::kEntry;
  uint64_t lo_bytes = 0;  // the probed sizes the price came from (equal when measured
  uint64_t hi_bytes = 0;  // or extrapolated from one point)
};

// Prices a message of `bytes` (> 0; a job's mean message size need not be
// whole) from `points` (sorted by size, sizes distinct, as Profile::Parse
// guarantees).  Between two points: log(time) linear in log(size), for the
// algorithm and the system MPI alike; noise the larger of the two points'.
// Outside the points: the log-log slope of the two nearest points clamped to
// [0, 1] (a time never falls with size and grows at most linearly), with one
// point slope 0 below it and 1 above it; noise the nearest point's.  A size
// within 0.1 % of a point is that point (kMeasured).  Returns false, and
// leaves *out unchanged, when `points` is empty or bytes <= 0.
bool PricePoints(const std::vector<ProfilePoint>& points, double bytes, Price* out);

// The system MPI's times across one layout: the points of every entry of
// `kind` and `ppg` in `entries`, by size (the tune measures the system MPI
// at every probed size, whichever algorithm won there).
std::vector<ProfilePoint> SystemCurve(const std::vector<ProfileEntry>& entries, MemKind kind, int ppg);

// Prices a message of `bytes` under `entry`: PricePoints of its points, or,
// for an entry without points, its time_us and mpi_time_us as they are
// (kEntry, lo_bytes = hi_bytes = its at= size, 0 when unknown).  An entry of
// one point has no slope of its own: outside that point both times follow
// the slope of the system MPI between that point and the next probed size
// of `system_curve` (SystemCurve of the entry's layout) on the size's side,
// clamped to [0, 1]; without such a size, PricePoints' rule.
Price PriceEntry(const ProfileEntry& entry, double bytes, const std::vector<ProfilePoint>& system_curve = {});

// A job's calls in one size bin (a job report's bin): their memory kind, the
// bin's lower edge, how many (world rank 0's) and their mean message size
// (bytes / calls).
struct BinCalls {
  MemKind kind = MemKind::kHost;
  uint64_t from = 0;
  double calls = 0;
  double mean_bytes = 0;
};

// What a set of entries predicts a job's calls cost.
struct CallsPrice {
  bool complete = true;  // every bin with calls had an entry and a price
  double total_us = 0;   // the sum over the priced bins of calls x time_us
  int bins = 0;          // bins priced
  int extrapolated = 0;  // of those, priced beyond their entry's probed sizes
};

// Prices `calls` under `entries` (the entries of one layout, e.g. one
// ranks-per-GPU value; ranges of one kind must not overlap): each bin with
// calls > 0 by the entry of its kind whose [min_bytes, max_bytes) holds the
// bin's `from` (the entry the report's per-bin figures use), PriceEntry at
// the bin's mean size (with the SystemCurve of `entries`), times its calls.  A bin without such an entry, or
// without a positive time, is left out and makes the result incomplete.  The
// one rule of the report's ranks-per-GPU advice and `multilane tune
// --weights`.
CallsPrice PriceCalls(const std::vector<ProfileEntry>& entries, const std::vector<BinCalls>& calls);

}  // namespace mla

#endif  // MLA_PRICE_H_
