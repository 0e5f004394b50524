#include "libmlallreduce/base/stats.h"

#include <gtest/gtest.h>

namespace mla::lib {
namespace {

TEST(Stats, UnsupportedCountsByReason) {
  ResetStats();
  CountUnsupported(Unsupported::kOneRank);
  CountUnsupported(Unsupported::kOneRank);
  CountUnsupported(Unsupported::kLayout);
  const std::string line = StatsLine(StatsSnapshot(), EntryStatsSnapshot(), DetailStatsSnapshot());
  EXPECT_NE(line.find(" unsupported=3 unsupported_one_rank=2 unsupported_intercomm=0 unsupported_op=0 "
                      "unsupported_datatype=0 unsupported_layout=1 unsupported_arguments=0 device=0"),
            std::string::npos)
      << line;
}

TEST(Stats, SystemAlgorithmsByName) {
  ResetStats();
  const int ring = SystemAlgorithmSlot("ring");
  ASSERT_GE(ring, 0);
  EXPECT_EQ(SystemAlgorithmSlot("ring"), ring);
  const int rd = SystemAlgorithmSlot("recursive_doubling");
  ASSERT_GE(rd, 0);
  EXPECT_NE(rd, ring);
  EXPECT_STREQ(SystemAlgorithmName(rd), "recursive_doubling");
  EXPECT_STREQ(SystemAlgorithmName(kSystemAlgorithmSlots), "");
  CountDone(MLA_ALGO_PASSTHROUGH, 8);
  CountDone(MLA_ALGO_PASSTHROUGH, 8);
  CountSystemAlgorithm(ring);
  CountSystemAlgorithm(ring);
  CountSystemAlgorithm(-1);  // a name beyond the slots: not counted by name
  const std::string line = StatsLine(StatsSnapshot(), EntryStatsSnapshot(), DetailStatsSnapshot());
  // Only the names that ran a call, right after the passthrough they are part of.
  EXPECT_NE(line.find("calls=0 passthrough=2 mpi:ring=2 lane=0"), std::string::npos) << line;
  EXPECT_EQ(line.find("mpi:recursive_doubling"), std::string::npos) << line;
  ResetStats();
  EXPECT_EQ(DetailStatsSnapshot().system_algos[ring], 0u);
  EXPECT_EQ(SystemAlgorithmSlot("ring"), ring);  // a reset keeps the names
}

TEST(Stats, SlotsRunOut) {
  for (int i = 0; i < kSystemAlgorithmSlots; ++i) SystemAlgorithmSlot("algo" + std::to_string(i));
  EXPECT_EQ(SystemAlgorithmSlot("one_too_many"), -1);
  EXPECT_EQ(SystemAlgorithmSlot(std::string(60, 'x')), -1);
}

}  // namespace
}  // namespace mla::lib
