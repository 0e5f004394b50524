// Unit tests of tune_gpu.h: memory kinds, ranks-per-GPU lists, launches and
// the recommended ranks per GPU.
#include "launcher/tune/tune_gpu.h"

#include <gtest/gtest.h>

#include <cmath>

namespace multilane {
namespace {

using mltuner::Decision;
using mltuner::MemKind;

TEST(TuneMemory, DeviceWithoutGpuIsRefusedWithTheFix) {
  std::vector<MemKind> kinds;
  std::string error;
  EXPECT_FALSE(ResolveTuneMemory(TuneMemory::kDevice, 0, &kinds, &error));
  EXPECT_NE(error.find("--memory device"), std::string::npos) << error;
  EXPECT_NE(error.find("no GPU"), std::string::npos) << error;
  EXPECT_NE(error.find("--memory host"), std::string::npos) << error;
  EXPECT_FALSE(ResolveTuneMemory(TuneMemory::kAll, 0, &kinds, &error));
}

// Issue 44: `tune --np 16` on a GPU node (--memory auto measures device
// memory there) names the way to a host tune.
TEST(TuneNp, RefusedWithDeviceMemoryNamingMemoryHost) {
  std::string error;
  EXPECT_FALSE(CheckNpPerGpu(16, true, &error));
  EXPECT_NE(error.find("--np 16 cannot be given with device memory"), std::string::npos) << error;
  EXPECT_NE(error.find("give --memory host"), std::string::npos) << error;
  EXPECT_NE(error.find("leave --np out"), std::string::npos) << error;
  EXPECT_FALSE(CheckNpPerGpu(4, false, &error));
  EXPECT_NE(error.find("several --ranks-per-gpu values"), std::string::npos) << error;
  EXPECT_TRUE(CheckNpPerGpu(0, true, &error));
}

TEST(TuneMemory, AutoMeasuresDeviceWhereGpusArePresent) {
  std::vector<MemKind> kinds;
  std::string error;
  ASSERT_TRUE(ResolveTuneMemory(TuneMemory::kAuto, 0, &kinds, &error));
  EXPECT_EQ(kinds, std::vector<MemKind>{MemKind::kHost});
  ASSERT_TRUE(ResolveTuneMemory(TuneMemory::kAuto, 2, &kinds, &error));
  EXPECT_EQ(kinds, (std::vector<MemKind>{MemKind::kHost, MemKind::kDevice}));
  ASSERT_TRUE(ResolveTuneMemory(TuneMemory::kDevice, 1, &kinds, &error));
  EXPECT_EQ(kinds, std::vector<MemKind>{MemKind::kDevice});
}

TEST(RanksPerGpuList, DefaultIsPowersOfTwoUpToCoresPerGpu) {
  EXPECT_EQ(DefaultRanksPerGpuList(112, 8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(DefaultRanksPerGpuList(16, 1), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(DefaultRanksPerGpuList(12, 4), (std::vector<int>{1, 2}));
  EXPECT_EQ(DefaultRanksPerGpuList(2, 4), (std::vector<int>{1}));
}

TEST(PlanLaunches, RanksFollowNodesGpusAndValue) {
  auto l = PlanLaunches({1, 2, 4, 8}, 2, 1, 16, false);
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0].np, 2);
  EXPECT_EQ(l[3].np, 16);
  EXPECT_EQ(l[3].ranks_per_node, 8);
  for (const auto& x : l) EXPECT_TRUE(x.skip.empty()) << x.skip;
  // One node, one GPU, one rank: nothing to reduce.
  l = PlanLaunches({1, 2}, 1, 1, 16, false);
  EXPECT_NE(l[0].skip.find("nothing to reduce"), std::string::npos);
  EXPECT_TRUE(l[1].skip.empty());
  // More ranks per node than cores: skipped unless allowed.
  l = PlanLaunches({4}, 1, 2, 4, false);
  EXPECT_NE(l[0].skip.find("8 ranks per node exceed its 4 usable cores"), std::string::npos) << l[0].skip;
  EXPECT_TRUE(PlanLaunches({4}, 1, 2, 4, true)[0].skip.empty());
}

Decision D(MemKind mem, uint64_t bytes, double t) {
  Decision d;
  d.mem = mem;
  d.bytes = bytes;
  d.time_us = t;
  return d;
}

TEST(Recommend, LowestEqualWeightSumOverCommonDeviceSizes) {
  std::map<int, std::vector<Decision>> by;
  // 1 rank per GPU wins small sizes, 4 wins the large one by more.
  by[1] = {D(MemKind::kDevice, 4096, 10), D(MemKind::kDevice, 1 << 20, 100), D(MemKind::kDevice, 64 << 20, 5000),
           D(MemKind::kHost, 4096, 1)};
  by[4] = {D(MemKind::kDevice, 4096, 20), D(MemKind::kDevice, 1 << 20, 150), D(MemKind::kDevice, 64 << 20, 3000),
           D(MemKind::kHost, 4096, 9999)};
  // A size only one value measured does not count.
  by[4].push_back(D(MemKind::kDevice, 256 << 20, 1e9));
  std::vector<RanksPerGpuScore> scores;
  EXPECT_EQ(RecommendRanksPerGpu(by, {}, &scores), 4);
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_DOUBLE_EQ(scores[0].total_us, 5110);
  EXPECT_DOUBLE_EQ(scores[1].total_us, 3170);
  EXPECT_EQ(scores[1].sizes, 3);
}

TEST(Recommend, AJobOfSmallCallsTurnsTheChoice) {
  std::map<int, std::vector<Decision>> by;
  by[1] = {D(MemKind::kDevice, 4096, 10), D(MemKind::kDevice, 64 << 20, 5000)};
  by[4] = {D(MemKind::kDevice, 4096, 20), D(MemKind::kDevice, 64 << 20, 3000)};
  // A job of 1000 calls of 4 KiB and 1 call of 64 MiB.
  const std::vector<mla::BinCalls> calls = {{mla::MemKind::kDevice, 4096, 1000, 4096},
                                            {mla::MemKind::kDevice, 64 << 20, 1, 64 << 20}};
  std::vector<RanksPerGpuScore> scores;
  EXPECT_EQ(RecommendRanksPerGpu(by, calls, &scores), 1);
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_DOUBLE_EQ(scores[0].total_us, 1000 * 10 + 5000);
  EXPECT_EQ(scores[0].sizes, 2);  // bins priced
  EXPECT_EQ(RecommendRanksPerGpu(by, {}, &scores), 4);
}

// Issue 30: --weights prices each of the job's bins at its mean message size
// between the tuned sizes (log-log, mla::PriceCalls), as the report does.  The
// job's 1000 calls of 24 KiB (bin [16K, 32K)) lie between the tuned 4K and
// 64K.  The old rule charged them the time of the tuned size nearest the
// bin's middle (64K: 4 ranks per GPU, 80 us against 100 us); priced at 24 KiB
// 1 rank per GPU is faster (44 us against 57 us).
TEST(Recommend, EachBinIsPricedAtItsMeanSizeNotTheNearestTunedSize) {
  std::map<int, std::vector<Decision>> by;
  by[1] = {D(MemKind::kDevice, 4096, 10), D(MemKind::kDevice, 64 << 10, 100)};
  by[4] = {D(MemKind::kDevice, 4096, 30), D(MemKind::kDevice, 64 << 10, 80)};
  const std::vector<mla::BinCalls> calls = {{mla::MemKind::kDevice, 16 << 10, 1000, 24 << 10}};
  std::vector<RanksPerGpuScore> scores;
  EXPECT_EQ(RecommendRanksPerGpu(by, calls, &scores), 1);
  ASSERT_EQ(scores.size(), 2u);
  const double one = 10 * std::pow(6.0, std::log(10.0) / std::log(16.0));  // 24K = 4K x 6; 64K = 4K x 16
  const double four = 30 * std::pow(6.0, std::log(80.0 / 30) / std::log(16.0));
  EXPECT_NEAR(scores[0].total_us, 1000 * one, 1e-6);
  EXPECT_NEAR(scores[1].total_us, 1000 * four, 1e-6);
  EXPECT_EQ(scores[0].extrapolated, 0);
  // Beyond the tuned sizes the price is extrapolated, and the score says so.
  EXPECT_EQ(RecommendRanksPerGpu(by, {{mla::MemKind::kDevice, 1 << 20, 1, 1 << 20}}, &scores), 4);
  EXPECT_EQ(scores[0].extrapolated, 1);
  // Host calls do not weigh a device layout: nothing priced, the fewer ranks kept.
  EXPECT_EQ(RecommendRanksPerGpu(by, {{mla::MemKind::kHost, 16 << 10, 1000, 24 << 10}}, &scores), 1);
  EXPECT_EQ(scores[1].sizes, 0);
}

TEST(Recommend, HostSizesWhenNoDeviceWasMeasuredAndTiesKeepFewerRanks) {
  std::map<int, std::vector<Decision>> by;
  by[1] = {D(MemKind::kHost, 4096, 10)};
  by[2] = {D(MemKind::kHost, 4096, 10)};
  std::vector<RanksPerGpuScore> scores;
  EXPECT_EQ(RecommendRanksPerGpu(by, {}, &scores), 1);
  EXPECT_EQ(RecommendRanksPerGpu({}, {}, &scores), 0);
}

}  // namespace
}  // namespace multilane
