#include "tuner/search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <tuple>

namespace mltuner {

double Median(std::vector<double> s) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(s.begin(), s.end());
  size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

namespace {

double Quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

// Numbers in the profile: at most 6 significant digits, no exponent for
// ordinary times, never negative.
std::string Num(double v) {
  if (!(v >= 0) || !std::isfinite(v)) v = 0;
  char buf[64];
  if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.6g", v);
  std::string s = buf;
  if (s.find('e') != std::string::npos) {  // tiny values: plain decimals
    std::snprintf(buf, sizeof buf, "%.9f", v);
    s = buf;
  }
  return s;
}

}  // namespace

double RelativeSpread(std::vector<double> s) {
  if (s.size() < 2) return 0;
  std::sort(s.begin(), s.end());
  double med = Median(s);
  if (!(med > 0)) return 0;
  return (Quantile(s, 0.75) - Quantile(s, 0.25)) / med;
}

double MedianRelativeError(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  // sigma ~ IQR / 1.349; the median's standard error ~ 1.2533 sigma / sqrt(n)
  return 0.929 * RelativeSpread(samples) / std::sqrt(static_cast<double>(samples.size()));
}

SearchResult Decide(const std::vector<Measurement>& measurements, const SearchOptions& options) {
  SearchResult result;
  // (mem, bytes) -> indices, in sorted order
  std::map<std::pair<int, uint64_t>, std::vector<const Measurement*>> groups;
  for (const Measurement& m : measurements) groups[{static_cast<int>(m.mem), m.bytes}].push_back(&m);
  for (const auto& g : groups) {
    const Measurement* mpi = nullptr;
    const Measurement* fastest = nullptr;
    double fastest_med = 0;
    for (const Measurement* m : g.second) {
      if (!m->valid || m->samples.empty()) continue;
      double med = Median(m->samples);
      if (!std::isfinite(med)) continue;
      if (m->candidate == "passthrough") mpi = m;
      if (fastest == nullptr || med < fastest_med) {
        fastest = m;
        fastest_med = med;
      }
    }
    std::string where =
        std::string(MemKindName(static_cast<MemKind>(g.first.first))) + " " + FormatByteSize(g.first.second);
    if (mpi == nullptr) {
      result.problems.push_back(where + ": no valid system MPI (passthrough) measurement; size left out");
      continue;
    }
    Decision d;
    d.mem = static_cast<MemKind>(g.first.first);
    d.bytes = g.first.second;
    d.mpi_time_us = Median(mpi->samples);
    d.fastest = fastest->candidate;
    d.fastest_time_us = fastest_med;
    d.noise = std::max(options.noise_floor,
                       2 * std::hypot(MedianRelativeError(fastest->samples), MedianRelativeError(mpi->samples)));
    bool wins = fastest != mpi && fastest_med < d.mpi_time_us * (1 - d.noise);
    if (!wins && fastest != mpi && options.paired && fastest->samples.size() >= 3 &&
        mpi->samples.size() >= fastest->samples.size()) {
      std::vector<double> ratios;
      for (size_t i = 0; i < fastest->samples.size(); ++i)
        if (mpi->samples[i] > 0) ratios.push_back(fastest->samples[i] / mpi->samples[i]);
      const double ratio = Median(ratios);
      const double paired_noise = std::max(options.noise_floor, 2 * MedianRelativeError(ratios));
      if (ratios.size() >= 3 && std::isfinite(ratio) && ratio < 1 - paired_noise) {
        wins = true;
        d.noise = paired_noise;
      }
    }
    if (wins) {
      d.winner = fastest->candidate;
      d.time_us = fastest_med;
    } else {
      d.winner = "passthrough";
      d.time_us = d.mpi_time_us;
      d.kept_within_noise = fastest != mpi;
    }
    d.gain = d.time_us > 0 ? d.mpi_time_us / d.time_us : 1;
    result.decisions.push_back(d);
  }
  result.bins = MakeBins(result.decisions);
  return result;
}

namespace {

// The profile point (pts=) of one decision.
mla::ProfilePoint PointOf(const Decision& d) {
  mla::ProfilePoint p;
  p.bytes = d.bytes;
  p.time_us = d.time_us;
  p.mpi_time_us = d.mpi_time_us;
  p.noise = d.noise;
  return p;
}

// A noise in the profile: three decimals, within the format's bound.
std::string NoiseNum(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", std::min(std::max(v, 0.0), mla::kMaxProfileNoise));
  std::string s = buf;
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::vector<Bin> MakeBins(const std::vector<Decision>& decisions_in) {
  std::vector<Decision> decisions = decisions_in;
  std::stable_sort(decisions.begin(), decisions.end(), [](const Decision& a, const Decision& b) {
    return std::make_tuple(static_cast<int>(a.mem), a.bytes) < std::make_tuple(static_cast<int>(b.mem), b.bytes);
  });
  std::vector<Bin> bins;
  for (size_t i = 0; i < decisions.size(); ++i) {
    const Decision& d = decisions[i];
    bool first_of_kind = i == 0 || decisions[i - 1].mem != d.mem;
    bool last_of_kind = i + 1 == decisions.size() || decisions[i + 1].mem != d.mem;
    uint64_t to = UINT64_MAX;
    if (!last_of_kind) {
      double gm = std::sqrt(static_cast<double>(d.bytes) * static_cast<double>(decisions[i + 1].bytes));
      to = static_cast<uint64_t>(std::llround(gm));
      to = std::max(to, d.bytes + 1);             // the bin must hold its own size
      to = std::min(to, decisions[i + 1].bytes);  // and not the next one's
    }
    if (!first_of_kind && bins.back().winner == d.winner) {
      bins.back().to = to;  // merge: the figures become those of the larger size
      bins.back().time_us = d.time_us;
      bins.back().mpi_time_us = d.mpi_time_us;
      bins.back().measured_bytes = d.bytes;
      bins.back().points.push_back(PointOf(d));
      continue;
    }
    Bin b;
    b.mem = d.mem;
    b.from = first_of_kind ? 0 : bins.back().to;
    b.to = to;
    b.winner = d.winner;
    b.time_us = d.time_us;
    b.mpi_time_us = d.mpi_time_us;
    b.measured_bytes = d.bytes;
    b.points.push_back(PointOf(d));
    bins.push_back(b);
  }
  return bins;
}

mla::ProfileEntry PricingEntry(const Bin& bin) {
  mla::ProfileEntry e;
  e.kind = bin.mem == MemKind::kDevice ? mla::MemKind::kDevice : mla::MemKind::kHost;
  e.min_bytes = bin.from;
  e.max_bytes = bin.to;
  e.ppg = bin.ppg;
  e.time_us = bin.time_us;
  e.mpi_time_us = bin.mpi_time_us;
  e.measured_bytes = bin.measured_bytes;
  e.points.assign(bin.points.begin(), bin.points.begin() + std::min(bin.points.size(), mla::kMaxProfilePointsPerEntry));
  return e;
}

std::string RenderProfile(const std::vector<Bin>& bins, const std::map<std::string, std::string>& metadata) {
  std::ostringstream out;
  out << "multilane-profile 1";
  for (const auto& kv : metadata) out << " " << kv.first << "=" << kv.second;
  out << "\n# MEMORY FROM TO ALGORITHM [KEY=VALUE ...]\n";
  for (const Bin& b : bins) {
    out << MemKindName(b.mem) << " " << FormatByteSize(b.from) << " "
        << (b.to == UINT64_MAX ? std::string("inf") : FormatByteSize(b.to)) << " " << b.winner;
    if (b.ppg > 0) out << " ppg=" << b.ppg;
    out << " time_us=" << Num(b.time_us) << " mpi_time_us=" << Num(b.mpi_time_us);
    if (b.measured_bytes > 0) out << " at=" << FormatByteSize(b.measured_bytes);
    for (size_t i = 0; i < b.points.size() && i < mla::kMaxProfilePointsPerEntry; ++i) {
      const mla::ProfilePoint& p = b.points[i];
      out << (i == 0 ? " pts=" : ",") << FormatByteSize(p.bytes) << ":" << Num(p.time_us) << "/" << Num(p.mpi_time_us);
      if (p.noise >= 0) out << "/" << NoiseNum(p.noise);
    }
    out << "\n";
  }
  return out.str();
}

std::string FormatDecisionTable(const std::vector<Decision>& decisions) {
  // The winner column is as wide as its longest label, so that the columns
  // after it stay aligned ("passthrough (lane chunk=1M not repeated)").
  std::vector<std::string> winners;
  int width = 32;
  for (const Decision& d : decisions) {
    std::string w = d.winner + (d.kept_within_noise ? " (within noise)" : "");
    if (!d.undone.empty()) w = d.winner + " (" + d.undone + " not repeated)";
    width = std::max(width, static_cast<int>(w.size()));
    winners.push_back(w);
  }
  std::ostringstream out;
  char line[1024];
  std::snprintf(line, sizeof line, "%-6s %8s  %-*s %12s %12s %7s %7s %6s\n", "memory", "size", width, "winner",
                "time_us", "mpi_time_us", "gain", "repeat", "noise");
  out << line;
  for (size_t i = 0; i < decisions.size(); ++i) {
    const Decision& d = decisions[i];
    char repeat[32] = "-";
    if (d.repeat_gain > 0) std::snprintf(repeat, sizeof repeat, "%.2fx", d.repeat_gain);
    std::snprintf(line, sizeof line, "%-6s %8s  %-*s %12.2f %12.2f %6.2fx %7s %5.0f%%\n", MemKindName(d.mem),
                  FormatByteSize(d.bytes).c_str(), width, winners[i].c_str(), d.time_us, d.mpi_time_us, d.gain, repeat,
                  100 * d.noise);
    out << line;
  }
  return out.str();
}

std::vector<std::string> Survivors(const std::map<std::string, std::vector<double>>& samples,
                                   const HalvingOptions& options) {
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& kv : samples)
    if (!kv.second.empty()) ranked.emplace_back(Median(kv.second), kv.first);
  std::sort(ranked.begin(), ranked.end());
  std::map<std::string, bool> keep;
  // The best candidate's own noise widens the margin and stops the halving.
  const double spread = ranked.empty() ? 0 : RelativeSpread(samples.at(ranked[0].second));
  const double margin = std::max(options.margin, options.noise_scale * spread);
  const bool noisy = spread > options.margin;
  size_t cap = options.halve && !noisy ? (ranked.size() + 1) / 2 : ranked.size();
  cap = std::max(cap, options.keep_at_least);
  for (size_t i = 0; i < ranked.size(); ++i) {
    bool k = i < options.keep_at_least || (i < cap && ranked[i].first <= ranked[0].first * (1 + margin));
    keep[ranked[i].second] = k;
  }
  std::vector<std::string> out;
  for (const auto& kv : samples) {
    auto it = keep.find(kv.first);
    if (kv.first == "passthrough" || it == keep.end() || it->second) out.push_back(kv.first);
  }
  return out;
}

}  // namespace mltuner
