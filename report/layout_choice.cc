// layout_choice.cc: the next run's ranks per GPU (layout_choice.h).
#include "report/layout_choice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "report/report_analysis.h"
#include "vocab/price.h"

namespace mlreport {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The profile's price of `calls` at ranks per GPU `ppg` (its ppg=N entries of
// either memory kind), or -1 when some bin has no price there.
double PriceAt(const mla::Profile& profile, int ppg, const std::vector<mla::BinCalls>& calls) {
  std::vector<mla::ProfileEntry> entries;
  for (const mla::ProfileEntry& e : profile.entries())
    if (e.ppg == ppg) entries.push_back(e);
  if (entries.empty() || calls.empty()) return -1;
  const mla::CallsPrice p = mla::PriceCalls(entries, calls);
  return p.complete && p.total_us > 0 ? p.total_us : -1;
}

std::string SecondsText(double s) { return FormatNumber("%.4g s", s); }

// The runs the choice may use: of the profile's node type (where both name
// one), at one of its tuned values, with a wall time and a readable
// histogram.  The others are counted in one line of `notes`.
std::vector<mla::JobRun> UsableRuns(const std::vector<mla::JobRun>& runs, const std::string& node_type,
                                    const std::vector<int>& tuned, std::vector<std::string>* notes) {
  std::vector<mla::JobRun> out;
  int foreign = 0, untuned = 0, damaged = 0;
  for (const mla::JobRun& r : runs) {
    std::vector<mla::BinCalls> calls;
    if (!node_type.empty() && !r.node_type.empty() && r.node_type != node_type) {
      ++foreign;
    } else if (std::find(tuned.begin(), tuned.end(), r.ranks_per_gpu) == tuned.end()) {
      ++untuned;
    } else if (!(r.wall_s > 0) || !RunCalls(r, &calls)) {
      ++damaged;
    } else {
      out.push_back(r);
    }
  }
  if (foreign + untuned + damaged > 0)
    notes->push_back("ignored " + std::to_string(foreign + untuned + damaged) + " of the job's " +
                     std::to_string(runs.size()) + " earlier runs (" + std::to_string(foreign) +
                     " of another node type, " + std::to_string(untuned) +
                     " at a ranks per GPU the profile was not tuned at, " + std::to_string(damaged) +
                     " without a wall time or a readable size histogram)");
  return out;
}

// The median measured wall time per ranks-per-GPU value.
std::map<int, double> MedianWalls(const std::vector<mla::JobRun>& runs) {
  std::map<int, std::vector<double>> walls;
  for (const mla::JobRun& r : runs) walls[r.ranks_per_gpu].push_back(r.wall_s);
  std::map<int, double> out;
  for (const auto& [ppg, w] : walls) out[ppg] = Median(w);
  return out;
}

// How the job's computation grows with the ranks per GPU: the exponent a of
// computation ~ ppg^a, fitted (least squares in log-log) to the median
// computation at each measured value; 0 (unchanged) with fewer than two
// values.  Clamped to [-1.5, 1.5]: -1 is work shared out perfectly, +1 ranks
// that each repeat it on one GPU.
double ComputeExponent(const std::vector<mla::JobRun>& runs, size_t* values) {
  std::map<int, std::vector<double>> by_ppg;
  for (const mla::JobRun& r : runs)
    if (r.compute_s > 0) by_ppg[r.ranks_per_gpu].push_back(r.compute_s);
  *values = by_ppg.size();
  if (by_ppg.size() < 2) return 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [ppg, c] : by_ppg) {
    const double x = std::log(ppg), y = std::log(Median(c));
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double n = static_cast<double>(by_ppg.size());
  const double a = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return std::clamp(a, -1.5, 1.5);
}

// The untried tuned value predicted to beat `best_wall` (the median at the
// best measured value `best`) by more than the margin, from `base` (the run
// at `best` nearest that median, its times scaled to it): its waiting
// unchanged, its computation scaled by (ppg / best)^exponent, its allreduce
// time by the profile's price of its calls there over here.  0 when none.
int PredictUntried(const mla::JobRun& base, int best, double best_wall, double exponent,
                   const std::map<int, double>& measured, const mla::Profile& profile, const std::vector<int>& tuned,
                   double* wall_out) {
  std::vector<mla::BinCalls> calls;
  RunCalls(base, &calls);
  const double here = PriceAt(profile, best, calls);
  int pick = 0;
  double pick_wall = best_wall * (1 - kTryUntriedMargin);
  for (int ppg : tuned) {
    if (measured.count(ppg) || here <= 0) continue;
    const double there = PriceAt(profile, ppg, calls);
    if (there <= 0) continue;
    const double scale = best_wall / base.wall_s;
    const double compute = scale * base.compute_s * std::pow(static_cast<double>(ppg) / best, exponent);
    const double wall = compute + scale * (base.wait_s + base.allreduce_s * there / here);
    if (wall < pick_wall) {
      pick = ppg;
      pick_wall = wall;
    }
  }
  *wall_out = pick_wall;
  return pick;
}

// How the prediction took the computation, for the choice's line.
std::string ComputeBasis(double exponent, size_t measured_values) {
  if (measured_values < 2) return "computation as measured";
  char b[96];
  std::snprintf(b, sizeof b, "computation x ppg^%.2f, fitted to the %zu values measured", exponent, measured_values);
  return b;
}

std::string Margin() { return std::to_string(static_cast<int>(kTryUntriedMargin * 100 + 0.5)) + " %"; }

}  // namespace

