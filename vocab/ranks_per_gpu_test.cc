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

}  // namespace
}  // namespace mla
