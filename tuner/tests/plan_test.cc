#include "tuner/plan.h"

#include <gtest/gtest.h>

namespace mltuner {
namespace {

using nlohmann::json;

TEST(Plan, Defaults) {
  Plan p;
  std::string error;
  ASSERT_TRUE(ParsePlan(json::parse(R"({"sizes": [4096, "1M", "64K", 4096]})"), &p, &error)) << error;
  EXPECT_EQ(p.sizes, (std::vector<uint64_t>{4096, 65536, 1 << 20}));
  EXPECT_EQ(p.mem, MemKind::kHost);
  EXPECT_FALSE(p.has_candidates);
  EXPECT_EQ(p.reps_per_round, 3);
  EXPECT_EQ(p.IterationsFor(4096), 50);  // 16M / 4K, capped at 50
  EXPECT_EQ(p.IterationsFor(1 << 20), 16);
  EXPECT_EQ(p.IterationsFor(64u << 20), 2);  // at least 2
  EXPECT_EQ(p.rep_stat, "loop");             // what a job's ranks see (probe_sizes.cc)
}

TEST(Plan, CandidatesSpaceAndKnobs) {
  Plan p;
  std::string error;
  ASSERT_TRUE(ParsePlan(json::parse(R"({
      "sizes": ["4K"], "memory": "host", "datatype": "fp32", "op": "sum",
      "candidates": ["lane", "passthrough", "lane chunk=0", "hier chunk=1M"],
      "space": {"chunk": ["0", "1M"]},
      "budget_s": 3, "reps_per_round": 2, "max_rounds": 3, "noise_floor": 0.05, "margin": 0.2,
      "warmup": 0, "iterations": {"bytes": "1M", "min": 1, "max": 8}, "rep_stat": "mean"})"),
                        &p, &error))
      << error;
  ASSERT_EQ(p.candidates.size(), 2u);  // passthrough is implicit; "lane chunk=0" is "lane"
  EXPECT_EQ(p.candidates[0].Render(), "lane");
  EXPECT_EQ(p.candidates[1].Render(), "hier chunk=1M");
  EXPECT_DOUBLE_EQ(p.budget_s, 3);
  EXPECT_EQ(p.max_rounds, 3);
  EXPECT_EQ(p.IterationsFor(4096), 8);
  EXPECT_EQ(p.rep_stat, "mean");
  EXPECT_EQ(p.space.Find("chunk")->values, (std::vector<std::string>{"0", "1M"}));
}

TEST(Plan, Rejects) {
  Plan p;
  std::string error;
  for (const char* bad : {R"([])", R"({})", R"({"sizes": []})", R"({"sizes": [3]})", R"({"sizes": ["1.5K"]})",
                          R"({"sizes": [4096], "memory": "gpu"})", R"({"sizes": [4096], "datatype": "fp64"})",
                          R"({"sizes": [4096], "candidates": ["ring"]})", R"({"sizes": [4096], "reps_per_round": 0})",
                          R"({"sizes": [4096], "space": {"lanes": ["x"]}})", R"({"sizes": [4096], "typo": 1})",
                          R"({"sizes": [4096], "iterations": {"min": 5, "max": 2}})"}) {
    EXPECT_FALSE(ParsePlan(json::parse(bad), &p, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

// Issue 15 item 4: a plan or a result of the wrong shape threw a nlohmann
// exception (or cast 1e300 to an int) instead of an error.
TEST(Plan, WrongTypesAndHugeNumbersAreErrors) {
  Plan p;
  std::string error;
  for (const char* bad : {R"({"sizes": [4096], "warmup": 1e300})", R"({"sizes": [4096], "max_rounds": -1e300})",
                          R"({"sizes": [4096], "iterations": {"min": 1e30}})", R"({"sizes": [4096], "rep_stat": 3})",
                          R"({"sizes": [4096], "rep_stat": "max"})", R"({"sizes": [4096], "memory": 7})"}) {
    error.clear();
    EXPECT_FALSE(ParsePlan(json::parse(bad), &p, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

// A repeat launch measures each size's winner only (tuner/repeat.h).
TEST(Plan, SizeCandidatesLimitASizeToItsOwn) {
  Plan p;
  std::string error;
  ASSERT_TRUE(ParsePlan(json::parse(R"({"sizes": ["4K", "64K", "1M"], "memory": ["host", "device"],
      "candidates": ["lane", "hier"],
      "size_candidates": [{"memory": "host", "size": "4K", "candidates": ["hier", "passthrough"]},
                          {"memory": "device", "size": 65536, "candidates": []}]})"),
                        &p, &error))
      << error;
  Candidate lane, hier;
  ASSERT_TRUE(ParseCandidate(p.space, "lane", &lane, &error) && ParseCandidate(p.space, "hier", &hier, &error));
  EXPECT_TRUE(p.MeasuresAt(MemKind::kHost, 4096, hier));
  EXPECT_FALSE(p.MeasuresAt(MemKind::kHost, 4096, lane));
  EXPECT_TRUE(p.MeasuresAt(MemKind::kHost, 4096, Passthrough()));  // always
  EXPECT_TRUE(p.MeasuresAt(MemKind::kDevice, 4096, lane));         // not listed: all of them
  EXPECT_FALSE(p.MeasuresAt(MemKind::kDevice, 65536, lane));
  EXPECT_FALSE(p.MeasuresAt(MemKind::kDevice, 65536, hier));
  EXPECT_TRUE(p.MeasuresAt(MemKind::kDevice, 65536, Passthrough()));
  EXPECT_TRUE(p.MeasuresAt(MemKind::kHost, 1 << 20, lane));
}

TEST(Plan, SizeCandidatesRejectsWhatTheProbeWouldNotMeasure) {
  Plan p;
  std::string error;
  const std::string base = R"("sizes": ["4K"], "candidates": ["lane"])";
  for (const std::string& bad :
       {std::string(R"({"sizes": ["4K"], "size_candidates": []})"),  // no candidates list
        R"({)" + base + R"(, "size_candidates": {}})", R"({)" + base + R"(, "size_candidates": [{"size": "4K"}]})",
        R"({)" + base + R"(, "size_candidates": [{"size": "8K", "candidates": []}]})",
        R"({)" + base + R"(, "size_candidates": [{"memory": "device", "size": "4K", "candidates": []}]})",
        R"({)" + base + R"(, "size_candidates": [{"memory": 1, "size": "4K", "candidates": []}]})",
        R"({)" + base + R"(, "size_candidates": [{"size": "4K", "candidates": ["hier"]}]})",
        R"({)" + base + R"(, "size_candidates": [{"size": "4K", "candidates": ["ring"]}]})"}) {
    error.clear();
    EXPECT_FALSE(ParsePlan(json::parse(bad), &p, &error)) << bad;
    EXPECT_NE(error.find("size_candidates"), std::string::npos) << bad << ": " << error;
  }
}

TEST(Result, MalformedResultsAreErrors) {
  for (const char* bad :
       {R"([1])", R"({"sizes": 3})", R"({"sizes": [{"bytes": "x", "candidates": []}]})",
        R"({"sizes": [{"bytes": 4096}]})",
        R"({"sizes": [{"bytes": 4096, "candidates": [{"candidate": 1, "samples_us": []}]}]})",
        R"({"sizes": [{"bytes": 4096, "candidates": [{"candidate": "lane", "samples_us": ["a"]}]}]})",
        R"({"sizes": [{"bytes": 4096, "candidates": [{"candidate": "lane", "samples_us": [], "valid": 2}]}]})"}) {
    std::vector<Measurement> m;
    std::string error;
    EXPECT_FALSE(ReadMeasurements(json::parse(bad), &m, &error)) << bad;
    EXPECT_NE(error.find("malformed result"), std::string::npos) << bad;
    EXPECT_TRUE(MeasurementsFromResult(json::parse(bad)).empty()) << bad;
  }
}

TEST(Result, MeasurementsFromResult) {
  json r = json::parse(R"({"sizes": [{"bytes": 4096, "memory": "host", "candidates": [
      {"candidate": "passthrough", "samples_us": [10, 11], "valid": true},
      {"candidate": "lane", "samples_us": [], "valid": false}]}]})");
  std::vector<Measurement> m = MeasurementsFromResult(r);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].bytes, 4096u);
  EXPECT_EQ(m[0].samples, (std::vector<double>{10, 11}));
  EXPECT_FALSE(m[1].valid);
}

TEST(Plan, WrittenAndReadBackTheSame) {
  Plan p;
  std::string error;
  ASSERT_TRUE(ParsePlan(json::parse(R"({
      "sizes": ["4K", "1M"], "memory": ["host", "device"],
      "candidates": ["lane", "hier chunk=1M"],
      "size_candidates": [{"memory": "device", "size": "1M", "candidates": ["hier chunk=1M"]}],
      "space": {"algo": ["lane", "hier"], "chunk": ["0", "1M"]},
      "budget_s": 3, "reps_per_round": 2, "max_rounds": 3, "noise_floor": 0.05, "margin": 0.2,
      "warmup": 0, "iterations": {"bytes": "1M", "min": 1, "max": 8}, "rep_stat": "mean",
      "comment": "node type x"})"),
                        &p, &error))
      << error;
  const json j = PlanToJson(p);
  Plan q;
  ASSERT_TRUE(ParsePlan(j, &q, &error)) << error << "\n" << j.dump();
  EXPECT_EQ(PlanToJson(q), j);
  EXPECT_EQ(q.sizes, p.sizes);
  EXPECT_EQ(q.memories, p.memories);
  EXPECT_EQ(q.candidates, p.candidates);
  EXPECT_EQ(q.size_candidates, p.size_candidates);
  EXPECT_EQ(q.space.algorithms.size(), 2u);
  EXPECT_EQ(q.space.Find("chunk")->values, (std::vector<std::string>{"0", "1M"}));
  EXPECT_EQ(q.max_rounds, 3);
  EXPECT_EQ(q.IterationsFor(4096), 8);
  EXPECT_EQ(q.rep_stat, "mean");
  EXPECT_EQ(q.comment, "node type x");
  // A default plan writes its sizes, memory and budget only.
  Plan d;
  d.sizes = {4096};
  EXPECT_EQ(PlanToJson(d), json::parse(R"({"sizes": [4096], "memory": ["host"], "budget_s": 60})"));
}

TEST(Result, TheTuneTakesNoCandidateThatFellBack) {
  const json r = json::parse(R"({"layout": {"nodes": 2}, "wall_s": 1.5, "sizes": [
      {"bytes": 4096, "memory": "device", "candidates": [
        {"candidate": "passthrough", "samples_us": [10, 11]},
        {"candidate": "lane", "samples_us": [5], "fell_back": true}]}]})");
  ProbeResult out;
  std::string error;
  ASSERT_TRUE(ReadProbeResult(r, &out, &error)) << error;
  ASSERT_EQ(out.measurements.size(), 2u);
  EXPECT_TRUE(out.measurements[0].valid);
  EXPECT_FALSE(out.measurements[1].valid);
  EXPECT_EQ(out.nodes, 2);
  EXPECT_DOUBLE_EQ(out.wall_s, 1.5);
  EXPECT_FALSE(ReadProbeResult(json::parse(R"({"sizes": 3})"), &out, &error));
}

}  // namespace
}  // namespace mltuner
