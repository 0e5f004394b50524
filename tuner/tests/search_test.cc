#include "tuner/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "vocab/profile.h"  // the library's own parser (vocab/profile.cc)
#include "tuner/tests/measurement_for_test.h"

namespace mltuner {
namespace {

TEST(Stats, MedianAndSpread) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 2, 3}), 2.5);
  EXPECT_TRUE(std::isnan(Median({})));
  EXPECT_DOUBLE_EQ(RelativeSpread({100}), 0);
  EXPECT_DOUBLE_EQ(RelativeSpread({90, 100, 110}), 0.1);            // half the range over the median
  EXPECT_DOUBLE_EQ(RelativeSpread({100, 100, 100, 100, 1000}), 0);  // one outlier does not count
}

TEST(Decide, ClearWinner) {
  SearchResult r = Decide(
      {M(1 << 20, "passthrough", {100, 101, 99}), M(1 << 20, "lane", {50, 51, 49}), M(1 << 20, "hier", {80, 80, 80})});
  ASSERT_EQ(r.decisions.size(), 1u);
  const Decision& d = r.decisions[0];
  EXPECT_EQ(d.winner, "lane");
  EXPECT_DOUBLE_EQ(d.time_us, 50);
  EXPECT_DOUBLE_EQ(d.mpi_time_us, 100);
  EXPECT_DOUBLE_EQ(d.gain, 2);
  EXPECT_FALSE(d.kept_within_noise);
  ASSERT_EQ(r.bins.size(), 1u);
  EXPECT_EQ(r.bins[0].from, 0u);
  EXPECT_EQ(r.bins[0].to, UINT64_MAX);
}

TEST(Decide, WithinNoiseKeepsSystemMpi) {
  // 2 % faster, floor 3 %: the system MPI stays.
  SearchResult r = Decide({M(4096, "passthrough", {100, 100, 100}), M(4096, "lane", {98, 98, 98})});
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].winner, "passthrough");
  EXPECT_TRUE(r.decisions[0].kept_within_noise);
  EXPECT_EQ(r.decisions[0].fastest, "lane");
  // 10 % faster but the samples spread by 20 %: still within the noise
  // (2 x 0.929 x 0.2 / sqrt(3) = 21.5 %).
  r = Decide({M(4096, "passthrough", {80, 100, 120}), M(4096, "lane", {90, 90, 90})});
  EXPECT_EQ(r.decisions[0].winner, "passthrough");
  EXPECT_NEAR(r.decisions[0].noise, 2 * 0.929 * 0.2 / std::sqrt(3.0), 1e-12);
  // The same spread over 27 samples: the medians are known to 4 %, 10 % wins.
  std::vector<double> mpi, lane;
  for (int i = 0; i < 27; ++i) {  // evenly spread: 80..120 and 81..99
    mpi.push_back(80 + 40.0 * i / 26);
    lane.push_back(81 + 18.0 * i / 26);
  }
  r = Decide({M(4096, "passthrough", mpi), M(4096, "lane", lane)});
  EXPECT_EQ(r.decisions[0].winner, "lane") << r.decisions[0].noise;
  // 10 % faster, quiet samples: the candidate wins; a lower floor lets 2 % win.
  r = Decide({M(4096, "passthrough", {100, 100, 100}), M(4096, "lane", {90, 90, 90})});
  EXPECT_EQ(r.decisions[0].winner, "lane");
  SearchOptions o;
  o.noise_floor = 0.01;
  r = Decide({M(4096, "passthrough", {100, 100, 100}), M(4096, "lane", {98, 98, 98})}, o);
  EXPECT_EQ(r.decisions[0].winner, "lane");
}

TEST(Decide, InvalidNeverWinsAndMissingMpiIsReported) {
  SearchResult r = Decide({M(4096, "passthrough", {100}), M(4096, "lane", {10}, false), M(8192, "lane", {10})});
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].winner, "passthrough");
  EXPECT_EQ(r.decisions[0].fastest, "passthrough");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("8K"), std::string::npos);
}

