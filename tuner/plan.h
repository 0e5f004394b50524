// plan.h: the probe's plan (what mlprobe measures), written (the tune) and
// read (the probe) here alone, and the reading of its result file back into
// search measurements.  Pure C++ with nlohmann::json, no MPI.  The formats
// are described in tuner/README.md.
#ifndef MLTUNER_PLAN_H_
#define MLTUNER_PLAN_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/candidates.h"
#include "tuner/search.h"

namespace mltuner {

struct Plan {
  std::vector<uint64_t> sizes;                       // bytes, ascending, each a multiple of 4 (fp32)
  MemKind mem = MemKind::kHost;                      // the first of memories
  std::vector<MemKind> memories = {MemKind::kHost};  // measured in this order (host before device)
  std::string datatype = "fp32";
  std::string op = "sum";
  // Either explicit candidates (profile words) or the space to expand.
  bool has_candidates = false;
  std::vector<Candidate> candidates;
  // "size_candidates": at a listed (memory kind, size) only these of
  // `candidates` are measured beside the system MPI (a repeat launch measures
  // each size's winner only); the sizes not listed measure them all.
  std::map<std::pair<MemKind, uint64_t>, std::vector<Candidate>> size_candidates;
  Space space = DefaultSpace();
  double budget_s = 60;             // for all sizes together (budgeted mode)
  int reps_per_round = 3;           // samples added to every survivor per round
  int max_rounds = 4;               // rounds per size (exhaustive: all candidates, all rounds)
  double noise_floor = 0.03;        // SearchOptions::noise_floor
  double margin = 0.10;             // HalvingOptions::margin (the probe uses max(margin, 2 x noise_floor))
  int warmup = 1;                   // untimed calls before each repetition
  uint64_t iter_bytes = 16u << 20;  // iterations per repetition = clamp(iter_bytes / size, min, max)
  int min_iters = 2;
  int max_iters = 50;
  // A repetition's sample (probe_sizes.cc, MeasureRepetition): "loop", the
  // slowest rank's time per call of the timed calls back to back; "median"
  // or "mean" of each call's maximum over the ranks.
  std::string rep_stat = "loop";
  std::string comment;  // free text for the reader of the file (the tune names its node type)

  int IterationsFor(uint64_t bytes) const;

  // Whether candidate `c` is measured at `bytes` of `mem`: the system MPI
  // always; another where size_candidates does not list the size, or lists
  // it among the size's.
  bool MeasuresAt(MemKind mem, uint64_t bytes, const Candidate& c) const;
};

// Reads a plan; false with *error naming the field on anything wrong.  Never
// throws: every nlohmann exception becomes an error.
bool ParsePlan(const nlohmann::json& j, Plan* plan, std::string* error);

// The plan as its file holds it: sizes, memory and budget_s always, every
// other field only where it differs from a default Plan's, so that ParsePlan
// reads back the same plan.
nlohmann::json PlanToJson(const Plan& plan);

// The measurements of a result file written by mlprobe (all sizes, all
// candidates, invalid ones marked so), for Decide().  Returns false and sets
// *error (naming the field) on a result that is not of that form; never
// throws.
bool ReadMeasurements(const nlohmann::json& result, std::vector<Measurement>* measurements, std::string* error);

// ReadMeasurements, with no measurements for a malformed result.
std::vector<Measurement> MeasurementsFromResult(const nlohmann::json& result);

// What one probe launch measured, as the tune reads its result file.
struct ProbeResult {
  std::vector<Measurement> measurements;  // a candidate that "fell_back" is marked invalid
  int nodes = 1;                          // "layout": "nodes"
  double wall_s = -1;                     // the probe's measuring time; -1 unknown
};

// ReadMeasurements, with every candidate the library passed to the system
// MPI ("fell_back": it measured the system MPI, and must not win under its
// own name) marked invalid, and the layout's nodes and the wall time.  False
// with *error on a result not of that form; never throws.
bool ReadProbeResult(const nlohmann::json& result, ProbeResult* out, std::string* error);

}  // namespace mltuner

#endif  // MLTUNER_PLAN_H_
