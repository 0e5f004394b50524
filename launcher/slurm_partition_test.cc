// slurm_partition_test.cc: node types of a partition from sinfo output.
#include "launcher/slurm_partition.h"

#include <gtest/gtest.h>

#include <utility>

namespace multilane {
namespace {

TEST(SlurmPartition, GroupsNodesDescribedAlike) {
  const auto groups = ParseSinfoNodeGroups(
      "a01|64|gpu:h100:4(S:0-1)|h100\n"
      "a02|64|gpu:h100:4(S:0-1)|h100\n"
      "b01|128|gpu:a100:8|a100\n"
      "a01|64|gpu:h100:4(S:0-1)|h100\n"  // listed again (two partitions)
      "garbage line\n"
      "c01|32|(null)|(null)\n");
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].nodes, (std::vector<std::string>{"a01", "a02"}));
  EXPECT_EQ(groups[0].gpus, 4);
  EXPECT_EQ(groups[1].nodes, (std::vector<std::string>{"b01"}));
  EXPECT_EQ(groups[1].gpus, 8);
  EXPECT_EQ(groups[2].gpus, 0);
  EXPECT_EQ(groups[2].cpus, "32");
}

TEST(SlurmPartition, GpusInGres) {
  // The last three found by fuzz/fuzz_sinfo.cc: a sign or an overflowing count used to pass through atoi.
  const std::pair<const char*, int> cases[] = {
      {"gpu:2", 2}, {"gpu:h100:8(S:0-1)", 8}, {"gpu:a:2,gpu:b:1,nic:1", 3},    {"(null)", 0},
      {"", 0},      {"gpu:h100:-4", 0},       {"gpu:99999999999999999999", 0}, {"gpu:a:2,gpu:b:x,gpu:c:+1", 2}};
  for (const auto& [gres, gpus] : cases) EXPECT_EQ(GpusInGres(gres), gpus) << gres;
}

TEST(SlurmPartition, SinfoArguments) {
  const auto args = SinfoNodeArguments("gpu");
  EXPECT_EQ(args.front(), "sinfo");
  EXPECT_EQ(args.back(), "%N|%c|%G|%f");
}

}  // namespace
}  // namespace multilane
