// mlregret: compares a budgeted tune with an exhaustive one.
//
//   mlregret BUDGETED.json EXHAUSTIVE.json [noise_floor]
//
// For every measured size: the candidate the search picks from the budgeted
// result, its median in the exhaustive result, the best exhaustive candidate
// (lowest median of the valid ones, the system MPI included) and the regret
// = chosen / best - 1 in percent.  Prints the table and the budgeted run's wall
// time.  A benchmark that prints figures; no MPI.
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "plan.h"
#include "search.h"

using nlohmann::json;
using namespace mltuner;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: mlregret BUDGETED.json EXHAUSTIVE.json [noise_floor]\n");
    return 2;
  }
  json doc[2];
  for (int i = 0; i < 2; ++i) {
    std::ifstream in(argv[1 + i]);
    doc[i] = json::parse(in, nullptr, false);
    if (doc[i].is_discarded()) {
      std::fprintf(stderr, "mlregret: %s is not valid JSON\n", argv[1 + i]);
      return 2;
    }
  }
  SearchOptions so;
  so.noise_floor = argc > 3 ? std::stod(argv[3]) : doc[0]["plan"].value("noise_floor", 0.03);
  SearchResult chosen = Decide(MeasurementsFromResult(doc[0]), so);

  // exhaustive medians: (bytes, candidate) -> median
  std::map<uint64_t, std::map<std::string, double>> exh;
  for (const Measurement& m : MeasurementsFromResult(doc[1]))
    if (m.valid && !m.samples.empty()) exh[m.bytes][m.candidate] = Median(m.samples);

  std::printf("%8s  %-26s %12s  %-26s %12s %9s\n", "size", "chosen (budgeted search)", "its exh_us",
              "best exhaustive", "best_us", "regret");
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
  std::printf("wall time: budgeted %.1f s (budget %.1f s), exhaustive %.1f s\n", doc[0].value("wall_s", 0.0),
              doc[0]["plan"].value("budget_s", 0.0), doc[1].value("wall_s", 0.0));
  return 0;
}
