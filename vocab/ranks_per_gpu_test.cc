// ranks_per_gpu_test.cc: the one ranks-per-GPU rule.
#include "vocab/ranks_per_gpu.h"

#include <gtest/gtest.h>

namespace mla {
namespace {

TEST(RanksPerGpu, TakesOneToTheLimit) {
  int v = 0;
  EXPECT_TRUE(ParseRanksPerGpu("1", &v));
  EXPECT_EQ(v, 1);
  EXPECT_TRUE(ParseRanksPerGpu(std::to_string(kMaxRanksPerGpu), &v));
  EXPECT_EQ(v, kMaxRanksPerGpu);
  EXPECT_TRUE(ParseRanksPerGpu("04", &v));
  EXPECT_EQ(v, 4);
}

TEST(RanksPerGpu, RefusesEverythingElse) {
  for (const char* bad : {"", "0", "65", "100", "-1", "+2", " 2", "2 ", "0x2", "2.0", "two", "00000002"}) {
    int v = 7;
    EXPECT_FALSE(ParseRanksPerGpu(bad, &v)) << bad;
    EXPECT_EQ(v, 7) << bad;
  }
  EXPECT_EQ(RanksPerGpuRule(), "a number from 1 to 64");
}

TEST(RanksPerGpu, ListsSortedWithoutRepeats) {
  std::vector<int> values;
  std::string error;
  ASSERT_TRUE(ParseRanksPerGpuList("4,1,2,4", "--ranks-per-gpu", &values, &error)) << error;
  EXPECT_EQ(values, (std::vector<int>{1, 2, 4}));
  EXPECT_FALSE(ParseRanksPerGpuList("1,65", "--ranks-per-gpu", &values, &error));
  EXPECT_EQ(error,
            "--ranks-per-gpu '1,65': '65' is not a number from 1 to 64; give one value or a list such as 1,2,4,8");
  EXPECT_FALSE(ParseRanksPerGpuList("1,", "--ranks-per-gpu", &values, &error));
  EXPECT_FALSE(ParseRanksPerGpuList("", "--ranks-per-gpu", &values, &error));
  EXPECT_FALSE(ParseRanksPerGpuList("1,,2", "--ranks-per-gpu", &values, &error));
}

TEST(RanksPerGpu, InList) {
  EXPECT_TRUE(InRanksPerGpuList("1,2,4", 2));
  EXPECT_TRUE(InRanksPerGpuList("4", 4));
  EXPECT_FALSE(InRanksPerGpuList("1,2,4", 3));
  EXPECT_FALSE(InRanksPerGpuList("12", 1));
  EXPECT_FALSE(InRanksPerGpuList("", 1));
}

TEST(RanksPerGpu, VariableUnsetIsZeroAndBadValuesAreNamed) {
  int v = 7;
  std::string error;
  ASSERT_TRUE(ParseRanksPerGpuVariable("", &v, &error));
  EXPECT_EQ(v, 0);
  ASSERT_TRUE(ParseRanksPerGpuVariable("8", &v, &error));
  EXPECT_EQ(v, 8);
  // 100 is what atoi took in the probe and the benchmark and the library refused.
  EXPECT_FALSE(ParseRanksPerGpuVariable("100", &v, &error));
  EXPECT_EQ(v, 8);
  EXPECT_EQ(error, "MULTILANE_RANKS_PER_GPU='100' must be a number from 1 to 64 (ranks sharing one GPU)");
  EXPECT_FALSE(ParseRanksPerGpuVariable("2x", &v, &error));
  EXPECT_FALSE(ParseRanksPerGpuVariable("0", &v, &error));
}

TEST(RanksPerGpu, ZeroMeansOne) {
  EXPECT_EQ(RanksPerGpuOrOne(0), 1);
  EXPECT_EQ(RanksPerGpuOrOne(-3), 1);
  EXPECT_EQ(RanksPerGpuOrOne(4), 4);
  EXPECT_EQ(GpuGroupOfRank(5, 0), 5);
  EXPECT_EQ(GpuGroupOfRank(5, 2), 2);
}

TEST(RanksPerGpu, GivenRanksPerGpuFillsGpusInBlocks) {
  // 4 ranks, 2 per GPU, 2 GPUs: 0 0 1 1.
  EXPECT_EQ(GpuOfRank(0, 4, 2, 2), 0);
  EXPECT_EQ(GpuOfRank(1, 4, 2, 2), 0);
  EXPECT_EQ(GpuOfRank(2, 4, 2, 2), 1);
  EXPECT_EQ(GpuOfRank(3, 4, 2, 2), 1);
  // More groups than GPUs (virtual nodes of one host): round the GPUs again.
  EXPECT_EQ(GpuOfRank(2, 4, 1, 2), 0);
  EXPECT_EQ(GpuOfRank(3, 4, 1, 2), 1);
  EXPECT_EQ(GpuOfRank(7, 8, 2, 2), 1);
}

TEST(RanksPerGpu, UnsetSpreadsTheNodesRanksEvenly) {
  // Divisible: the same blocks as ranks_per_gpu = local_size / gpu_count.
  for (int i = 0; i < 8; ++i) EXPECT_EQ(GpuOfRank(i, 8, 0, 4), GpuOfRank(i, 8, 2, 4)) << i;
  // 6 ranks on 4 GPUs: every GPU used (0 0 1 2 2 3), as the Slurm plugin
  // places tasks; blocks of ceil(6/4) = 2 would leave GPU 3 idle (0 0 1 1 2 2).
  const int six_on_four[] = {0, 0, 1, 2, 2, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(GpuOfRank(i, 6, 0, 4), six_on_four[i]) << i;
  // Fewer ranks than GPUs: one each, spread.
  EXPECT_EQ(GpuOfRank(0, 2, 0, 4), 0);
  EXPECT_EQ(GpuOfRank(1, 2, 0, 4), 2);
  EXPECT_EQ(GpuOfRank(0, 1, 0, 2), 0);
}

TEST(RanksPerGpu, NoGpuForRanksOutOfRange) {
  EXPECT_EQ(GpuOfRank(0, 4, 0, 0), -1);
  EXPECT_EQ(GpuOfRank(4, 4, 0, 2), -1);
  EXPECT_EQ(GpuOfRank(-1, 4, 1, 2), -1);
  EXPECT_EQ(GpuOfRank(0, 0, 1, 2), -1);
}

}  // namespace
}  // namespace mla
