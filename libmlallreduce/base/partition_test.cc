#include "libmlallreduce/base/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace mla::lib {
namespace {

void ExpectCovers(const Partition& p, int count) {
  int offset = 0;
  for (size_t i = 0; i < p.counts.size(); ++i) {
    EXPECT_EQ(p.displs[i], offset) << "block " << i;
    EXPECT_GE(p.counts[i], 0);
    offset += p.counts[i];
  }
  EXPECT_EQ(offset, count);
}

TEST(BlockPartition, EvenSplit) {
  Partition p = BlockPartition(12, 4, 4);
  EXPECT_EQ(p.counts, (std::vector<int>{3, 3, 3, 3}));
  EXPECT_EQ(p.displs, (std::vector<int>{0, 3, 6, 9}));
}

TEST(BlockPartition, RemainderGoesToFirstBlocks) {
  Partition p = BlockPartition(14, 4, 4);
  EXPECT_EQ(p.counts, (std::vector<int>{4, 4, 3, 3}));
  ExpectCovers(p, 14);
}

TEST(BlockPartition, FewerElementsThanParts) {
  Partition p = BlockPartition(2, 5, 5);
  EXPECT_EQ(p.counts, (std::vector<int>{1, 1, 0, 0, 0}));
  ExpectCovers(p, 2);
}

TEST(BlockPartition, OnlyActiveBlocksGetElements) {
  Partition p = BlockPartition(10, 4, 2);
  EXPECT_EQ(p.counts, (std::vector<int>{5, 5, 0, 0}));
  EXPECT_EQ(p.displs, (std::vector<int>{0, 5, 10, 10}));
}

TEST(BlockPartition, ActiveIsClamped) {
  EXPECT_EQ(BlockPartition(6, 3, 0).counts, (std::vector<int>{6, 0, 0}));
  EXPECT_EQ(BlockPartition(6, 3, 9).counts, (std::vector<int>{2, 2, 2}));
}

TEST(BlockPartition, CoversEveryCountAndPartCount) {
  for (int count = 0; count < 40; ++count)
    for (int parts = 1; parts < 9; ++parts)
      for (int active = 1; active <= parts; ++active) {
        Partition p = BlockPartition(count, parts, active);
        ASSERT_EQ(p.counts.size(), static_cast<size_t>(parts));
        ExpectCovers(p, count);
        int hi = *std::max_element(p.counts.begin(), p.counts.begin() + active);
        int lo = *std::min_element(p.counts.begin(), p.counts.begin() + active);
        EXPECT_LE(hi - lo, 1) << count << " " << parts << " " << active;
      }
}

TEST(Segments, WholeMessageWhenNoChunk) {
  EXPECT_EQ(Segments(10, 0), (std::vector<int>{10}));
  EXPECT_EQ(Segments(10, 10), (std::vector<int>{10}));
  EXPECT_EQ(Segments(10, 99), (std::vector<int>{10}));
  EXPECT_TRUE(Segments(0, 4).empty());
}

TEST(Segments, LastSegmentHoldsTheRest) {
  EXPECT_EQ(Segments(10, 4), (std::vector<int>{4, 4, 2}));
  EXPECT_EQ(Segments(3, 1), (std::vector<int>{1, 1, 1}));
}

}  // namespace
}  // namespace mla::lib
