#include "report/report_analysis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_text.h"

namespace mlreport {
namespace {

JobReport Load(const std::string& name) {
  JobReport r;
  std::string error;
  EXPECT_TRUE(ReadJobReport(std::string(MULTILANE_REPORT_FIXTURES) + "/" + name, &r, &error)) << error;
  return r;
}

const Verdict* Find(const std::vector<Verdict>& verdicts, const std::string& id) {
  for (const Verdict& v : verdicts)
    if (v.id == id) return &v;
  return nullptr;
}

TEST(ReportAnalysis, RingFactor) {
  EXPECT_DOUBLE_EQ(RingFactor(8, 2), 15.0 / 14.0);
  EXPECT_DOUBLE_EQ(RingFactor(8, 4), 31.0 / 28.0);
  EXPECT_DOUBLE_EQ(RingFactor(2, 2), 1.5);
  EXPECT_DOUBLE_EQ(RingFactor(8, 1), 1.0);
  EXPECT_DOUBLE_EQ(RingFactor(1, 2), 1.0);  // no model for one participant
}

// known_job.json: wall 100 s, 40 s in allreduce of which 10 s waiting, on 8
// GPUs; a lane bin of 2000 calls at 14.75 ms against 20 ms for the MPI.
TEST(ReportAnalysis, KnownJobTimeSplit) {
  const JobAnalysis a = AnalyzeJob(Load("known_job.json"));
  EXPECT_DOUBLE_EQ(a.split.wall_s, 100);
  EXPECT_DOUBLE_EQ(a.split.compute_s, 60);
  EXPECT_DOUBLE_EQ(a.split.allreduce_s, 30);
  EXPECT_DOUBLE_EQ(a.split.wait_s, 10);
  EXPECT_DOUBLE_EQ(a.split.compute_share, 0.6);
  EXPECT_DOUBLE_EQ(a.split.allreduce_share, 0.3);
  EXPECT_DOUBLE_EQ(a.split.wait_share, 0.1);
  EXPECT_FALSE(a.split.clamped);
  EXPECT_EQ(a.scale_unit, "GPUs");
  EXPECT_EQ(a.scale, 8);
}

TEST(ReportAnalysis, KnownJobBins) {
  const JobAnalysis a = AnalyzeJob(Load("known_job.json"));
  ASSERT_EQ(a.bins.size(), 2u);
  const BinAnalysis& small = a.bins[0];
  const BinAnalysis& big = a.bins[1];
  EXPECT_NEAR(small.time_share, 0.05, 1e-12);
  EXPECT_NEAR(big.time_share, 0.95, 1e-12);
  EXPECT_NEAR(big.calls_share, 2.0 / 3, 1e-12);
  EXPECT_EQ(big.algo, "lane");
  EXPECT_NEAR(big.per_call_us, 14750, 1e-6);
  EXPECT_NEAR(small.per_call_us, 1600, 1e-6);
  // expected busbw = 4 MiB / 10 ms x 2(8-1)/8
  EXPECT_NEAR(*big.expected_busbw_gbs, 4194304 / 0.010 / 1e9 * 1.75, 1e-6);
  EXPECT_NEAR(*big.mpi_busbw_gbs, 4194304 / 0.020 / 1e9 * 1.75, 1e-6);
  EXPECT_NEAR(*big.vs_expected, 10000.0 / 14750, 1e-6);
  EXPECT_NEAR(*big.saved_s, 2000 * (20000 - 14750) * 1e-6, 1e-9);
  EXPECT_NEAR(*small.saved_s, 0, 1e-12);  // the system MPI ran it: nothing saved
}

TEST(ReportAnalysis, KnownJobSavingsAndPrediction) {
  const JobAnalysis a = AnalyzeJob(Load("known_job.json"));
  EXPECT_TRUE(a.savings.known);
  EXPECT_NEAR(a.savings.saved_s, 10.5, 1e-9);
  EXPECT_NEAR(a.savings.share_of_wall, 0.105, 1e-12);
  EXPECT_NEAR(a.savings.job_speedup, 1.105, 1e-12);
  EXPECT_EQ(a.savings.bins_known, 2);
  ASSERT_TRUE(a.prediction_possible);
  ASSERT_EQ(a.prediction.size(), 2u);
  // Two machines, a profile not tuned on one: the whole allreduce is taken as
  // the step between nodes, which grows with the machines' ring factor:
  // T / (C/k + W/k + A g) with g = RingFactor(2, 2) = 1.5, RingFactor(2, 4) = 1.75.
  EXPECT_EQ(a.between_nodes.nodes, 2);
  EXPECT_EQ(a.between_nodes.basis, "assumed");
  EXPECT_DOUBLE_EQ(a.between_nodes.share, 1);
  EXPECT_NEAR(a.prediction[0].ring_factor, 15.0 / 14, 1e-12);
  EXPECT_NEAR(a.prediction[0].node_ring_factor, 1.5, 1e-12);
  EXPECT_NEAR(a.prediction[0].allreduce_growth, 1.5, 1e-12);
  EXPECT_NEAR(a.prediction[0].time_s, 35 + 30 * 1.5, 1e-9);
  EXPECT_NEAR(a.prediction[0].speedup, 100 / (35 + 30 * 1.5), 1e-9);
  EXPECT_NEAR(a.prediction[0].efficiency, a.prediction[0].speedup / 2, 1e-12);
  EXPECT_EQ(a.prediction[0].scale, 16);
  EXPECT_NEAR(*a.prediction[0].speedup_system_mpi, 100 / (35 + 40.5 * 1.5), 1e-9);
  EXPECT_NEAR(a.prediction[1].speedup, 100 / (17.5 + 30 * 1.75), 1e-9);
  EXPECT_EQ(a.prediction[1].scale, 32);
}

// The same job under a profile tuned on one machine: the share of the step
// between nodes is what the job's priced calls took beyond the profile's
// prices (1000 calls at 1600 us against 1500, 2000 at 14750 against 10000).
TEST(ReportAnalysis, BetweenNodesShareFromAProfileOfOneMachine) {
  JobReport r = Load("known_job.json");
  r.profile_text =
      "multilane-profile 1 node_type=4f2a91c0 nodes=2 ranks=8 nodes_virtual=yes; host 0 256K passthrough "
      "time_us=1500 mpi_time_us=1500; host 256K inf lane time_us=10000 mpi_time_us=20000";
  const JobAnalysis a = AnalyzeJob(r);
  const double s = 1 - (1000 * 1500.0 + 2000 * 10000.0) / (1000 * 1600.0 + 2000 * 14750.0);
  EXPECT_EQ(a.between_nodes.basis, "profile");
  EXPECT_NEAR(a.between_nodes.share, s, 1e-12);
  ASSERT_EQ(a.prediction.size(), 2u);
  const double g = (1 - s) * 15.0 / 14 + s * 1.5;
  EXPECT_NEAR(a.prediction[0].allreduce_growth, g, 1e-12);
  EXPECT_NEAR(a.prediction[0].time_s, 35 + 30 * g, 1e-9);
  // One machine (the same job on one host): no step between nodes, the GPUs' ring factor alone.
  r.hosts = {"node01"};
  const JobAnalysis one = AnalyzeJob(r);
  EXPECT_EQ(one.between_nodes.basis, "one node");
  EXPECT_DOUBLE_EQ(one.between_nodes.share, 0);
  EXPECT_NEAR(one.prediction[0].allreduce_growth, 15.0 / 14, 1e-12);
}

TEST(ReportScaling, EstimateBetweenNodes) {
  EXPECT_DOUBLE_EQ(EstimateBetweenNodes(1, true, {{10, 100, 40}}).share, 0);
  const BetweenNodes b = EstimateBetweenNodes(4, true, {{10, 100, 40}, {0, 5, 1}});
  EXPECT_EQ(b.basis, "profile");
  EXPECT_DOUBLE_EQ(b.share, 0.6);
  EXPECT_EQ(b.nodes, 4);
  // The job faster than the profile: nothing between nodes.
  EXPECT_DOUBLE_EQ(EstimateBetweenNodes(2, true, {{10, 30, 40}}).share, 0);
  // No profile of one machine, or nothing priced: all of it, assumed.
  EXPECT_EQ(EstimateBetweenNodes(2, false, {{10, 100, 40}}).basis, "assumed");
  EXPECT_DOUBLE_EQ(EstimateBetweenNodes(2, false, {{10, 100, 40}}).share, 1);
  EXPECT_EQ(EstimateBetweenNodes(2, true, {}).basis, "assumed");
}

TEST(ReportScaling, AllreduceGrowth) {
  BetweenNodes b;
  b.nodes = 2;
  b.share = 0.6;
  EXPECT_NEAR(AllreduceGrowth(8, b, 2), 0.4 * 15.0 / 14 + 0.6 * 1.5, 1e-12);
  EXPECT_NEAR(AllreduceGrowth(8, b, 4), 0.4 * 31.0 / 28 + 0.6 * 1.75, 1e-12);
  b.nodes = 1;  // one machine: the share does not apply
  EXPECT_NEAR(AllreduceGrowth(8, b, 2), 15.0 / 14, 1e-12);
}

// A job of `ranks` ranks at `ppg` per GPU with one bin of `calls` calls of
// `bytes` each, `per_call_us` each (no waiting), under `profile`.
JobReport MakeJob(int ranks, int ppg, const std::string& memory, uint64_t from, uint64_t bytes, int64_t calls,
                  double per_call_us, const std::string& profile, double mpi_time_us, double time_us) {
  JobReport r;
  r.ranks = ranks;
  r.nodes = 1;
  r.ranks_per_node = ranks;
  r.ranks_per_gpu = ppg;
  r.gpus = ppg > 0 ? ranks / ppg : 0;
  r.settings_algo = "auto";
  r.profile_text = profile;
  const double in_allreduce = static_cast<double>(calls) * per_call_us * 1e-6;
  r.wall_s = {100, 100, 100};
  r.allreduce_s = {in_allreduce, in_allreduce, in_allreduce};
  r.wait_s = {0, 0, 0};
  r.wait_sampled_calls = 10;
  ReportBin b;
  b.memory = memory;
  b.from = from;
  b.to = from * 2;
  b.calls = calls;
  b.bytes = bytes * static_cast<uint64_t>(calls);
  b.time_s = {in_allreduce, in_allreduce, in_allreduce};
  b.comm_ranks = ranks;
  b.algos = {{"lane", calls}};
  b.profile = BinProfile{"lane", time_us, mpi_time_us};
  r.bins.push_back(b);
  return r;
}

// The savings of a 2-rank job against a profile tuned on 8 ranks: not claimed,
// and the report says why (it once claimed 617 % of the wall time).
TEST(ReportAnalysis, SavingsNotClaimedAgainstAnotherRankCount) {
  const JobAnalysis a = AnalyzeJob(
      MakeJob(2, 0, "host", 1 << 20, 1 << 20, 1000, 500,
              "multilane-profile 1 nodes=1 ranks=8\nhost 0 inf lane time_us=100 mpi_time_us=90000\n", 90000, 100));
  EXPECT_FALSE(a.savings.known);
  EXPECT_EQ(a.savings.saved_s, 0);
  EXPECT_FALSE(a.bins[0].saved_s.has_value());
  EXPECT_NE(a.savings.why_not.find("tuned on 8 ranks and the job ran 2"), std::string::npos) << a.savings.why_not;
  const Verdict* v = Find(a.verdicts, "savings");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->text.rfind("what multilane saved is not claimed: ", 0), 0u) << v->text;
  // The same with the profile's rank count unrecorded.
  const JobAnalysis b =
      AnalyzeJob(MakeJob(8, 0, "host", 1 << 20, 1 << 20, 1000, 500,
                         "multilane-profile 1\nhost 0 inf lane time_us=100 mpi_time_us=900\n", 900, 100));
  EXPECT_FALSE(b.savings.known);
  EXPECT_NE(b.savings.why_not.find("does not record the rank count"), std::string::npos) << b.savings.why_not;
}

// Each entry's own measured size: the job's 1 MiB messages against a system
// MPI time measured at 4 MiB count a quarter of it (a lower bound), never more.
TEST(ReportAnalysis, SavingsUseTheEntrysMeasuredSize) {
  const JobAnalysis a = AnalyzeJob(
      MakeJob(8, 0, "host", 1 << 20, 1 << 20, 1000, 500,
              "multilane-profile 1 ranks=8\nhost 0 inf lane time_us=1000 mpi_time_us=4000 at=4M\n", 4000, 1000));
  ASSERT_TRUE(a.savings.known);
  EXPECT_NEAR(a.savings.saved_s, 1000 * (1000 - 500) * 1e-6, 1e-9);  // 4000 us x 1/4 - 500 us, 1000 calls
  EXPECT_FALSE(a.savings.capped);
  // Larger messages than measured: the tuned time as it is, not scaled up.
  const JobReport big =
      MakeJob(8, 0, "host", 8 << 20, 8 << 20, 1000, 500,
              "multilane-profile 1 ranks=8\nhost 0 inf lane time_us=400 mpi_time_us=800 at=4M\n", 800, 400);
  EXPECT_NEAR(AnalyzeJob(big).savings.saved_s, 1000 * (800 - 500) * 1e-6, 1e-9);
}

// A passthrough entry's mpi=NAME is multilane's choice too: the calls the
// system algorithm ran are priced against the system MPI's default, and the
// bin is named by that choice; plain passthrough calls save nothing.
TEST(ReportAnalysis, SystemAlgorithmCallsArePricedAgainstTheDefault) {
  JobReport r = MakeJob(8, 0, "host", 1 << 20, 1 << 20, 1000, 500,
                        "multilane-profile 1 ranks=8\nhost 0 inf passthrough mpi=ring time_us=500 mpi_time_us=800 "
                        "at=1M\n",
                        800, 500);
  r.bins[0].algos = {{"passthrough", 1000}};
  r.bins[0].system_algos = {{"ring", 600}};
  r.bins[0].profile->algo = "passthrough";
  const JobAnalysis a = AnalyzeJob(r);
  ASSERT_TRUE(a.savings.known);
  EXPECT_NEAR(a.savings.saved_s, 600 * (800 - 500) * 1e-6, 1e-9);
  EXPECT_EQ(a.bins[0].algo, "passthrough mpi=ring");
  EXPECT_EQ(a.bins[0].choices.at("passthrough"), 400);
  EXPECT_EQ(a.bins[0].choices.at("passthrough mpi=ring"), 600);
  // Every renderer names the choice and the reasons calls went unserved.
  r.unsupported = {{"one_rank", 594}, {"layout", 0}};
  const ReportSet set = AnalyzeReports({r});
  const std::string unsupported = "594 calls a multilane algorithm was chosen for went to the system MPI: one rank 594";
  const std::string text = FormatReportText(set);
  EXPECT_NE(text.find("passthrough mpi=ring"), std::string::npos) << text;
  EXPECT_NE(text.find("unsupported (rank 0): " + unsupported), std::string::npos) << text;
  // The algorithm column is as wide as its longest label: the calls stay under their heading.
  const auto line_with = [&text](const std::string& what) {
    const size_t at = text.rfind('\n', text.find(what)) + 1;
    return text.substr(at, text.find('\n', at) - at);
  };
  const std::string header = line_with("    bin "), row = line_with("passthrough mpi=ring");
  EXPECT_EQ(header.find("calls") + 5 - header.find("algorithm"), row.find("1000") + 4 - row.find("passthrough"))
      << text;
  const nlohmann::json j = AnalysisJson(set);
  EXPECT_EQ(j["jobs"][0]["bins"][0]["choices"]["passthrough mpi=ring"], 600);
  EXPECT_EQ(j["jobs"][0]["unsupported"]["one_rank"], 594);
  const std::string html = RenderReportHtml(set);
  EXPECT_NE(html.find("passthrough mpi=ring"), std::string::npos);
  EXPECT_NE(html.find(unsupported), std::string::npos);
  r.bins[0].system_algos.clear();
  EXPECT_NEAR(AnalyzeJob(r).savings.saved_s, 0, 1e-12);
}

// Never more saved than the job spent in allreduce.
TEST(ReportAnalysis, SavingsNeverExceedTheAllreduceTime) {
  JobReport r = MakeJob(8, 0, "host", 1 << 20, 1 << 20, 1000, 100,
                        "multilane-profile 1 ranks=8\nhost 0 inf lane time_us=100 mpi_time_us=5000 at=1M\n", 5000, 100);
  r.wall_s = {1, 1, 1};
  const JobAnalysis a = AnalyzeJob(r);
  ASSERT_TRUE(a.savings.known);
  EXPECT_TRUE(a.savings.capped);
  EXPECT_NEAR(a.savings.saved_s, 0.1, 1e-9);  // the job's 1000 x 100 us in allreduce
  const Verdict* v = Find(a.verdicts, "savings");
  ASSERT_NE(v, nullptr);
  EXPECT_NE(v->text.find("saved at least"), std::string::npos) << v->text;
}

// Device entries tuned at another ranks-per-GPU value are not the job's.
TEST(ReportAnalysis, DeviceSavingsOnlyAtTheJobsRanksPerGpu) {
  const JobAnalysis a = AnalyzeJob(MakeJob(8, 1, "device", 1 << 20, 1 << 20, 1000, 500,
                                           "multilane-profile 1 ranks=8 ranks_per_gpu=4\ndevice 0 inf lane time_us=100 "
                                           "mpi_time_us=900\n",
                                           900, 100));
  EXPECT_FALSE(a.savings.known);
  EXPECT_NE(a.savings.why_not.find("tuned at 4 rank(s) per GPU and the job ran 1"), std::string::npos)
      << a.savings.why_not;
}

// A profile of 8 ranks tuned at 1, 2 and 4 ranks per GPU: a device entry for
// each value ending with its `words`, and 4's again as the entry for any other.
std::string TunedAtOneTwoFour(const std::vector<std::string>& words) {
  std::string text = "multilane-profile 1 ranks=8 ranks_per_gpu=4 ranks_per_gpu_tuned=1,2,4\n";
  const char* ppg[] = {"ppg=1 ", "ppg=2 ", "ppg=4 ", ""};
  for (size_t i = 0; i < 4; ++i)
    text += std::string("device 0 inf lane ") + ppg[i] + words[std::min<size_t>(i, 2)] + "\n";
  return text;
}

// Which ranks per GPU the profile predicts for the job's device calls.
TEST(ReportAnalysis, RanksPerGpuAdvice) {
  const std::string profile =
      TunedAtOneTwoFour({"time_us=1000 mpi_time_us=2000 at=1M", "time_us=600 mpi_time_us=2000 at=1M",
                         "time_us=400 mpi_time_us=2000 at=1M"});
  const JobAnalysis a = AnalyzeJob(MakeJob(8, 2, "device", 1 << 20, 1 << 20, 1000, 700, profile, 2000, 600));
  ASSERT_TRUE(a.layout.known) << a.layout.note;
  EXPECT_EQ(a.layout.job_ppg, 2);
  EXPECT_EQ(a.layout.best_ppg, 4);
  EXPECT_NEAR(a.layout.ratio, 400.0 / 600, 1e-12);
  EXPECT_NEAR(a.layout.saved_s, (1 - 400.0 / 600) * 0.7, 1e-9);  // the job's 0.7 s of device allreduce
  ASSERT_EQ(a.layout.predicted_us.size(), 3u);
  const Verdict* v = Find(a.verdicts, "ranks-per-gpu");
  ASSERT_NE(v, nullptr);
  EXPECT_NE(v->text.find("4 rank(s) per GPU would have been fastest"), std::string::npos) << v->text;
  // At a value the profile did not tune: no advice, and why.
  const JobAnalysis b = AnalyzeJob(MakeJob(24, 3, "device", 1 << 20, 1 << 20, 1000, 700, profile, 2000, 600));
  EXPECT_FALSE(b.layout.known);
  EXPECT_NE(b.layout.note.find("3 rank(s) per GPU, which the profile did not tune"), std::string::npos)
      << b.layout.note;
}

// The advice prices each value at the job's mean message size (24 KiB, from
// the points at 4K and 64K), not at the one size its entry was measured at
// (at=64K): there 4 ranks per GPU look fastest (80 us against 90 and 100),
// at 24 KiB 1 rank per GPU is (44 us against 53 and 57).
TEST(ReportAnalysis, RanksPerGpuAdviceIsPricedAtTheJobsMeanSize) {
  const JobAnalysis a =
      AnalyzeJob(MakeJob(8, 2, "device", 16 << 10, 24 << 10, 1000, 53,
                         TunedAtOneTwoFour({"time_us=100 mpi_time_us=200 at=64K pts=4K:10/20/0.05,64K:100/200/0.05",
                                            "time_us=90 mpi_time_us=200 at=64K pts=4K:20/20/0.05,64K:90/200/0.05",
                                            "time_us=80 mpi_time_us=200 at=64K pts=4K:30/20/0.05,64K:80/200/0.05"}),
                         200, 90));
  ASSERT_TRUE(a.layout.known) << a.layout.note;
  EXPECT_EQ(a.layout.best_ppg, 1);
  ASSERT_EQ(a.layout.predicted_us.size(), 3u);
  const double at_24k = 10 * std::pow(6.0, std::log(10.0) / std::log(16.0));  // 4K x 6 = 24K
  EXPECT_NEAR(a.layout.predicted_us[0].second, 1000 * at_24k, 1e-6);
  EXPECT_NEAR(a.layout.ratio, at_24k / (20 * std::pow(6.0, std::log(4.5) / std::log(16.0))), 1e-9);
}

TEST(ReportAnalysis, KnownJobEnergy) {
  const JobAnalysis a = AnalyzeJob(Load("known_job.json"));
  EXPECT_TRUE(a.energy.measured);
  EXPECT_DOUBLE_EQ(a.energy.energy_j, 62000);
  EXPECT_DOUBLE_EQ(a.energy.mean_power_w, 310);
  EXPECT_DOUBLE_EQ(*a.energy.mean_utilization_pct, 75);
  EXPECT_NEAR(a.energy.communication_energy_j, 62000 * 0.4, 1e-6);
}

TEST(ReportAnalysis, KnownJobVerdicts) {
  const JobAnalysis a = AnalyzeJob(Load("known_job.json"));
  const Verdict* scaling = Find(a.verdicts, "scaling");
  ASSERT_NE(scaling, nullptr);
  EXPECT_EQ(scaling->level, VerdictLevel::kWarn);
  EXPECT_EQ(scaling->text,
            "allreduce takes 30 % of the time: doubling the GPUs (8 to 16) is predicted to give 1.25×, not 2× "
            "(efficiency 62 %, below the 80 % that counts as scaling well)");
  ASSERT_NE(Find(a.verdicts, "communication-bound"), nullptr);  // 30 % >= 25 %
  ASSERT_NE(Find(a.verdicts, "waiting"), nullptr);              // 10 % >= 10 %
  EXPECT_EQ(Find(a.verdicts, "waiting")->level, VerdictLevel::kWarn);
  ASSERT_NE(Find(a.verdicts, "savings"), nullptr);
  EXPECT_EQ(Find(a.verdicts, "savings")->level, VerdictLevel::kGood);
  const Verdict* below = Find(a.verdicts, "below-expectation");
  ASSERT_NE(below, nullptr);  // 68 % of the expected busbw < 80 %
  EXPECT_NE(below->text.find("host 4M–8M reaches 68 %"), std::string::npos) << below->text;
  EXPECT_EQ(Find(a.verdicts, "slower-than-mpi"), nullptr);
  EXPECT_EQ(Find(a.verdicts, "small-messages"), nullptr);
  EXPECT_EQ(Find(a.verdicts, "gpu-underused"), nullptr);
}

// A real report: mlallreduce_bench on 2 H200 with 2 ranks per GPU, device
// buffers, MULTILANE_ALGO=lane and no profile (tests/report/fixtures).
TEST(ReportAnalysis, RealGpuJobWithForcedAlgorithm) {
  const JobAnalysis a = AnalyzeJob(Load("h200_forced_lane.json"));
  EXPECT_EQ(a.scale_unit, "GPUs");
  EXPECT_EQ(a.scale, 2);
  EXPECT_TRUE(a.energy.measured);
  EXPECT_EQ(a.energy.gpus, 2);
  EXPECT_GT(a.energy.energy_j, 0);
  EXPECT_FALSE(a.savings.known);
  const std::string savings = Find(a.verdicts, "savings")->text;
  EXPECT_NE(savings.find("MULTILANE_ALGO=lane forced the algorithm"), std::string::npos) << savings;
}

TEST(ReportAnalysis, CpuJobWithoutProfile) {
  const JobAnalysis a = AnalyzeJob(Load("cpu_no_profile.json"));
  EXPECT_EQ(a.scale_unit, "ranks");
  EXPECT_EQ(a.scale, 4);
  EXPECT_FALSE(a.savings.known);
  EXPECT_FALSE(a.energy.measured);
  EXPECT_FALSE(a.bins[0].expected_busbw_gbs.has_value());
  EXPECT_NEAR(a.split.allreduce_share, 0.78, 1e-12);
  EXPECT_NE(Find(a.verdicts, "savings")->text.find("no profile was in force"), std::string::npos);
  // 7 of 8 s of allreduce in 4K messages.
  const Verdict* small = Find(a.verdicts, "small-messages");
  ASSERT_NE(small, nullptr);
  EXPECT_NEAR(a.bins[0].transfer_s, 6.85, 1e-12);
  EXPECT_NEAR(a.bins[0].transfer_share, 6.85 / (6.85 + 0.95), 1e-12);
  EXPECT_NE(
      small->text.find("88 % of the allreduce time (waiting excluded) is in messages under 256K (threshold 50 %)"),
      std::string::npos)
      << small->text;
  // 78 % in allreduce on 4 ranks: 8 ranks would be slower (0.98x).
  EXPECT_NE(Find(a.verdicts, "scaling")->text.find("is predicted to give 0.98×: the job would be slower"),
            std::string::npos)
      << Find(a.verdicts, "scaling")->text;
  JobReport r = Load("cpu_no_profile.json");
  r.allreduce_s.mean = 5;  // 48 % in allreduce: 1.22x on 8 ranks
  EXPECT_NE(Find(AnalyzeJob(r).verdicts, "scaling")->text.find("is predicted to give 1.22×, not 2× (efficiency 61 %"),
            std::string::npos)
      << Find(AnalyzeJob(r).verdicts, "scaling")->text;
}

TEST(ReportAnalysis, InconsistentTimesAreClamped) {
  JobReport r = Load("cpu_no_profile.json");
  r.allreduce_s.mean = 12;  // above the wall time
  r.wait_s.mean = 20;
  const JobAnalysis a = AnalyzeJob(r);
  EXPECT_TRUE(a.split.clamped);
  EXPECT_DOUBLE_EQ(a.split.compute_s, 0);
  EXPECT_DOUBLE_EQ(a.split.wait_s, 10);
  EXPECT_DOUBLE_EQ(a.split.allreduce_s, 0);
  EXPECT_NE(Find(a.verdicts, "inconsistent"), nullptr);
}

TEST(ReportAnalysis, OneGpuHasNoPrediction) {
  JobReport r = Load("known_job.json");
  r.gpus = 1;
  const JobAnalysis a = AnalyzeJob(r);
  EXPECT_FALSE(a.prediction_possible);
  EXPECT_TRUE(a.prediction.empty());
  EXPECT_EQ(Find(a.verdicts, "scaling")->level, VerdictLevel::kNote);
}

// series_*.json: 100 s on 4 GPUs, 56 s on 8, 35 s on 16 (given out of order).
TEST(ReportAnalysis, MeasuredScalingSeries) {
  const ReportSet set = AnalyzeReports(
      {Load("series_16gpus.json"), Load("known_job.json"), Load("series_4gpus.json"), Load("series_8gpus.json")});
  ASSERT_EQ(set.series.size(), 1u);  // train_model has one scale only
  const ScalingSeries& s = set.series[0];
  EXPECT_EQ(s.job_name, "resnet");
  EXPECT_EQ(s.scale_unit, "GPUs");
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[0].scale, 4);
  EXPECT_EQ(s.points[0].file, 2u);
  EXPECT_EQ(s.points[1].scale, 8);
  EXPECT_EQ(s.points[2].scale, 16);
  EXPECT_DOUBLE_EQ(s.points[0].speedup, 1);
  EXPECT_NEAR(s.points[1].speedup, 100.0 / 56, 1e-12);
  EXPECT_NEAR(s.points[1].efficiency, 100.0 / 56 / 2, 1e-12);
  EXPECT_NEAR(s.points[2].speedup, 100.0 / 35, 1e-12);
  EXPECT_NEAR(s.points[2].efficiency, 100.0 / 35 / 4, 1e-12);
  // The 4-GPU run's model: C 80, A 16, W 4; f(4, 2) = 7/6, f(4, 4) = 5/4.
  EXPECT_NEAR(*s.points[1].predicted_speedup, 100 / (40 + 2 + 16 * 7.0 / 6), 1e-9);
  EXPECT_NEAR(*s.points[2].predicted_speedup, 100 / (20 + 1 + 16 * 1.25), 1e-9);
  ASSERT_EQ(s.verdicts.size(), 1u);
  EXPECT_EQ(s.verdicts[0].level, VerdictLevel::kWarn);  // 71 % < 80 %
  EXPECT_EQ(
      s.verdicts[0].text.rfind("from 4 to 16 GPUs the job ran 2.86× as fast, against 4× ideal (efficiency 71 %", 0), 0u)
      << s.verdicts[0].text;
}

