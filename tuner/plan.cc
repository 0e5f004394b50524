#include "tuner/plan.h"

#include <algorithm>
#include <stdexcept>

#include "vocab/refuse.h"

namespace mltuner {

int Plan::IterationsFor(uint64_t bytes) const {
  double n = bytes > 0 ? static_cast<double>(iter_bytes) / static_cast<double>(bytes) : max_iters;
  long long it = static_cast<long long>(n + 0.5);
  it = std::max<long long>(it, min_iters);
  it = std::min<long long>(it, max_iters);
  return static_cast<int>(it);
}

bool Plan::MeasuresAt(MemKind mem_kind, uint64_t bytes, const Candidate& c) const {
  if (c == Passthrough()) return true;
  const auto it = size_candidates.find({mem_kind, bytes});
  return it == size_candidates.end() || std::find(it->second.begin(), it->second.end(), c) != it->second.end();
}

namespace {

bool GetSize(const nlohmann::json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) return false;
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  if (v.is_string()) return ParseByteSize(v.get<std::string>(), out);
  return false;
}

template <typename T>
bool GetNumber(const nlohmann::json& j, const char* key, T lo, T hi, T* out, std::string* error) {
  if (!j.contains(key)) return true;
  const nlohmann::json& v = j.at(key);
  if (!v.is_number()) return mla::Refuse(error, std::string(key) + " must be a number");
  // Compared as a double first: 1e300 must not be cast to an int.
  const double d = v.get<double>();
  if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi) && v.get<T>() >= lo && v.get<T>() <= hi))
    return mla::Refuse(error,
                       std::string(key) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  *out = v.get<T>();
  return true;
}

// Profile words from the JSON array `list` into *out, once each, passthrough
// left out (always measured anyway); with `allowed`, each must be one of
// them.  Errors start with `where`.
bool ParseCandidateList(const nlohmann::json& list, const Space& space, const std::string& where,
                        const std::vector<Candidate>* allowed, std::vector<Candidate>* out, std::string* error) {
  for (const auto& v : list) {
    Candidate c;
    std::string why;
    if (!v.is_string() || !ParseCandidate(space, v.get<std::string>(), &c, &why))
      return mla::Refuse(error, where + ": " + v.dump() + ": " + (why.empty() ? "not a string" : why));
    if (c == Passthrough()) continue;
    if (allowed != nullptr && std::find(allowed->begin(), allowed->end(), c) == allowed->end())
      return mla::Refuse(error, where + ": '" + c.Render() + "' is not in candidates; list it there too");
    if (std::find(out->begin(), out->end(), c) == out->end()) out->push_back(c);
  }
  return true;
}

// "size_candidates": [{"memory": "host", "size": "64M", "candidates": [...]}],
// read into p->size_candidates once p's sizes, memories and candidates are.
bool ParseSizeCandidates(const nlohmann::json& j, Plan* p, std::string* error) {
  if (!j.contains("size_candidates")) return true;
  const nlohmann::json& list = j["size_candidates"];
  if (!list.is_array() || !p->has_candidates)
    return mla::Refuse(error,
                       "size_candidates must be an array of {memory, size, candidates} and needs a candidates list");
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& e = list[i];
    const std::string where = "size_candidates[" + std::to_string(i) + "]";
    MemKind mem = p->mem;
    uint64_t bytes = 0;
    if (!e.is_object() || !e.contains("size") || !GetSize(e["size"], &bytes) || !e.contains("candidates") ||
        !e["candidates"].is_array() ||
        (e.contains("memory") && (!e["memory"].is_string() || !MemKindFromName(e["memory"].get<std::string>(), &mem))))
      return mla::Refuse(
          error, where + " must be {\"memory\": \"host\" or \"device\", \"size\": BYTES, \"candidates\": [WORDS]}");
    if (std::find(p->memories.begin(), p->memories.end(), mem) == p->memories.end() ||
        std::find(p->sizes.begin(), p->sizes.end(), bytes) == p->sizes.end())
      return mla::Refuse(error, where + ": " + MemKindName(mem) + " " + FormatByteSize(bytes) +
                                    " is not a planned size of a planned memory kind; add it to sizes and memory");
    if (!ParseCandidateList(e["candidates"], p->space, where + ".candidates", &p->candidates,
                            &p->size_candidates[{mem, bytes}], error))
      return false;
  }
  return true;
}

