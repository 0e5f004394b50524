// repeat.cc: a second launch of a layout checks the first one's decisions
// (repeat.h).
#include "tuner/repeat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace mltuner {
namespace {

using Key = std::tuple<int, uint64_t, std::string>;  // memory kind, bytes, candidate

// The repeat's median of every valid candidate with samples.
std::map<Key, double> RepeatMedians(const std::vector<Measurement>& repeat) {
  std::map<Key, double> medians;
  for (const Measurement& m : repeat) {
    if (!m.valid || m.samples.empty()) continue;
    const double med = Median(m.samples);
    if (std::isfinite(med) && med > 0) medians[{static_cast<int>(m.mem), m.bytes, m.candidate}] = med;
  }
  return medians;
}

// |b / a - 1|: how far a second measurement is from the first, relatively.
double Apart(double a, double b) { return a > 0 ? std::fabs(b / a - 1) : 0; }

// Seconds per call of `words` at (mem, bytes), the first launch's median;
// 0 unmeasured.
double CallSeconds(const std::map<Key, double>& medians, MemKind mem, uint64_t bytes, const std::string& words) {
  const auto it = medians.find({static_cast<int>(mem), bytes, words});
  return it == medians.end() ? 0 : it->second * 1e-6;
}

// The repeat's sizes before any is left out: each decided size with its
// memory kinds' winners and its predicted seconds.
std::vector<RepeatSize> RepeatSizes(const std::vector<Decision>& decisions, const std::map<Key, double>& medians,
                                    const Plan& plan) {
  std::map<uint64_t, RepeatSize> by_size;
  for (const Decision& d : decisions) {
    RepeatSize& r = by_size[d.bytes];
    r.bytes = d.bytes;
    r.winners.emplace_back(d.mem, d.winner);
    const int calls = 1 + plan.reps_per_round * (plan.warmup + plan.IterationsFor(d.bytes));
    const double mpi = CallSeconds(medians, d.mem, d.bytes, "passthrough");
    r.predicted_s += mpi * (1 + calls);  // the reference call, then its own
    if (d.winner != "passthrough") r.predicted_s += calls * CallSeconds(medians, d.mem, d.bytes, d.winner);
  }
  std::vector<RepeatSize> out;
  for (auto& kv : by_size) out.push_back(kv.second);
  return out;
}

}  // namespace

RepeatScope ScopeRepeat(const std::vector<Decision>& decisions, const std::vector<Measurement>& first, const Plan& plan,
                        double measuring_s) {
  RepeatScope scope;
  scope.sizes = RepeatSizes(decisions, RepeatMedians(first), plan);
  for (const RepeatSize& r : scope.sizes) scope.predicted_s += r.predicted_s;
  while (!scope.sizes.empty() && scope.predicted_s > measuring_s) {
    auto dearest =
        std::max_element(scope.sizes.begin(), scope.sizes.end(),
                         [](const RepeatSize& a, const RepeatSize& b) { return a.predicted_s < b.predicted_s; });
    scope.predicted_s -= dearest->predicted_s;
    scope.left_out.push_back(*dearest);
    scope.sizes.erase(dearest);
  }
  if (scope.sizes.empty()) scope.predicted_s = 0;
  return scope;
}

std::string DescribeLeftOut(const RepeatScope& scope) {
  std::string sizes;
  double seconds = 0;
  for (const RepeatSize& r : scope.left_out) {
    sizes += (sizes.empty() ? "" : ", ") + FormatByteSize(r.bytes);
    seconds += r.predicted_s;
  }
  if (sizes.empty()) return "";
  char tail[64];
  std::snprintf(tail, sizeof tail, " (%.1f s predicted)", seconds);
  return sizes + tail;
}

std::vector<std::string> RepeatCandidates(const std::vector<Decision>& decisions) {
  std::vector<std::string> out;
  for (const Decision& d : decisions)
    if (d.winner != "passthrough" && std::find(out.begin(), out.end(), d.winner) == out.end()) out.push_back(d.winner);
  return out;
}

