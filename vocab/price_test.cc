#include "vocab/price.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mla {
namespace {

// The points of issue 30's entry host 8K-2M hier: measured at 16K, 64K, 256K, 1M.
std::vector<ProfilePoint> IssuePoints() {
  return {{16 << 10, 35.0, 41.0, 0.05},
          {64 << 10, 60.0, 70.0, 0.04},
          {256 << 10, 140, 170, 0.03},
          {1 << 20, 372.7, 429.1, 0.03}};
}

TEST(Price, AProbedSizeIsMeasured) {
  Price p;
  ASSERT_TRUE(PricePoints(IssuePoints(), 65536, &p));
  EXPECT_EQ(p.basis, PriceBasis::kMeasured);
  EXPECT_DOUBLE_EQ(p.time_us, 60.0);
  EXPECT_DOUBLE_EQ(p.mpi_time_us, 70.0);
  EXPECT_DOUBLE_EQ(p.noise, 0.04);
  EXPECT_EQ(p.lo_bytes, 65536u);
  // Within 0.1 % (a job's mean size need not be whole) is the same size.
  ASSERT_TRUE(PricePoints(IssuePoints(), 65536 * 1.0005, &p));
  EXPECT_EQ(p.basis, PriceBasis::kMeasured);
}

TEST(Price, BetweenTwoPointsIsLogLog) {
  Price p;
  // 32K is the geometric middle of 16K and 64K: the geometric mean of the times.
  ASSERT_TRUE(PricePoints(IssuePoints(), 32768, &p));
  EXPECT_EQ(p.basis, PriceBasis::kInterpolated);
  EXPECT_NEAR(p.time_us, std::sqrt(35.0 * 60.0), 1e-9);
  EXPECT_NEAR(p.mpi_time_us, std::sqrt(41.0 * 70.0), 1e-9);
  EXPECT_DOUBLE_EQ(p.noise, 0.05);  // the worse of the two
  EXPECT_EQ(p.lo_bytes, 16u << 10);
  EXPECT_EQ(p.hi_bytes, 64u << 10);
  // A quarter of the way in log size: t0 (t1/t0)^0.25.
  ASSERT_TRUE(PricePoints(IssuePoints(), 16384 * std::pow(4.0, 0.25), &p));
  EXPECT_NEAR(p.time_us, 35.0 * std::pow(60.0 / 35.0, 0.25), 1e-9);
  // A power law is reproduced exactly between its points.
  std::vector<ProfilePoint> law = {{1000, 10, 20}, {8000, 80, 160}};
  ASSERT_TRUE(PricePoints(law, 3000, &p));
  EXPECT_NEAR(p.time_us, 30, 1e-9);
  EXPECT_NEAR(p.mpi_time_us, 60, 1e-9);
  EXPECT_DOUBLE_EQ(p.noise, -1);  // not recorded
}

TEST(Price, OutsideThePointsIsExtrapolatedWithAClampedSlope) {
  Price p;
  // Below 16K: the slope of 16K-64K (0.39) from 16K.
  ASSERT_TRUE(PricePoints(IssuePoints(), 8192, &p));
  EXPECT_EQ(p.basis, PriceBasis::kExtrapolated);
  const double slope = std::log(60.0 / 35.0) / std::log(4.0);
  EXPECT_NEAR(p.time_us, 35.0 * std::pow(0.5, slope), 1e-9);
  EXPECT_DOUBLE_EQ(p.noise, 0.05);
  EXPECT_EQ(p.lo_bytes, 16u << 10);
  // Above: never more than linear in size, never falling.
  std::vector<ProfilePoint> steep = {{1000, 1, 1}, {2000, 100, 0.5}};
  ASSERT_TRUE(PricePoints(steep, 4000, &p));
  EXPECT_NEAR(p.time_us, 200, 1e-9);      // slope clamped to 1
  EXPECT_NEAR(p.mpi_time_us, 0.5, 1e-9);  // slope clamped to 0
  // One point: flat below it, linear above it.
  std::vector<ProfilePoint> one = {{1 << 20, 400, 500}};
  ASSERT_TRUE(PricePoints(one, 1 << 18, &p));
  EXPECT_NEAR(p.time_us, 400, 1e-9);
  ASSERT_TRUE(PricePoints(one, 1 << 22, &p));
  EXPECT_NEAR(p.time_us, 1600, 1e-9);
  EXPECT_EQ(p.basis, PriceBasis::kExtrapolated);
}

TEST(Price, NothingToPriceFrom) {
  Price p;
  p.time_us = 7;
  EXPECT_FALSE(PricePoints({}, 1000, &p));
  EXPECT_FALSE(PricePoints(IssuePoints(), 0, &p));
  EXPECT_FALSE(PricePoints(IssuePoints(), std::nan(""), &p));
  EXPECT_DOUBLE_EQ(p.time_us, 7);
}

// Issue 30's case: the bin 16K-32K (mean 24K) of an entry 8K-2M measured at
// 1 MiB.  The old rule priced it at 372.7 us, ten times what the tune measured
// there; the points price it between 16K and 64K.
TEST(Price, IssueCaseIsAnOrderOfMagnitudeBelowTheOldRule) {
  ProfileEntry e;
  e.min_bytes = 8 << 10;
  e.max_bytes = 2 << 20;
  e.time_us = 372.7;
  e.mpi_time_us = 429.1;
  e.measured_bytes = 1 << 20;
  const Price old_rule = PriceEntry(e, 24576);
  EXPECT_EQ(old_rule.basis, PriceBasis::kEntry);
  EXPECT_DOUBLE_EQ(old_rule.time_us, 372.7);
  EXPECT_EQ(old_rule.lo_bytes, 1u << 20);
  e.points = IssuePoints();
  const Price p = PriceEntry(e, 24576);
  EXPECT_EQ(p.basis, PriceBasis::kInterpolated);
  EXPECT_GT(p.time_us, 35.0);
  EXPECT_LT(p.time_us, 60.0);
  EXPECT_GT(old_rule.time_us / p.time_us, 8.0);
}

// A job's calls priced under one layout's entries: each bin by the entry
// holding its lower edge, at its mean size.
TEST(PriceCalls, EachBinAtItsMeanSizeUnderTheEntryHoldingItsLowerEdge) {
  ProfileEntry small;  // host [0, 8K): measured at 4K only
  small.max_bytes = 8 << 10;
  small.points = {{4 << 10, 10, 12, 0.05}};
  small.time_us = 10;
  ProfileEntry big;  // host [8K, inf): the issue's points
  big.min_bytes = 8 << 10;
  big.time_us = 372.7;
  big.measured_bytes = 1 << 20;
  big.points = IssuePoints();
  const std::vector<ProfileEntry> entries = {small, big};
  // 1000 calls of mean 32K (16K-64K: sqrt(35 x 60) each), 10 of 4K, none at 1M.
  const std::vector<BinCalls> calls = {
      {MemKind::kHost, 16 << 10, 1000, 32768}, {MemKind::kHost, 4 << 10, 10, 4096}, {MemKind::kHost, 1 << 20, 0, 0}};
  CallsPrice p = PriceCalls(entries, calls);
  EXPECT_TRUE(p.complete);
  EXPECT_EQ(p.bins, 2);
  EXPECT_EQ(p.extrapolated, 0);
  EXPECT_NEAR(p.total_us, 1000 * std::sqrt(35.0 * 60.0) + 10 * 10.0, 1e-6);
  // Below the entry's smallest point: extrapolated, and counted so.
  p = PriceCalls(entries, {{MemKind::kHost, 8 << 10, 1, 12288}});
  EXPECT_EQ(p.extrapolated, 1);
  // A bin of a kind no entry covers: incomplete, the rest still summed.
  p = PriceCalls(entries, {{MemKind::kDevice, 4 << 10, 5, 4096}, {MemKind::kHost, 4 << 10, 10, 4096}});
  EXPECT_FALSE(p.complete);
  EXPECT_EQ(p.bins, 1);
  EXPECT_DOUBLE_EQ(p.total_us, 100);
}

TEST(Price, AnEntryOfOnePointFollowsTheSystemMpisSlope) {
  // The GPU host's main job: [2M, 8M) measured at 4M, [8M, 32M) at 16M only
  // (its winner undone there), [32M, inf) at 64M only.
  ProfileEntry low, mid, top;
  low.min_bytes = 2 << 20;
  low.max_bytes = 8 << 20;
  low.points = {{4 << 20, 1800, 2000, 0.05}};
  mid.min_bytes = 8 << 20;
  mid.max_bytes = 32 << 20;
  mid.points = {{16 << 20, 7000, 7000, 0.1}};
  top.min_bytes = 32 << 20;
  top.points = {{64 << 20, 30000, 60000, 0.04}};
  const std::vector<ProfileEntry> entries = {low, mid, top};
  const std::vector<ProfilePoint> curve = SystemCurve(entries, MemKind::kHost, 0);
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_EQ(curve[1].bytes, 16u << 20);
  EXPECT_TRUE(SystemCurve(entries, MemKind::kDevice, 0).empty());
  // 8M, half of 16M: the system MPI's slope from 4M to 16M, not flat.
  const double slope = std::log(7000.0 / 2000) / std::log(4.0);
  Price p = PriceEntry(mid, 8 << 20, curve);
  EXPECT_EQ(p.basis, PriceBasis::kExtrapolated);
  EXPECT_NEAR(p.time_us, 7000 * std::pow(0.5, slope), 1e-6);
  EXPECT_NEAR(p.mpi_time_us, p.time_us, 1e-9);
  EXPECT_EQ(p.lo_bytes, 16u << 20);
  EXPECT_DOUBLE_EQ(PriceEntry(mid, 8 << 20).time_us, 7000);  // without a curve: flat below, as before
  // Above the last probed size there is no slope to borrow: linear, as before.
  p = PriceEntry(top, 128 << 20, curve);
  EXPECT_NEAR(p.time_us, 60000, 1e-6);
  // Below the first probed size of all: flat, as before.
  EXPECT_NEAR(PriceEntry(low, 2 << 20, curve).time_us, 1800, 1e-9);
  // A slope that would fall is clamped to 0.
  ProfileEntry falls = mid;
  falls.points = {{16 << 20, 7000, 1000, 0.1}};
  EXPECT_NEAR(PriceEntry(falls, 8 << 20, SystemCurve({low, falls}, MemKind::kHost, 0)).time_us, 7000, 1e-9);
  // PriceCalls borrows the same slope.
  EXPECT_NEAR(PriceCalls(entries, {{MemKind::kHost, 8 << 20, 1, 8 << 20}}).total_us, 7000 * std::pow(0.5, slope), 1e-6);
}

TEST(Price, BasisNames) {
  EXPECT_STREQ(PriceBasisName(PriceBasis::kMeasured), "measured");
  EXPECT_STREQ(PriceBasisName(PriceBasis::kInterpolated), "interpolated");
  EXPECT_STREQ(PriceBasisName(PriceBasis::kExtrapolated), "extrapolated");
  EXPECT_STREQ(PriceBasisName(PriceBasis::kEntry), "entry");
}

}  // namespace
}  // namespace mla