// The plan's fields are all known ones.
bool CheckFieldNames(const nlohmann::json& j, std::string* error) {
  static const char* kKnown[] = {
      "sizes",          "memory",     "datatype",    "op",     "candidates", "size_candidates", "space",    "budget_s",
      "reps_per_round", "max_rounds", "noise_floor", "margin", "warmup",     "iterations",      "rep_stat", "comment"};
  for (const auto& kv : j.items()) {
    if (std::find_if(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return kv.key() == k; }) ==
        std::end(kKnown))
      return mla::Refuse(error, "unknown field '" + kv.key() + "'");
  }
  return true;
}

// "sizes" (required) into p->sizes, ascending, once each.
bool ParseSizes(const nlohmann::json& j, Plan* p, std::string* error) {
  if (!j.contains("sizes") || !j["sizes"].is_array() || j["sizes"].empty())
    return mla::Refuse(error, "sizes must be a non-empty array of byte sizes");
  for (const auto& v : j["sizes"]) {
    uint64_t s = 0;
    if (!GetSize(v, &s) || s < 4 || s % 4 != 0 || s > (uint64_t{1} << 33))
      return mla::Refuse(error,
                         "sizes: " + v.dump() + " is not a byte size that is a positive multiple of 4 (fp32) up to 8G");
    p->sizes.push_back(s);
  }
  std::sort(p->sizes.begin(), p->sizes.end());
  p->sizes.erase(std::unique(p->sizes.begin(), p->sizes.end()), p->sizes.end());
  return true;
}

// "memory": "host", "device", or a list of them (one launch measures both),
// into p->memories (host first) and p->mem.
bool ParseMemories(const nlohmann::json& j, Plan* p, std::string* error) {
  if (!j.contains("memory")) return true;
  const char* const rule = "memory must be \"host\", \"device\" or a list of them";
  const nlohmann::json list = j["memory"].is_array() ? j["memory"] : nlohmann::json::array({j["memory"]});
  std::vector<MemKind> kinds;
  for (const auto& v : list) {
    MemKind k;
    if (!v.is_string() || !MemKindFromName(v.get<std::string>(), &k)) return mla::Refuse(error, rule);
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  }
  if (kinds.empty()) return mla::Refuse(error, rule);
  std::sort(kinds.begin(), kinds.end());
  p->memories = kinds;
  p->mem = kinds.front();
  return true;
}

// "space": {dimension: [values]}, restricting p->space.
bool ParseSpace(const nlohmann::json& j, Plan* p, std::string* error) {
  if (!j.contains("space")) return true;
  if (!j["space"].is_object())
    return mla::Refuse(error, "space must be an object {dimension: [values]} (\"algo\" for the algorithms)");
  for (const auto& kv : j["space"].items()) {
    std::vector<std::string> values;
    if (!kv.value().is_array()) return mla::Refuse(error, "space." + kv.key() + " must be an array");
    for (const auto& v : kv.value()) values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    std::string why;
    if (!p->space.Restrict(kv.key(), values, &why)) return mla::Refuse(error, "space: " + why);
  }
  return true;
}

// "iterations": {bytes, min, max}, the calls per repetition.
bool ParseIterations(const nlohmann::json& j, Plan* p, std::string* error) {
  if (!j.contains("iterations")) return true;
  const nlohmann::json& it = j["iterations"];
  if (!it.is_object()) return mla::Refuse(error, "iterations must be an object {bytes, min, max}");
  if (it.contains("bytes") && !GetSize(it["bytes"], &p->iter_bytes))
    return mla::Refuse(error, "iterations.bytes must be a byte size");
  if (!GetNumber(it, "min", 1, 1000000, &p->min_iters, error) ||
      !GetNumber(it, "max", 1, 1000000, &p->max_iters, error))
    return false;
  if (p->min_iters > p->max_iters) return mla::Refuse(error, "iterations.min must not exceed iterations.max");
  return true;
}

