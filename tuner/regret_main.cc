// mlregret: compares a budgeted tune with an exhaustive one.
//
//   mlregret COMPARE.json [noise_floor]                  (one mlprobe --compare run)
//   mlregret BUDGETED.json EXHAUSTIVE.json [noise_floor]  (two separate runs)
//
// For every measured size: the candidate the search (Decide, as `multilane
// tune` uses it) picks from the budgeted samples, its median in the exhaustive
// sweep, the best exhaustive candidate (lowest median of the valid ones, the
// system MPI included) and the regret = chosen / best - 1 in percent.  With a
// --compare result both come from the same run: per size the sweep ran right
// after the budgeted search, so they see the same machine state.  Prints the
// table, mean/worst regret and the wall times.  A benchmark that prints
// figures; no MPI.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tuner/plan.h"
#include "tuner/search.h"

using nlohmann::json;
using namespace mltuner;

namespace {

bool Load(const char* path, json* doc) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "mlregret: cannot read %s\n", path);
    return false;
  }
  *doc = json::parse(in, nullptr, false);
  if (doc->is_discarded() || !doc->is_object()) {
    std::fprintf(stderr, "mlregret: %s is not valid JSON\n", path);
    return false;
  }
  return true;
}

void Usage() {
  std::fprintf(stderr,
               "usage: mlregret COMPARE.json [noise_floor]\n"
               "       mlregret BUDGETED.json EXHAUSTIVE.json [noise_floor]\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    Usage();
    return 2;
  }
  json budgeted, exhaustive;
  if (!Load(argv[1], &budgeted)) return 2;
  const bool single = budgeted.value("mode", std::string()) == "compare";
  int next = 2;
  if (!single) {
    if (argc < 3) {
      std::fprintf(stderr, "mlregret: %s is not an mlprobe --compare result: give the exhaustive result too\n",
                   argv[1]);
      Usage();
      return 2;
    }
    if (!Load(argv[2], &exhaustive)) return 2;
    next = 3;
  } else {
    // The sweep of every size, as a result of its own for MeasurementsFromResult.
    exhaustive = {{"sizes", json::array()}};
    for (const auto& s : budgeted.value("sizes", json::array())) {
      if (!s.contains("exhaustive")) {
        std::fprintf(stderr, "mlregret: %s: size %s has no \"exhaustive\" array\n", argv[1],
                     s.value("bytes", json()).dump().c_str());
        return 2;
      }
      exhaustive["sizes"].push_back(
          {{"bytes", s["bytes"]}, {"memory", s.value("memory", std::string("host"))}, {"candidates", s["exhaustive"]}});
    }
  }
  if (argc > next + 1) {
    Usage();
    return 2;
  }
  const json plan = budgeted.value("plan", json::object());
  SearchOptions so;
  so.noise_floor = argc > next ? std::stod(argv[next]) : plan.value("noise_floor", 0.03);
  SearchResult chosen = Decide(MeasurementsFromResult(budgeted), so);

  // exhaustive medians: (bytes, candidate) -> median
  std::map<uint64_t, std::map<std::string, double>> exh;
  for (const Measurement& m : MeasurementsFromResult(exhaustive))
    if (m.valid && !m.samples.empty()) exh[m.bytes][m.candidate] = Median(m.samples);

  if (single)
    std::printf("(one mlprobe --compare run: per size, the exhaustive sweep right after the budgeted search)\n");
  else
    std::printf("(two mlprobe runs: budgeted, then exhaustive)\n");
  std::printf("%8s  %-26s %12s  %-26s %12s %9s\n", "size", "chosen (budgeted search)", "its exh_us", "best exhaustive",
              "best_us", "regret");
  double worst = 0, sum = 0;
  int n = 0;
  for (const Decision& d : chosen.decisions) {
    const auto& row = exh[d.bytes];
    std::string best;
    double best_t = 0;
    for (const auto& kv : row)
      if (best.empty() || kv.second < best_t) best = kv.first, best_t = kv.second;
    auto it = row.find(d.winner);
    if (it == row.end() || best.empty()) {
      std::printf("%8s  %-26s %12s  %-26s %12s %9s\n", FormatByteSize(d.bytes).c_str(), d.winner.c_str(), "n/a",
                  best.c_str(), "n/a", "n/a");
      continue;
    }
    double regret = (it->second / best_t - 1) * 100;
    worst = std::max(worst, regret);
    sum += regret;
    ++n;
    std::printf("%8s  %-26s %12.1f  %-26s %12.1f %8.1f%%\n", FormatByteSize(d.bytes).c_str(), d.winner.c_str(),
                it->second, best.c_str(), best_t, regret);
  }
  std::printf("regret: mean %.1f%% worst %.1f%% over %d sizes\n", n ? sum / n : 0.0, worst, n);
  const double budget = plan.value("budget_s", 60.0);
  if (single)
    std::printf("wall time: budgeted %.1f s (budget %.1f s), exhaustive %.1f s, whole run %.1f s\n",
                budgeted.value("budgeted_wall_s", 0.0), budget, budgeted.value("exhaustive_wall_s", 0.0),
                budgeted.value("wall_s", 0.0));
  else
    std::printf("wall time: budgeted %.1f s (budget %.1f s), exhaustive %.1f s\n", budgeted.value("wall_s", 0.0),
                budget, exhaustive.value("wall_s", 0.0));
  return 0;
}