bool RunCalls(const mla::JobRun& run, std::vector<mla::BinCalls>* out) {
  const nlohmann::json h = nlohmann::json::parse(run.histogram_json, nullptr, false);
  if (!h.is_array()) return false;
  for (const nlohmann::json& b : h) {
    if (!b.is_array() || b.size() < 4 || !b[0].is_string() || !b[1].is_number_unsigned() || !b[2].is_number() ||
        !b[3].is_number())
      return false;
    const double calls = b[2].get<double>();
    if (calls <= 0) continue;
    if (b[0] != "device" && b[0] != "host") return false;
    const mla::MemKind kind = b[0] == "device" ? mla::MemKind::kDevice : mla::MemKind::kHost;
    out->push_back({kind, b[1].get<uint64_t>(), calls, b[3].get<double>() / calls});
  }
  return true;
}

LayoutChoice ChooseRanksPerGpu(const std::vector<mla::JobRun>& all_runs, const mla::Profile& profile,
                               const std::vector<int>& tuned, int recommended) {
  LayoutChoice c;
  c.ranks_per_gpu = recommended;
  c.basis = "profile";
  const auto type = profile.metadata().find("node_type");
  const std::vector<mla::JobRun> runs =
      UsableRuns(all_runs, type == profile.metadata().end() ? "" : type->second, tuned, &c.notes);
  if (runs.empty()) {
    c.why = std::string(all_runs.empty() ? "no earlier run of this job" : "no usable earlier run of this job") +
            ": the profile's recommendation, " + std::to_string(recommended) + " per GPU";
    return c;
  }
  const std::map<int, double> walls = MedianWalls(runs);
  const auto [best, best_wall] =
      *std::min_element(walls.begin(), walls.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  c.ranks_per_gpu = best;
  c.basis = "measured";
  c.predicted_wall_s = best_wall;
  const mla::JobRun* base = nullptr;
  for (const mla::JobRun& r : runs)
    if (r.ranks_per_gpu == best &&
        (base == nullptr || std::fabs(r.wall_s - best_wall) < std::fabs(base->wall_s - best_wall)))
      base = &r;
  double pick_wall = 0;
  size_t fitted = 0;
  c.compute_exponent = ComputeExponent(runs, &fitted);
  const int pick = PredictUntried(*base, best, best_wall, c.compute_exponent, walls, profile, tuned, &pick_wall);
  if (pick > 0) {
    c.ranks_per_gpu = pick;
    c.basis = "predicted";
    c.predicted_wall_s = pick_wall;
    c.why = "trying " + std::to_string(pick) + " per GPU: the profile predicts " + SecondsText(pick_wall) +
            " against " + SecondsText(best_wall) + " measured at " + std::to_string(best) + " per GPU (more than the " +
            Margin() + " margin; " + ComputeBasis(c.compute_exponent, fitted) + ")";
    return c;
  }
  const auto last = std::max_element(runs.begin(), runs.end(), StartedBefore);
  if (last->ranks_per_gpu != best) {
    c.why = "back to " + std::to_string(best) + " per GPU (" + SecondsText(best_wall) + " measured): the last run's " +
            std::to_string(last->ranks_per_gpu) + " per GPU took " + SecondsText(last->wall_s) + ", it did not pay";
  } else {
    c.why = std::to_string(best) + " per GPU, the fastest measured (" + SecondsText(best_wall) +
            "); no untried value is predicted to beat it by more than " + Margin();
  }
  return c;
}

}  // namespace mlreport