// The plan's fields, each checked; *plan is set only when all are good.
bool ParsePlanFields(const nlohmann::json& j, Plan* plan, std::string* error) {
  Plan p;
  if (!j.is_object()) return mla::Refuse(error, "the plan must be a JSON object");
  if (!CheckFieldNames(j, error) || !ParseSizes(j, &p, error) || !ParseMemories(j, &p, error)) return false;
  if (j.contains("datatype") && j["datatype"] != "fp32")
    return mla::Refuse(error, "datatype: only \"fp32\" is supported");
  if (j.contains("op") && j["op"] != "sum") return mla::Refuse(error, "op: only \"sum\" is supported");
  if (!ParseSpace(j, &p, error)) return false;
  if (j.contains("candidates")) {
    if (!j["candidates"].is_array())
      return mla::Refuse(error, "candidates must be an array of profile words (\"lane lanes=2\")");
    p.has_candidates = true;
    if (!ParseCandidateList(j["candidates"], p.space, "candidates", nullptr, &p.candidates, error)) return false;
  }
  if (!ParseSizeCandidates(j, &p, error)) return false;
  if (!GetNumber(j, "budget_s", 0.0, 1e7, &p.budget_s, error) ||
      !GetNumber(j, "reps_per_round", 1, 1000, &p.reps_per_round, error) ||
      !GetNumber(j, "max_rounds", 1, 100, &p.max_rounds, error) ||
      !GetNumber(j, "noise_floor", 0.0, 0.9, &p.noise_floor, error) ||
      !GetNumber(j, "margin", 0.0, 100.0, &p.margin, error) || !GetNumber(j, "warmup", 0, 1000, &p.warmup, error) ||
      !ParseIterations(j, &p, error))
    return false;
  if (j.contains("rep_stat")) {
    if (j["rep_stat"] != "loop" && j["rep_stat"] != "median" && j["rep_stat"] != "mean")
      return mla::Refuse(error, "rep_stat must be \"loop\", \"median\" or \"mean\"");
    p.rep_stat = j["rep_stat"].get<std::string>();
  }
  if (j.contains("comment"))
    p.comment = j["comment"].is_string() ? j["comment"].get<std::string>() : j["comment"].dump();
  *plan = p;
  return true;
}

}  // namespace

bool ParsePlan(const nlohmann::json& j, Plan* plan, std::string* error) {
  try {
    return ParsePlanFields(j, plan, error);
  } catch (const std::exception& e) {  // every nlohmann exception: a message, never an abort
    *error = std::string("malformed plan (") + e.what() + ")";
    return false;
  }
}

namespace {

// The plan's "space": the algorithms and the dimensions that differ from
// DefaultSpace()'s (null when none does).
nlohmann::json SpaceToJson(const Space& space) {
  nlohmann::json out = nlohmann::json::object();
  const Space all = DefaultSpace();
  std::vector<std::string> algos, all_algos;
  for (const Algorithm& a : space.algorithms) algos.push_back(a.name);
  for (const Algorithm& a : all.algorithms) all_algos.push_back(a.name);
  if (algos != all_algos) out["algo"] = algos;
  for (const Dimension& d : space.dimensions)
    if (d.restricted) out[d.name] = d.values;
  return out.empty() ? nlohmann::json() : out;
}

// Each memory kind's candidates at a size (ParseSizeCandidates's form).
nlohmann::json SizeCandidatesToJson(const Plan& plan) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [at, candidates] : plan.size_candidates) {
    nlohmann::json words = nlohmann::json::array();
    for (const Candidate& c : candidates) words.push_back(c.Render());
    out.push_back({{"memory", MemKindName(at.first)}, {"size", at.second}, {"candidates", words}});
  }
  return out;
}

}  // namespace

