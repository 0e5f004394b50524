#include "libmlallreduce/jobreport/job_report.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <vector>
#include <nlohmann/json.hpp>

#include "libmlallreduce/startup/config.h"
#include "libmlallreduce/jobreport/gpu_sampler.h"
#include "vocab/json_text.h"

namespace mla::lib {
namespace {

using nlohmann::json;

Config Load(const std::map<std::string, std::string>& vars) {
  return LoadConfig([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(JsonText, EscapesWhatJsonNeeds) {
  const std::string raw = std::string("a\"b\\c\nd\te") + '\x01' + "\xc3\xa9";
  const std::string text = JsonString(raw);
  EXPECT_EQ(json::parse(text).get<std::string>(), raw);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_NE(text.find("\\u0001"), std::string::npos);
}

TEST(JsonText, Numbers) {
  EXPECT_EQ(JsonNumber(4120), "4120");
  EXPECT_EQ(JsonNumber(0.61), "0.61");
  EXPECT_EQ(JsonNumber(1.0 / 0.0), "null");
  EXPECT_EQ(JsonNumber(0.0 / 0.0), "null");
  EXPECT_DOUBLE_EQ(json::parse(JsonNumber(1.5e-7)).get<double>(), 1.5e-7);
  EXPECT_DOUBLE_EQ(json::parse(JsonNumber(18446744073709551616.0)).get<double>(), 18446744073709551616.0);
}

TEST(JobReport, SizeBinsArePowersOfTwo) {
  EXPECT_EQ(SizeBin(0), 0);
  EXPECT_EQ(SizeBin(1), 1);
  EXPECT_EQ(SizeBin(4095), 12);
  EXPECT_EQ(SizeBin(4096), 13);
  EXPECT_EQ(SizeBin(UINT64_MAX), kSizeBins - 1);
  for (int b = 1; b < kSizeBins; ++b) {
    EXPECT_EQ(SizeBin(SizeBinFrom(b)), b);
    EXPECT_DOUBLE_EQ(SizeBinTo(b), 2.0 * SizeBinFrom(b));
  }
  EXPECT_EQ(SizeBinFrom(13), 4096u);
  EXPECT_EQ(SizeBinTo(0), 1.0);
}

TEST(JobReport, SamplingRateAndNoAliasing) {
  // About one call in 64, and calls of every phase of a period-4 loop.
  int sampled = 0;
  int by_phase[4] = {0};
  for (uint64_t i = 0; i < 64000; ++i) {
    if (SampledCall(i, 64)) {
      ++sampled;
      ++by_phase[i % 4];
    }
  }
  EXPECT_GT(sampled, 850);
  EXPECT_LT(sampled, 1150);
  for (int n : by_phase) EXPECT_GT(n, 150);
  for (uint64_t i = 0; i < 100; ++i) EXPECT_TRUE(SampledCall(i, 1));
}

TEST(JobReport, SampledCallDependsOnlyOnItsArguments) {
  // Every rank must sample the same calls, so the answer may depend on the
  // counter and the period alone: no hidden state, no random source.  The
  // calls below 100 sampled at period 7, computed independently of the
  // library (the splitmix64 finaliser of job_report_render.cc, written again
  // in Python); a hash that changes must change this list on purpose.
  const std::vector<uint64_t> expected = {3, 10, 18, 21, 41, 48, 49, 68, 82, 83};
  auto sampled_below_100 = [] {
    std::vector<uint64_t> got;
    for (uint64_t i = 0; i < 100; ++i)
      if (SampledCall(i, 7)) got.push_back(i);
    return got;
  };
  EXPECT_EQ(sampled_below_100(), expected);
  // Asked again in another order, with calls of other periods in between
  // (another communicator's calls): the same answers.
  for (uint64_t i = 1000; i-- > 0;) {
    (void)SampledCall(i * 31 + 5, 64);
    const bool sampled = SampledCall(i, 7);
    if (i < 100) {
      EXPECT_EQ(sampled, std::count(expected.begin(), expected.end(), i) == 1) << "call " << i;
    }
  }
  EXPECT_EQ(sampled_below_100(), expected);
}

TEST(JobReport, WaitEstimate) {
  EXPECT_DOUBLE_EQ(EstimatedWait(10, 1, 4, 0.9), 2.5);  // the bin's own share
  EXPECT_DOUBLE_EQ(EstimatedWait(10, 0, 0, 0.1), 1.0);  // no sample: the rank's share
  EXPECT_DOUBLE_EQ(EstimatedWait(10, 5, 4, 0), 10.0);   // never more than the time
}

TEST(JobReport, ConfigReadsTheReportVariables) {
  Config off = Load({});
  EXPECT_TRUE(off.report_dir.empty());
  EXPECT_EQ(off.report_sample, 64);
  EXPECT_DOUBLE_EQ(off.report_interval_s, 1.0);

  Config c =
      Load({{"MULTILANE_REPORT", "/tmp/r"}, {"MULTILANE_REPORT_SAMPLE", "8"}, {"MULTILANE_REPORT_INTERVAL", "0.5"}});
  EXPECT_TRUE(c.enabled);
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(c.report_dir, "/tmp/r");
  EXPECT_EQ(c.report_sample, 8);
  EXPECT_DOUBLE_EQ(c.report_interval_s, 0.5);
  EXPECT_NE(c.fingerprint, off.fingerprint);  // ranks must agree on the report too
}

TEST(JobReport, IntervalZeroTurnsGpuSamplingOff) {
  Config c = Load({{"MULTILANE_REPORT", "/tmp/r"}, {"MULTILANE_REPORT_INTERVAL", "0"}});
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(c.report_interval_s, 0.0);
}

TEST(JobReport, BadReportValuesWarnAndKeepMultilaneOn) {
  Config c =
      Load({{"MULTILANE_REPORT", "/tmp/r"}, {"MULTILANE_REPORT_SAMPLE", "0"}, {"MULTILANE_REPORT_INTERVAL", "soon"}});
  EXPECT_TRUE(c.enabled);
  EXPECT_TRUE(c.problems.empty());
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_NE(c.warnings[0].find("MULTILANE_REPORT_SAMPLE='0'"), std::string::npos);
  EXPECT_NE(c.warnings[1].find("MULTILANE_REPORT_INTERVAL='soon'"), std::string::npos);
  EXPECT_EQ(c.report_sample, 64);
  EXPECT_DOUBLE_EQ(c.report_interval_s, 1.0);
}

ReportData Sample(const Profile* profile) {
  ReportData d;
  d.job_name = "app \"quoted\"";
  d.started_utc = "2026-11-29T21:40:00Z";
  d.ranks = 4;
  d.nodes = 2;
  d.ranks_per_node = 2;
  d.regular = true;
  d.hosts = {"node01", "node02"};
  d.wall_s = {10, 40.08, 10.03};
  d.allreduce_s = {3.95, 16.4, 4.31};
  d.wait_s = {0.02, 2.44, 1.2};
  d.wait_sampled_calls = 40;
  ReportBin b;
  b.bin = SizeBin(1 << 20);
  b.calls = 200;
  b.bytes = 200.0 * (1 << 20);
  b.time_s = {0.4, 1.68, 0.45};
  b.wait_s_sum = 0.2;
  b.comm_size = 4;
  b.algos[MLA_ALGO_LANE] = 150;
  b.algos[MLA_ALGO_PASSTHROUGH] = 50;
  if (profile != nullptr) b.profile = &profile->entries()[0];
  d.bins.push_back(b);
  return d;
}

TEST(JobReport, RendersTheDocumentedFields) {
  Profile profile;
  std::string error;
  ASSERT_TRUE(profile.Parse("multilane-profile 1\nhost 0 inf lane time_us=1710 mpi_time_us=2650\n", &error)) << error;
  const json j = json::parse(RenderReport(Sample(&profile)));
  EXPECT_EQ(j["format"], "multilane-job-report");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["library_version"], MLA_VERSION_STRING);
  EXPECT_EQ(j["job"]["id"], "local");
  EXPECT_EQ(j["job"]["name"], "app \"quoted\"");
  EXPECT_EQ(j["job"]["ranks"], 4);
  EXPECT_EQ(j["job"]["hosts"].size(), 2u);
  EXPECT_EQ(j["job"]["regular"], true);
  EXPECT_EQ(j["settings"]["algo"], "auto");
  EXPECT_TRUE(j["settings"]["profile"].is_null());
  EXPECT_DOUBLE_EQ(j["time"]["wall_s"]["mean"].get<double>(), 10.02);
  EXPECT_DOUBLE_EQ(j["time"]["wait_s"]["max"].get<double>(), 1.2);
  EXPECT_EQ(j["time"]["wait_sampled_calls"], 40);
  EXPECT_TRUE(j["time"]["sampling_s"].contains("mean"));
  ASSERT_EQ(j["bins"].size(), 1u);
  const json& b = j["bins"][0];
  EXPECT_EQ(b["memory"], "host");
  EXPECT_EQ(b["from"], 1048576);
  EXPECT_EQ(b["to"], 2097152);
  EXPECT_EQ(b["calls"], 200);
  EXPECT_EQ(b["bytes"], 209715200);
  EXPECT_DOUBLE_EQ(b["time_s"]["mean"].get<double>(), 0.42);
  EXPECT_DOUBLE_EQ(b["wait_s"].get<double>(), 0.05);
  EXPECT_NEAR(b["algbw_gbs"].get<double>(), 209715200 / 0.40 / 1e9, 1e-5);
  EXPECT_NEAR(b["busbw_gbs"].get<double>(), 209715200 / 0.40 / 1e9 * 1.5, 1e-5);
  EXPECT_EQ(b["algos"]["lane"], 150);
  EXPECT_EQ(b["algos"]["passthrough"], 50);
  EXPECT_FALSE(b["algos"].contains("hier"));
  EXPECT_EQ(b["profile"]["algo"], "lane");
  EXPECT_DOUBLE_EQ(b["profile"]["time_us"].get<double>(), 1710);
  EXPECT_DOUBLE_EQ(b["profile"]["mpi_time_us"].get<double>(), 2650);
  EXPECT_TRUE(j["gpus"].is_array());
  EXPECT_TRUE(j["gpus"].empty());
}

TEST(JobReport, EntriesSayEveryEntryPointAndWhatWasNotServed) {
  ReportData d = Sample(nullptr);
  d.entries.calls[MLA_ENTRY_F08] = 18;
  d.entries.calls[MLA_ENTRY_NONBLOCKING] = 3;
  d.entries.passed_on[MLA_ENTRY_NONBLOCKING] = 3;
  const json j = json::parse(RenderReport(d));
  ASSERT_EQ(j["entries"].size(), static_cast<size_t>(MLA_ENTRY_COUNT));
  EXPECT_EQ(j["entries"]["f08"]["calls"], 18);
  EXPECT_EQ(j["entries"]["f08"]["not_served"], 0);
  EXPECT_EQ(j["entries"]["nonblocking"]["not_served"], 3);
  EXPECT_EQ(j["entries"]["c"]["calls"], 0);
}

TEST(JobReport, UnsupportedByReasonAndSystemAlgorithmsPerBin) {
  ReportData d = Sample(nullptr);
  d.details.unsupported[static_cast<int>(Unsupported::kOneRank)] = 594;
  d.bins[0].system_algos = {{"ring", 30}};
  const json j = json::parse(RenderReport(d));
  ASSERT_EQ(j["unsupported"].size(), static_cast<size_t>(Unsupported::kCount));
  EXPECT_EQ(j["unsupported"]["one_rank"], 594);
  EXPECT_EQ(j["unsupported"]["layout"], 0);
  EXPECT_EQ(j["bins"][0]["system_algos"]["ring"], 30);
  d.bins[0].system_algos.clear();  // none ran: no field
  EXPECT_FALSE(json::parse(RenderReport(d))["bins"][0].contains("system_algos"));
}

TEST(JobReport, DeviceBinsCountCallsByTransport) {
  ReportData d = Sample(nullptr);
  d.bins[0].paths[MLA_PATH_MPI] = 7;  // a host bin: never rendered with transports
  ReportBin dev;
  dev.kind = MemKind::kDevice;
  dev.bin = SizeBin(4096);
  dev.calls = 30;
  dev.bytes = 30.0 * 4096;
  dev.algos[MLA_ALGO_LANE] = 25;
  dev.algos[MLA_ALGO_PASSTHROUGH] = 5;
  dev.paths[MLA_PATH_MPI] = 25;
  dev.paths[MLA_PATH_STAGED] = 5;
  dev.nccl_fallbacks = 25;
  d.bins.push_back(dev);
  ReportBin quiet = dev;  // NCCL ran: no fallback field
  quiet.bin = SizeBin(8192);
  quiet.paths[MLA_PATH_MPI] = 0;
  quiet.paths[MLA_PATH_NCCL] = 25;
  quiet.nccl_fallbacks = 0;
  d.bins.push_back(quiet);
  const json j = json::parse(RenderReport(d));
  ASSERT_EQ(j["bins"].size(), 3u);
  EXPECT_FALSE(j["bins"][0].contains("transports"));
  const json& b = j["bins"][1];
  EXPECT_EQ(b["memory"], "device");
  EXPECT_EQ(b["transports"], json({{"mpi", 25}, {"staged", 5}}));
  EXPECT_EQ(b["nccl_fallbacks"], 25);
  EXPECT_EQ(j["bins"][2]["transports"], json({{"nccl", 25}, {"staged", 5}}));
  EXPECT_FALSE(j["bins"][2].contains("nccl_fallbacks"));
}

TEST(JobReport, NoProfileNoBinsStillValid) {
  ReportData d = Sample(nullptr);
  d.bins.clear();
  const json j = json::parse(RenderReport(d));
  EXPECT_TRUE(j["bins"].empty());
  d = Sample(nullptr);
  EXPECT_FALSE(json::parse(RenderReport(d))["bins"][0].contains("profile"));
}

TEST(GpuSampler, SeriesMeansMaxAndEnergy) {
  GpuSeries s;
  s.index = 1;
  s.uuid = "GPU-1";
  s.name = "Test GPU";
  s.Add(0, 50, 10, 100, false, 0);
  s.Add(1, 100, 30, 300, false, 0);
  s.Add(2, -1, -1, -1, false, 0);           // unreadable sample
  EXPECT_DOUBLE_EQ(s.EnergyJoules(), 200);  // trapezoid of 100 W and 300 W over 1 s
  const json j = json::parse(s.ToJson("node01", 1.0));
  EXPECT_EQ(j["host"], "node01");
  EXPECT_EQ(j["index"], 1);
  EXPECT_EQ(j["samples"], 3);
  EXPECT_DOUBLE_EQ(j["utilization_pct"]["max"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(j["power_w"]["mean"].get<double>(), 200);
  EXPECT_DOUBLE_EQ(j["power_w"]["max"].get<double>(), 300);

  GpuSeries counter;
  counter.Add(0, 0, 0, 100, true, 5000);
  counter.Add(1, 0, 0, 100, true, 9000);
  EXPECT_DOUBLE_EQ(counter.EnergyJoules(), 4);  // the counter wins over integration
}

TEST(GpuSampler, WithoutNvmlNothingStartsAndNothingIsReported) {
  GpuSampler sampler;
  if (sampler.Start(0.05)) GTEST_SKIP() << "NVML is present here";
  sampler.Stop();
  sampler.Stop();
  EXPECT_EQ(sampler.ToJson("h"), "");
  unsigned char uuid[16];
  EXPECT_FALSE(CurrentCudaDeviceUuid(uuid));  // the unit tests never load CUDA
}

// The sampler's thread against a fake NVML (fake_nvml_test_support.c, loaded by path
// first, so that the sampler's dlopen of libnvidia-ml.so.1 finds it by its
// soname): it starts, samples on its own thread and stops.  The TSan run
// (tsan_gpu_sampler) runs it too, so that the thread is checked for races.
TEST(GpuSampler, ThreadSamplesAFakeNvml) {
  void* fake = dlopen(MLA_FAKE_NVML_PATH, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(fake, nullptr) << dlerror();
  auto samples = reinterpret_cast<unsigned long (*)()>(dlsym(fake, "fake_nvml_samples"));
  ASSERT_NE(samples, nullptr);
  GpuSampler sampler;
  ASSERT_TRUE(sampler.Start(0.001));
  const unsigned long first = samples();  // Start's own sample, on this thread
  EXPECT_GE(first, 1u);
  // The thread's samples (a bound only so that a broken thread fails rather
  // than hangs: 10 samples at 1 ms take milliseconds).
  for (int i = 0; i < 120000 && samples() < first + 10; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE(samples(), first + 10) << "the sampler's thread took no samples";
  sampler.Stop();
  const json j = json::parse(sampler.ToJson("h"));
  EXPECT_EQ(j["uuid"], "GPU-fake-0000");
  EXPECT_EQ(j["name"], "Fake GPU");
  EXPECT_GE(j["samples"].get<int>(), 12);  // the first, ten by the thread, the last
  EXPECT_DOUBLE_EQ(j["power_w"]["mean"].get<double>(), 100);
  EXPECT_GT(j["energy_j"].get<double>(), 0);
}

}  // namespace
}  // namespace mla::lib
