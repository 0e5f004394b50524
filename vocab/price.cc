// price.cc: the pricing rule (price.h).
#include "vocab/price.h"

#include <algorithm>
#include <cmath>

namespace mla {
namespace {

// A size within this relative distance of a probed size is that size.
constexpr double kSameSize = 1e-3;

// log(t) at log-size `x` on the line through (x0, log t0) with `slope`.
double Along(double t0, double x0, double slope, double x) {
  if (t0 <= 0) return t0;
  return std::exp(std::log(t0) + slope * (x - x0));
}

double Slope(double t0, double x0, double t1, double x1) {
  if (t0 <= 0 || t1 <= 0 || x1 == x0) return 0;
  return (std::log(t1) - std::log(t0)) / (x1 - x0);
}

double WorseNoise(double a, double b) { return a < 0 || b < 0 ? -1 : std::max(a, b); }

}  // namespace

const char* PriceBasisName(PriceBasis basis) {
  switch (basis) {
    case PriceBasis::kMeasured:
      return "measured";
    case PriceBasis::kInterpolated:
      return "interpolated";
    case PriceBasis::kExtrapolated:
      return "extrapolated";
    case PriceBasis::kEntry:
      break;
  }
  return "entry";
}

bool PricePoints(const std::vector<ProfilePoint>& points, double bytes, Price* out) {
  if (points.empty() || !(bytes > 0) || !std::isfinite(bytes)) return false;
  const double x = std::log(bytes);
  const auto lx = [&](size_t i) { return std::log(static_cast<double>(std::max<uint64_t>(points[i].bytes, 1))); };
  Price p;
  for (size_t i = 0; i < points.size(); ++i) {
    if (std::fabs(lx(i) - x) <= kSameSize) {
      p.time_us = points[i].time_us;
      p.mpi_time_us = points[i].mpi_time_us;
      p.noise = points[i].noise;
      p.basis = PriceBasis::kMeasured;
      p.lo_bytes = p.hi_bytes = points[i].bytes;
      *out = p;
      return true;
    }
  }
  // The first point above the size.
  size_t hi = 0;
  while (hi < points.size() && lx(hi) < x) ++hi;
  if (hi > 0 && hi < points.size()) {
    const ProfilePoint& a = points[hi - 1];
    const ProfilePoint& b = points[hi];
    const double xa = lx(hi - 1), xb = lx(hi);
    p.time_us = Along(a.time_us, xa, Slope(a.time_us, xa, b.time_us, xb), x);
    p.mpi_time_us = Along(a.mpi_time_us, xa, Slope(a.mpi_time_us, xa, b.mpi_time_us, xb), x);
    p.noise = WorseNoise(a.noise, b.noise);
    p.basis = PriceBasis::kInterpolated;
    p.lo_bytes = a.bytes;
    p.hi_bytes = b.bytes;
    *out = p;
    return true;
  }
  // Outside: from the nearest point, along the clamped slope of the two nearest.
  const bool below = hi == 0;
  const size_t near = below ? 0 : points.size() - 1;
  const ProfilePoint& n = points[near];
  double slope_t = below ? 0 : 1, slope_m = slope_t;
  if (points.size() >= 2) {
    const size_t other = below ? 1 : points.size() - 2;
    const ProfilePoint& o = points[other];
    slope_t = std::clamp(Slope(o.time_us, lx(other), n.time_us, lx(near)), 0.0, 1.0);
    slope_m = std::clamp(Slope(o.mpi_time_us, lx(other), n.mpi_time_us, lx(near)), 0.0, 1.0);
  }
  p.time_us = Along(n.time_us, lx(near), slope_t, x);
  p.mpi_time_us = Along(n.mpi_time_us, lx(near), slope_m, x);
  p.noise = n.noise;
  p.basis = PriceBasis::kExtrapolated;
  p.lo_bytes = p.hi_bytes = n.bytes;
  *out = p;
  return true;
}

std::vector<ProfilePoint> SystemCurve(const std::vector<ProfileEntry>& entries, MemKind kind, int ppg) {
  std::vector<ProfilePoint> curve;
  for (const ProfileEntry& e : entries)
    if (e.kind == kind && e.ppg == ppg) curve.insert(curve.end(), e.points.begin(), e.points.end());
  std::sort(curve.begin(), curve.end(), [](const ProfilePoint& a, const ProfilePoint& b) { return a.bytes < b.bytes; });
  return curve;
}

namespace {

// An entry of one point, priced at `bytes` outside it (p, extrapolated by
// PricePoints): both times along the system MPI's slope from that point to
// the curve's next probed size on the side of `bytes`, when there is one.
void AlongSystemCurve(const ProfilePoint& point, double bytes, const std::vector<ProfilePoint>& curve, Price* p) {
  const bool below = bytes < static_cast<double>(point.bytes);
  const ProfilePoint* next = nullptr;
  for (const ProfilePoint& c : curve) {
    if (below && c.bytes < point.bytes) next = &c;                      // the last one below
    if (!below && c.bytes > point.bytes && next == nullptr) next = &c;  // the first one above
  }
  if (next == nullptr || next->bytes == 0 || point.bytes == 0) return;
  const double x0 = std::log(static_cast<double>(point.bytes)), x1 = std::log(static_cast<double>(next->bytes));
  const double slope = std::clamp(Slope(point.mpi_time_us, x0, next->mpi_time_us, x1), 0.0, 1.0);
  p->time_us = Along(point.time_us, x0, slope, std::log(bytes));
  p->mpi_time_us = Along(point.mpi_time_us, x0, slope, std::log(bytes));
}

}  // namespace

Price PriceEntry(const ProfileEntry& entry, double bytes, const std::vector<ProfilePoint>& system_curve) {
  Price p;
  if (PricePoints(entry.points, bytes, &p)) {
    if (p.basis == PriceBasis::kExtrapolated && entry.points.size() == 1)
      AlongSystemCurve(entry.points[0], bytes, system_curve, &p);
    return p;
  }
  p.time_us = entry.time_us;
  p.mpi_time_us = entry.mpi_time_us;
  p.basis = PriceBasis::kEntry;
  p.lo_bytes = p.hi_bytes = entry.measured_bytes;
  return p;
}

CallsPrice PriceCalls(const std::vector<ProfileEntry>& entries, const std::vector<BinCalls>& calls) {
  CallsPrice out;
  for (const BinCalls& c : calls) {
    if (!(c.calls > 0)) continue;
    const ProfileEntry* entry = nullptr;
    for (const ProfileEntry& e : entries)
      if (e.kind == c.kind && e.min_bytes <= c.from && c.from < e.max_bytes) entry = &e;
    const Price price =
        entry == nullptr ? Price{} : PriceEntry(*entry, c.mean_bytes, SystemCurve(entries, entry->kind, entry->ppg));
    if (!(price.time_us > 0)) {
      out.complete = false;
      continue;
    }
    out.total_us += c.calls * price.time_us;
    ++out.bins;
    if (price.basis == PriceBasis::kExtrapolated) ++out.extrapolated;
  }
  return out;
}

}  // namespace mla