nlohmann::json PlanToJson(const Plan& plan) {
  const Plan d;
  nlohmann::json j = {{"sizes", plan.sizes}, {"budget_s", plan.budget_s}};
  j["memory"] = nlohmann::json::array();
  for (MemKind k : plan.memories) j["memory"].push_back(MemKindName(k));
  if (!plan.comment.empty()) j["comment"] = plan.comment;
  if (plan.has_candidates) {
    j["candidates"] = nlohmann::json::array();
    for (const Candidate& c : plan.candidates) j["candidates"].push_back(c.Render());
  }
  if (!plan.size_candidates.empty()) j["size_candidates"] = SizeCandidatesToJson(plan);
  if (const nlohmann::json space = SpaceToJson(plan.space); !space.is_null()) j["space"] = space;
  if (plan.reps_per_round != d.reps_per_round) j["reps_per_round"] = plan.reps_per_round;
  if (plan.max_rounds != d.max_rounds) j["max_rounds"] = plan.max_rounds;
  if (plan.noise_floor != d.noise_floor) j["noise_floor"] = plan.noise_floor;
  if (plan.margin != d.margin) j["margin"] = plan.margin;
  if (plan.warmup != d.warmup) j["warmup"] = plan.warmup;
  if (plan.iter_bytes != d.iter_bytes || plan.min_iters != d.min_iters || plan.max_iters != d.max_iters)
    j["iterations"] = {{"bytes", plan.iter_bytes}, {"min", plan.min_iters}, {"max", plan.max_iters}};
  if (plan.rep_stat != d.rep_stat) j["rep_stat"] = plan.rep_stat;
  return j;
}

bool ReadMeasurements(const nlohmann::json& result, std::vector<Measurement>* measurements, std::string* error) {
  std::vector<Measurement> out;
  try {
    if (!result.is_object()) throw std::runtime_error("the result must be a JSON object");
    if (result.contains("sizes")) {
      const nlohmann::json& sizes = result.at("sizes");
      if (!sizes.is_array()) throw std::runtime_error("sizes must be an array");
      for (size_t i = 0; i < sizes.size(); ++i) {
        const nlohmann::json& s = sizes[i];
        const std::string where = "sizes[" + std::to_string(i) + "]";
        if (!s.is_object()) throw std::runtime_error(where + " must be an object");
        MemKind mem = MemKind::kHost;
        MemKindFromName(s.value("memory", std::string("host")), &mem);
        uint64_t bytes = 0;
        if (!s.contains("bytes") || !GetSize(s.at("bytes"), &bytes))
          throw std::runtime_error(where + ".bytes must be a byte count");
        const nlohmann::json& candidates = s.at("candidates");
        if (!candidates.is_array()) throw std::runtime_error(where + ".candidates must be an array");
        for (const auto& c : candidates) {
          Measurement m;
          m.mem = mem;
          m.bytes = bytes;
          m.candidate = c.at("candidate").get<std::string>();
          m.samples = c.at("samples_us").get<std::vector<double>>();
          m.valid = c.value("valid", true);
          out.push_back(m);
        }
      }
    }
  } catch (const std::exception& e) {  // every nlohmann exception too
    *error = std::string("malformed result (") + e.what() + ")";
    return false;
  }
  *measurements = std::move(out);
  return true;
}

std::vector<Measurement> MeasurementsFromResult(const nlohmann::json& result) {
  std::vector<Measurement> out;
  std::string error;
  if (!ReadMeasurements(result, &out, &error)) return {};
  return out;
}

bool ReadProbeResult(const nlohmann::json& result, ProbeResult* out, std::string* error) {
  if (!ReadMeasurements(result, &out->measurements, error)) return false;
  try {
    for (const auto& size : result.value("sizes", nlohmann::json::array())) {
      for (const auto& c : size.value("candidates", nlohmann::json::array())) {
        if (!c.value("fell_back", false)) continue;
        for (Measurement& m : out->measurements)
          if (m.bytes == size.value("bytes", uint64_t{0}) &&
              MemKindName(m.mem) == size.value("memory", std::string("host")) &&
              m.candidate == c.value("candidate", std::string()))
            m.valid = false;
      }
    }
    if (result.contains("layout")) out->nodes = result["layout"].value("nodes", 1);
    out->wall_s = result.value("wall_s", -1.0);
  } catch (const std::exception& e) {  // every nlohmann exception too
    *error = e.what();
    return false;
  }
  return true;
}

}  // namespace mltuner