TEST(ReportAnalysis, Formatting) {
  EXPECT_EQ(Percent(0.41), "41 %");
  EXPECT_EQ(Percent(0.041), "4.1 %");
  EXPECT_EQ(Percent(0.0996), "10 %");
  EXPECT_EQ(Times(2), "2×");
  EXPECT_EQ(Times(1.3), "1.3×");
  EXPECT_EQ(Times(1.489), "1.49×");
  EXPECT_EQ(SizeLabel(262144), "256K");
  EXPECT_EQ(SizeLabel(1000), "1000");
}

TEST(ReportRender, EveryRendererNamesTheFigures) {
  const ReportSet set = AnalyzeReports({Load("known_job.json"), Load("series_4gpus.json"), Load("series_8gpus.json")});
  const std::string text = FormatReportText(set);
  EXPECT_NE(text.find("allreduce takes 30 % of the time"), std::string::npos);
  EXPECT_NE(text.find("measured scaling of job resnet"), std::string::npos);
  const nlohmann::json j = AnalysisJson(set);
  EXPECT_EQ(j["jobs"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["jobs"][0]["time"]["allreduce_share"].get<double>(), 0.3);
  EXPECT_TRUE(j["jobs"][1]["energy"]["measured"].is_boolean());
  const std::string html = RenderReportHtml(set);
  EXPECT_NE(html.find("id=\"j0-share-allreduce\" data-figure=\"share-allreduce\" data-value=\"0.3\">30 %</td>"),
            std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(ReportRender, HtmlEscapesWhatTheFileSays) {
  JobReport r = Load("known_job.json");
  r.job_name = "<script>alert(1)</script>";
  const std::string html = RenderReportHtml(AnalyzeReports({r}));
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
}

}  // namespace
}  // namespace mlreport

namespace mlreport {
namespace {

// Issue 30: a benchmark's 16K-32K bin ran hier at 38.5 us per call; the
// profile's entry 8K-2M was measured at 1 MiB (372.7 us, system MPI 429.1 us).
// issue30_old_profile.json carries the profile without pts= (priced as
// before); issue30_points.json the same profile with the tune's points.
TEST(ReportPricing, OldProfileIsPricedAsBefore) {
  const JobAnalysis a = AnalyzeJob(Load("issue30_old_profile.json"));
  const BinAnalysis& b = a.bins[0];
  EXPECT_EQ(b.price_basis, "entry");
  EXPECT_EQ(PriceNote(b), "entry at 1M");
  EXPECT_DOUBLE_EQ(*b.time_us, 372.7);
  // The old rule: 16 KiB / 372.7 us x 1.5, ten times below the 0.64 GB/s achieved.
  EXPECT_NEAR(*b.expected_busbw_gbs, 16384 / 372.7e-6 / 1e9 * 1.5, 1e-12);
  EXPECT_LT(*b.expected_busbw_gbs * 9, b.busbw_gbs);
  // saved: the system MPI's 1 MiB time scaled down linearly: a loss.
  EXPECT_NEAR(*b.saved_s, 20000 * (429.1 * 16384 / 1048576 - 38.5) * 1e-6, 1e-9);
  EXPECT_LT(*b.saved_s, 0);
  EXPECT_EQ(Find(a.verdicts, "re-tune"), nullptr);
}

TEST(ReportPricing, PointsPriceEachBinAtItsMeanSize) {
  const JobAnalysis a = AnalyzeJob(Load("issue30_points.json"));
  ASSERT_EQ(a.bins.size(), 4u);
  const BinAnalysis& small = a.bins[0];  // mean 16K: a probed size
  EXPECT_EQ(small.price_basis, "measured");
  EXPECT_EQ(PriceNote(small), "measured 16K");
  EXPECT_DOUBLE_EQ(*small.time_us, 37);
  EXPECT_DOUBLE_EQ(*small.mpi_time_us, 45);
  EXPECT_NEAR(*small.expected_busbw_gbs, 16384 / 37e-6 / 1e9 * 1.5, 1e-12);
  EXPECT_NEAR(*small.saved_s, 20000 * (45 - 38.5) * 1e-6, 1e-9);  // multilane won here
  EXPECT_FALSE(small.off_profile);
  const BinAnalysis& mid = a.bins[1];  // mean 48K: between 16K and 64K
  EXPECT_EQ(PriceNote(mid), "interpolated 16K–64K");
  const double f = std::log(3.0) / std::log(4.0);
  EXPECT_NEAR(*mid.time_us, 37 * std::pow(61.0 / 37, f), 1e-9);
  EXPECT_NEAR(*mid.mpi_time_us, 45 * std::pow(70.0 / 45, f), 1e-9);
  EXPECT_DOUBLE_EQ(*mid.noise, 0.06);
  const BinAnalysis& big = a.bins[2];  // 6M, 2600 us against ~2055 us: off by more than 3 %
  EXPECT_EQ(PriceNote(big), "interpolated 4M–16M");
  EXPECT_TRUE(big.off_profile);
  const BinAnalysis& huge = a.bins[3];  // 32M: beyond the largest probed size
  EXPECT_EQ(PriceNote(huge), "extrapolated from 16M");
  EXPECT_NEAR(*huge.time_us, 5200 * std::pow(2.0, std::log(5200.0 / 1400) / std::log(4.0)), 1e-6);
  // The re-tune verdict names the one bin off by more than its noise, and no other.
  const Verdict* v = Find(a.verdicts, "re-tune");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->level, VerdictLevel::kWarn);
  EXPECT_NE(v->text.find("host 4M–8M 2.6 ms per call against the profile's 2.05 ms (interpolated between 4M–16M, "
                         "noise 3.0 %)"),
            std::string::npos)
      << v->text;
  EXPECT_EQ(v->text.find("16K–32K"), std::string::npos) << v->text;
  EXPECT_EQ(Find(a.verdicts, "below-expectation"), nullptr);
  // The text, JSON and HTML forms mark the figures.
  const ReportSet set = AnalyzeReports({Load("issue30_points.json")});
  EXPECT_NE(FormatReportText(set).find("interpolated 16K–64K"), std::string::npos);
  EXPECT_NE(AnalysisJson(set).dump().find("\"basis\":\"extrapolated\""), std::string::npos);
  EXPECT_NE(RenderReportHtml(set).find("data-basis=\"measured\""), std::string::npos);
}

// The off bin of issue30_points.json (host 4M-8M, 500 calls of 6M at 2.6 ms
// against ~2.05 ms) with its calls cut to `calls`: the same mean message and
// the same bin time (so the same share of the time), now per `calls` calls.
JobReport OffBinWithCalls(int64_t calls) {
  JobReport r = Load("issue30_points.json");
  ReportBin& b = r.bins[2];
  b.bytes = b.bytes / static_cast<uint64_t>(b.calls) * static_cast<uint64_t>(calls);
  b.calls = calls;
  b.algos = {{"lane", calls}};
  return r;
}

// Issue 44, item 3: a bin of one slow call (as an application's bin of one
// call that built the library's copy of the communicator was) gets "too few
// calls to judge", in the text, the JSON and the page, and no re-tune.
TEST(ReportEvidence, OneSlowCallIsTooFewToJudge) {
  const ReportSet set = AnalyzeReports({OffBinWithCalls(1)});
  const JobAnalysis& a = set.jobs[0];
  const BinAnalysis& b = a.bins[2];
  EXPECT_TRUE(b.off_profile);  // 1.3 s for one call: far off the price
  EXPECT_GE(b.transfer_share, kBinMinTimeShare);
  EXPECT_TRUE(b.too_few_calls);
  for (const Verdict& v : a.verdicts) {
    EXPECT_FALSE(v.id == "re-tune" && v.level == VerdictLevel::kWarn) << v.text;
    EXPECT_NE(v.id, "slower-than-mpi") << v.text;
  }
  const Verdict* v = Find(a.verdicts, "too-few-calls");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->level, VerdictLevel::kNote);
  EXPECT_NE(v->text.find("too few calls to judge host 4M–8M (1 call, 1.3 s per call against the profile's 2.05 ms)"),
            std::string::npos)
      << v->text;
  EXPECT_NE(v->text.find("at least 10 calls"), std::string::npos) << v->text;
  EXPECT_NE(FormatReportText(set).find("too few calls to judge host 4M–8M"), std::string::npos);
  const std::string json = AnalysisJson(set).dump();
  EXPECT_NE(json.find("\"too_few_calls\":true"), std::string::npos);
  EXPECT_NE(json.find("\"verdict_min_calls\":10"), std::string::npos);
  EXPECT_NE(RenderReportHtml(set).find("data-id=\"too-few-calls\""), std::string::npos);
}

// The same bin with kVerdictMinCalls calls is judged: re-tune, naming it.
TEST(ReportEvidence, EnoughCallsStillGetTheVerdict) {
  const JobAnalysis a = AnalyzeJob(OffBinWithCalls(kVerdictMinCalls));
  EXPECT_FALSE(a.bins[2].too_few_calls);
  const Verdict* v = Find(a.verdicts, "re-tune");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->level, VerdictLevel::kWarn);
  EXPECT_NE(v->text.find("host 4M–8M"), std::string::npos) << v->text;
  EXPECT_EQ(Find(a.verdicts, "too-few-calls"), nullptr);
}

TEST(ReportPricing, WithinTheNoiseNoRetune) {
  JobReport r = Load("issue30_points.json");
  r.bins.erase(r.bins.begin() + 2);  // the off bin
  const JobAnalysis a = AnalyzeJob(r);
  const Verdict* v = Find(a.verdicts, "re-tune");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->level, VerdictLevel::kGood) << v->text;
}

}  // namespace
}  // namespace mlreport