TEST(Bins, GeometricBoundariesAndMerging) {
  std::vector<Measurement> ms;
  // 4K, 16K: system MPI; 64K, 256K, 1M: lane; 4M: hier
  uint64_t sizes[] = {4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
  const char* fast[] = {"passthrough", "passthrough", "lane", "lane", "lane", "hier"};
  for (int i = 0; i < 6; ++i) {
    ms.push_back(M(sizes[i], "passthrough", {100.0 * (i + 1)}));
    for (const char* c : {"lane", "hier"})
      ms.push_back(M(sizes[i], c, {std::string(c) == fast[i] ? 50.0 * (i + 1) : 200.0 * (i + 1)}));
  }
  SearchResult r = Decide(ms);
  ASSERT_EQ(r.decisions.size(), 6u);
  ASSERT_EQ(r.bins.size(), 3u);
  EXPECT_EQ(r.bins[0].winner, "passthrough");
  EXPECT_EQ(r.bins[0].from, 0u);
  EXPECT_EQ(r.bins[0].to, 32768u);  // sqrt(16K * 64K)
  EXPECT_EQ(r.bins[1].winner, "lane");
  EXPECT_EQ(r.bins[1].from, 32768u);
  EXPECT_EQ(r.bins[1].to, 2u << 20);         // sqrt(1M * 4M)
  EXPECT_DOUBLE_EQ(r.bins[1].time_us, 250);  // figures of the largest size (1M)
  EXPECT_DOUBLE_EQ(r.bins[1].mpi_time_us, 500);
  EXPECT_EQ(r.bins[2].winner, "hier");
  EXPECT_EQ(r.bins[2].from, 2u << 20);
  EXPECT_EQ(r.bins[2].to, UINT64_MAX);
}

TEST(Bins, NonPowerOfTwoSizesAndMemoryKinds) {
  std::vector<Decision> ds(4);
  ds[0].mem = MemKind::kHost, ds[0].bytes = 1000, ds[0].winner = "passthrough";
  ds[1].mem = MemKind::kHost, ds[1].bytes = 3000, ds[1].winner = "lane";
  ds[2].mem = MemKind::kDevice, ds[2].bytes = 4096, ds[2].winner = "lane";
  ds[3].mem = MemKind::kDevice, ds[3].bytes = 4100, ds[3].winner = "hier";
  std::vector<Bin> b = MakeBins(ds);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].to, 1732u);  // round(sqrt(3e6))
  EXPECT_EQ(b[1].from, 1732u);
  EXPECT_EQ(b[1].to, UINT64_MAX);
  EXPECT_EQ(b[2].mem, MemKind::kDevice);
  EXPECT_EQ(b[2].from, 0u);
  EXPECT_EQ(b[2].to, 4098u);
  EXPECT_EQ(b[3].from, 4098u);
}

// Issue 30: a merged bin keeps the medians of every size it was measured at,
// not only the largest (the report prices a job's sizes between them).
TEST(Profile, BinsKeepEveryMeasuredSize) {
  std::vector<Measurement> ms = {M(16 << 10, "passthrough", {41}),   M(16 << 10, "hier", {35}),
                                 M(64 << 10, "passthrough", {70}),   M(64 << 10, "hier", {60}),
                                 M(1 << 20, "passthrough", {429.1}), M(1 << 20, "hier", {372.7})};
  SearchResult r = Decide(ms, SearchOptions{0.05, true});
  ASSERT_EQ(r.bins.size(), 1u);
  ASSERT_EQ(r.bins[0].points.size(), 3u);
  EXPECT_EQ(r.bins[0].points[0].bytes, 16u << 10);
  EXPECT_DOUBLE_EQ(r.bins[0].points[0].time_us, 35);
  EXPECT_DOUBLE_EQ(r.bins[0].points[0].mpi_time_us, 41);
  EXPECT_DOUBLE_EQ(r.bins[0].points[0].noise, 0.05);
  const std::string text = RenderProfile(r.bins, {});
  EXPECT_NE(text.find("host 0 inf hier time_us=372.7 mpi_time_us=429.1 at=1M "
                      "pts=16K:35/41/0.05,64K:60/70/0.05,1M:372.7/429.1/0.05\n"),
            std::string::npos)
      << text;
  mla::Profile p;
  std::string error;
  ASSERT_TRUE(p.Parse(text, &error)) << error << "\n" << text;
  EXPECT_EQ(p.entries()[0].points.size(), 3u);
}