bool PlanRepeatLaunch(const Plan& first, const SearchResult& decided, const std::vector<Measurement>& measurements,
                      double measuring_s, Plan* repeat, RepeatScope* scope) {
  Plan p = first;
  p.budget_s = measuring_s;
  p.max_rounds = 2;
  p.has_candidates = true;
  p.candidates.clear();
  p.size_candidates.clear();
  std::map<std::string, Candidate> parsed;  // each winner's word, read once
  for (const std::string& word : RepeatCandidates(decided.decisions)) {
    Candidate c;
    std::string error;
    if (!ParseCandidate(p.space, word, &c, &error)) return false;
    parsed[word] = c;
    if (!(c == Passthrough()) && std::find(p.candidates.begin(), p.candidates.end(), c) == p.candidates.end())
      p.candidates.push_back(c);
  }
  *scope = ScopeRepeat(decided.decisions, measurements, p, measuring_s);
  if (scope->sizes.empty()) return false;
  p.sizes.clear();
  for (const RepeatSize& r : scope->sizes) {
    p.sizes.push_back(r.bytes);
    for (const auto& [mem, winner] : r.winners) {
      std::vector<Candidate>& at = p.size_candidates[{mem, r.bytes}];  // passthrough: the system MPI alone
      const auto c = parsed.find(winner);
      if (c != parsed.end() && !(c->second == Passthrough()) && std::find(at.begin(), at.end(), c->second) == at.end())
        at.push_back(c->second);
    }
  }
  *repeat = p;
  return true;
}

RepeatSummary ApplyRepeat(const std::vector<Measurement>& repeat, double noise_floor, SearchResult* decided) {
  RepeatSummary s;
  const std::map<Key, double> medians = RepeatMedians(repeat);
  std::map<int, std::vector<double>> mpi_apart;  // memory kind -> the system MPI's differences
  std::vector<Decision*> measured;
  for (Decision& d : decided->decisions) {
    const int mem = static_cast<int>(d.mem);
    const auto mpi = medians.find({mem, d.bytes, "passthrough"});
    const auto won = medians.find({mem, d.bytes, d.winner});
    if (mpi == medians.end() || won == medians.end()) {
      ++s.unmeasured;
      continue;
    }
    const double mpi2 = mpi->second, time2 = won->second;
    d.repeat_gain = mpi2 / time2;
    double noise = Apart(d.mpi_time_us, mpi2);
    mpi_apart[mem].push_back(noise);
    if (d.winner == "passthrough") {
      ++s.kept;
    } else if (time2 >= mpi2 * (1 - noise_floor)) {
      ++s.undone;
      d.undone = d.winner;
      d.winner = "passthrough";
      d.kept_within_noise = false;
    } else {
      ++s.confirmed;
      noise = std::max({noise, Apart(d.time_us, time2), Apart(d.time_us / d.mpi_time_us, time2 / mpi2)});
    }
    d.mpi_time_us = (d.mpi_time_us + mpi2) / 2;
    d.time_us = d.winner == "passthrough" ? d.mpi_time_us : (d.time_us + time2) / 2;
    d.gain = d.time_us > 0 ? d.mpi_time_us / d.time_us : 1;
    d.noise = std::max(d.noise, noise);
    measured.push_back(&d);
  }
  std::map<int, double> band;
  for (const auto& kv : mpi_apart) {
    double squares = 0;
    for (double a : kv.second) squares += a * a;
    band[kv.first] = std::sqrt(3.0 * squares / static_cast<double>(kv.second.size()));
    s.band = std::max(s.band, band[kv.first]);
  }
  for (Decision& d : decided->decisions) {  // the band is what every size of the kind gets, measured again or not
    const auto b = band.find(static_cast<int>(d.mem));
    if (b != band.end()) d.noise = std::max(d.noise, b->second);
  }
  for (Decision* d : measured) s.widest = std::max(s.widest, d->noise);
  decided->bins = MakeBins(decided->decisions);
  return s;
}

std::string DescribeRepeat(const RepeatSummary& s, const SearchResult& decided) {
  char head[256];
  std::snprintf(
      head, sizeof head,
      "repeat launch: %d winner(s) confirmed, %d undone, %d size(s) kept the system MPI, %d not measured "
      "again; launch band %.0f%%, noise up to %.0f%% (the profile's noise includes the launches' differences)",
      s.confirmed, s.undone, s.kept, s.unmeasured, 100 * s.band, 100 * s.widest);
  std::string out = head;
  std::string undone;
  for (const Decision& d : decided.decisions)
    if (!d.undone.empty())
      undone += (undone.empty() ? "" : ", ") + std::string(MemKindName(d.mem)) + " " + FormatByteSize(d.bytes) + " " +
                d.undone;
  if (!undone.empty()) out += "; not faster than the system MPI in the repeat: " + undone;
  return out;
}

}  // namespace mltuner