TEST(Profile, RenderedTextParsesWithTheLibraryParser) {
  std::vector<Measurement> ms = {M(4096, "passthrough", {10.5}),
                                 M(4096, "lane lanes=1", {20}),
                                 M(1 << 20, "passthrough", {1000}),
                                 M(1 << 20, "lane lanes=1 chunk=1M", {400.25}),
                                 M(64 << 20, "passthrough", {90000}),
                                 M(64 << 20, "hier chunk=4M", {45000}),
                                 M(1 << 20, "passthrough", {800}, true, MemKind::kDevice),
                                 M(1 << 20, "lane transport=nccl", {100}, true, MemKind::kDevice)};
  SearchResult r = Decide(ms);
  std::string text = RenderProfile(r.bins, {{"node_type", "abc123"}, {"tuned", "2026-11-29"}});
  EXPECT_EQ(text.rfind("multilane-profile 1 node_type=abc123 tuned=2026-11-29\n", 0), 0u) << text;
  EXPECT_NE(text.find("host 0 64K passthrough time_us=10.5 mpi_time_us=10.5 at=4K pts=4K:10.5/10.5/0.03\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("host 64K 8M lane lanes=1 chunk=1M time_us=400.25 mpi_time_us=1000 at=1M pts=1M:400.25/1000/0.03\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("host 8M inf hier chunk=4M time_us=45000 mpi_time_us=90000 at=64M pts=64M:45000/90000/0.03\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("device 0 inf lane transport=nccl time_us=100 mpi_time_us=800 at=1M pts=1M:100/800/0.03\n"),
            std::string::npos)
      << text;

  mla::Profile p;
  std::string error;
  ASSERT_TRUE(p.Parse(text, &error)) << error << "\n" << text;
  ASSERT_EQ(p.entries().size(), 4u);
  EXPECT_EQ(p.metadata().at("node_type"), "abc123");
  const mla::ProfileEntry* e = p.Lookup(mla::MemKind::kHost, 1 << 20, 1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->choice.algo, MLA_ALGO_LANE);
  EXPECT_EQ(e->choice.lanes, 1);
  EXPECT_EQ(e->choice.chunk_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(e->time_us, 400.25);
  EXPECT_EQ(e->measured_bytes, 1u << 20);  // at=: the size the times are from
  e = p.Lookup(mla::MemKind::kHost, 100, 1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->choice.algo, MLA_ALGO_PASSTHROUGH);
  e = p.Lookup(mla::MemKind::kHost, uint64_t{1} << 40, 1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->choice.algo, MLA_ALGO_HIER);
  e = p.Lookup(mla::MemKind::kDevice, 1, 1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->choice.transport, MLA_TRANSPORT_NCCL);
  // One line per entry also in the ';' form the environment variable uses.
  std::string one_line = text;
  for (char& c : one_line)
    if (c == '\n') c = ';';
  EXPECT_TRUE(p.Parse(one_line, &error)) << error;
}

TEST(DecisionTable, HasOneRowPerSize) {
  SearchResult r = Decide({M(4096, "passthrough", {100}), M(4096, "lane", {99}), M(1 << 20, "passthrough", {100}),
                           M(1 << 20, "lane", {50})});
  std::string t = FormatDecisionTable(r.decisions);
  EXPECT_NE(t.find("passthrough (within noise)"), std::string::npos) << t;
  EXPECT_NE(t.find("2.00x"), std::string::npos) << t;
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 3);
}

TEST(DecisionTable, ALongWinnerLabelKeepsTheColumnsAligned) {
  SearchResult r = Decide({M(4096, "passthrough", {100}), M(4096, "lane", {50}), M(1 << 20, "passthrough", {100}),
                           M(1 << 20, "lane", {50})});
  r.decisions[0].winner = "passthrough";
  r.decisions[0].undone = "passthrough mpi=recursive_doubling";
  const std::string t = FormatDecisionTable(r.decisions);
  EXPECT_NE(t.find("passthrough (passthrough mpi=recursive_doubling not repeated)"), std::string::npos) << t;
  // The header and every row are equally long: the columns line up.
  std::vector<size_t> lengths;
  for (size_t start = 0; start < t.size();) {
    const size_t nl = t.find('\n', start);
    lengths.push_back(nl - start);
    start = nl + 1;
  }
  ASSERT_EQ(lengths.size(), 3u);
  EXPECT_EQ(lengths[0], lengths[1]) << t;
  EXPECT_EQ(lengths[1], lengths[2]) << t;
}

TEST(Halving, DropsLosersKeepsBestTwoAndMpi) {
  std::map<std::string, std::vector<double>> s = {{"passthrough", {300, 300}},
                                                  {"a", {100, 100}},
                                                  {"b", {105, 104}},
                                                  {"c", {200}},
                                                  {"d", {400}},
                                                  {"e", {108}},
                                                  {"f", {150}}};
  // within 10 %: a, b, e; at most half of 7 = 4; passthrough always.
  EXPECT_EQ(Survivors(s), (std::vector<std::string>{"a", "b", "e", "passthrough"}));
  // Far apart: the best two and the system MPI.
  s = {{"passthrough", {1000}}, {"a", {100}}, {"b", {300}}, {"c", {500}}};
  EXPECT_EQ(Survivors(s), (std::vector<std::string>{"a", "b", "passthrough"}));
  // The system MPI among the best two: it and the other best.
  s = {{"passthrough", {100}}, {"a", {120}}, {"b", {300}}};
  EXPECT_EQ(Survivors(s), (std::vector<std::string>{"a", "passthrough"}));
  // Halving caps even the close ones: 6 within the margin, keep 3.
  s = {{"passthrough", {100}}, {"a", {100}}, {"b", {101}}, {"c", {102}}, {"d", {103}}, {"e", {104}}};
  EXPECT_EQ(Survivors(s).size(), 3u);
  HalvingOptions no_halve;
  no_halve.halve = false;
  EXPECT_EQ(Survivors(s, no_halve).size(), 6u);
  // Candidates without samples yet are kept.
  s = {{"passthrough", {100}}, {"a", {}}, {"b", {1000}}, {"c", {2000}}};
  EXPECT_EQ(Survivors(s), (std::vector<std::string>{"a", "b", "passthrough"}));
}

TEST(Decide, PairedRepetitionsCancelDriftOfTheMachine) {
  // The machine slows down 2x for the last repetitions; the candidate is
  // 30 % faster than the system MPI in every repetition.
  std::vector<double> mpi = {16, 16.5, 16.2, 16.4, 16.1, 16.3, 33, 32, 34};
  std::vector<double> cand;
  for (double t : mpi) cand.push_back(t * 0.7);
  cand[6] = 24;  // and some noise of its own
  std::vector<Measurement> ms = {{MemKind::kHost, 1 << 24, "passthrough", mpi, true},
                                 {MemKind::kHost, 1 << 24, "hier chunk=4M", cand, true}};
  const SearchResult b = Decide(ms);
  ASSERT_EQ(b.decisions.size(), 1u);
  EXPECT_EQ(b.decisions[0].winner, "hier chunk=4M");
  EXPECT_NEAR(b.decisions[0].gain, 1 / 0.7, 0.1);
  // No real difference stays the system MPI, paired or not.
  std::vector<double> same = mpi;
  same[0] *= 0.99;
  ms[1].samples = same;
  EXPECT_EQ(Decide(ms).decisions[0].winner, "passthrough");
  SearchOptions unpaired;
  unpaired.paired = false;
  EXPECT_EQ(Decide(ms, unpaired).decisions[0].winner, "passthrough");
}

TEST(Halving, NoisyRoundsDropLess) {
  // The best's samples spread by about 30 %: a candidate 14 % behind stays
  // (it would be dropped in a quiet round), and nothing is halved away.
  std::map<std::string, std::vector<double>> quiet = {{"passthrough", {500, 500, 500}},
                                                      {"a", {100, 100, 100}},
                                                      {"b", {101, 101, 101}},
                                                      {"c", {114, 114, 114}},
                                                      {"d", {300, 300, 300}}};
  EXPECT_EQ(Survivors(quiet), (std::vector<std::string>{"a", "b", "passthrough"}));
  std::map<std::string, std::vector<double>> noisy = {{"passthrough", {500, 500, 500}},
                                                      {"a", {80, 100, 140}},
                                                      {"b", {101, 101, 101}},
                                                      {"c", {114, 114, 114}},
                                                      {"d", {300, 300, 300}}};
  EXPECT_EQ(Survivors(noisy), (std::vector<std::string>{"a", "b", "c", "passthrough"}));
}

}  // namespace
}  // namespace mltuner

namespace mltuner {
namespace {

// A tune of several ranks-per-GPU values writes each value's bins with ppg=N
// beside the recommended value's bins without it; the library's look-up then
// takes a job's own value first and the recommended one for any other.
TEST(Profile, BinsPerRanksPerGpuParseAndLookUpByPpg) {
  Bin one;
  one.mem = MemKind::kDevice;
  one.winner = "passthrough";
  one.ppg = 1;
  one.time_us = 10;
  one.mpi_time_us = 10;
  one.measured_bytes = 4096;
  Bin four = one;
  four.winner = "lane";
  four.ppg = 4;
  Bin fallback = four;
  fallback.ppg = 0;
  const std::string text = RenderProfile({one, four, fallback}, {});
  EXPECT_NE(text.find("device 0 inf lane ppg=4 time_us=10 mpi_time_us=10 at=4K\n"), std::string::npos) << text;
  mla::Profile p;
  std::string error;
  ASSERT_TRUE(p.Parse(text, &error)) << error << "\n" << text;
  EXPECT_EQ(p.Lookup(mla::MemKind::kDevice, 100, 1)->choice.algo, MLA_ALGO_PASSTHROUGH);
  EXPECT_EQ(p.Lookup(mla::MemKind::kDevice, 100, 4)->choice.algo, MLA_ALGO_LANE);
  EXPECT_EQ(p.Lookup(mla::MemKind::kDevice, 100, 4)->ppg, 4);
  EXPECT_EQ(p.Lookup(mla::MemKind::kDevice, 100, 2)->ppg, 0);  // untuned value: the recommended entries
}

}  // namespace
}  // namespace mltuner
