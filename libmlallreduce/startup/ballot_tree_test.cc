// ballot_tree_test.cc: the ballots combined by node leaders (ballot_tree.h),
// over a store of the test's own that counts reads: every rank reaches
// Decide's decision whatever the leaders publish, and a rank's reads do not
// grow with the number of nodes.
#include "libmlallreduce/startup/ballot_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "libmlallreduce/startup/ballot.h"

namespace mla::lib {
namespace {

// The PMIx store of one job, every rank a thread: the ballots, what each
// leader published (a reader waits for it, as PMIx does, unless leaders
// never publish), and each rank's decision and reads.
struct FakeJob {
  std::vector<std::optional<std::string>> ballots;
  bool leaders_publish = true;  // false: no summary ever comes
  int block = 1;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<int, std::string> published;
  std::map<int, std::pair<Verdict, int>> agreed;  // rank: its decision and its reads

  std::optional<Ballot> BallotOf(int r) const {
    const auto& text = ballots[static_cast<size_t>(r)];
    return text ? DecodeBallot(*text) : std::nullopt;
  }

  std::optional<std::string> WaitFor(int rank) {
    std::unique_lock<std::mutex> lock(mutex);
    if (!leaders_publish) return std::nullopt;
    changed.wait_for(lock, std::chrono::seconds(20), [&] { return published.count(rank) != 0; });
    auto it = published.find(rank);
    if (it == published.end()) return std::nullopt;
    return it->second;
  }

  void Agree(int r) {
    int reads = 0;
    TreeStore s;
    s.ballots = [this, &reads](int first, int count) {
      reads += count;
      return std::vector<std::optional<std::string>>(ballots.begin() + first, ballots.begin() + first + count);
    };
    s.summary = [this, &reads](int rank) {
      ++reads;
      return WaitFor(rank);
    };
    s.publish = [this, r](const std::string& text) {
      std::lock_guard<std::mutex> lock(mutex);
      if (leaders_publish) published[r] = text;
      changed.notify_all();
    };
    const BallotSummary all = AgreeByTree({static_cast<int>(ballots.size()), block}, r, *BallotOf(r), s);
    std::lock_guard<std::mutex> lock(mutex);
    agreed[r] = {DecideFromSummary(all), reads};
  }

  // Every rank whose ballot counts agrees, all at once (the others do not read).
  void AgreeAll() {
    std::vector<std::thread> ranks;
    for (int r = 0; r < static_cast<int>(ballots.size()); ++r)
      if (BallotOf(r) && BallotOf(r)->counts) ranks.emplace_back([this, r] { Agree(r); });
    for (auto& t : ranks) t.join();
  }
};

Ballot MakeBallot(bool on, uint64_t settings, const std::string& version) {
  Ballot b;
  b.version = version;
  b.settings = settings;
  b.on = on;
  if (!on) b.reason = "no profile for this node; tune it";
  return b;
}

std::vector<std::optional<std::string>> AllOn(int size) {
  return std::vector<std::optional<std::string>>(static_cast<size_t>(size), EncodeBallot(MakeBallot(true, 7, "1.0")));
}

void ExpectSameVerdict(const Verdict& got, const Verdict& want, const std::string& where) {
  EXPECT_EQ(got.on, want.on) << where;
  EXPECT_EQ(got.consistent, want.consistent) << where;
  EXPECT_EQ(got.reporter, want.reporter) << where;
  EXPECT_EQ(got.line, want.line) << where;
}

// Random jobs: bare ranks, another protocol, off votes, other versions and
// settings, mute ranks; leaders that publish and leaders that never do.
TEST(BallotTree, EveryRankTakesDecidesDecision) {
  std::mt19937 rng(45);
  for (int trial = 0; trial < 300; ++trial) {
    FakeJob job;
    const int size = 1 + static_cast<int>(rng() % 40);
    for (int r = 0; r < size; ++r) {
      const unsigned pick = rng() % 40;
      Ballot b = MakeBallot(pick != 1, pick == 2 ? 8 : 7, pick == 3 ? "2.0" : "1.0");
      b.counts = pick != 4;
      job.ballots.push_back(pick == 5   ? std::nullopt
                            : pick == 6 ? std::optional<std::string>("mla9|on")
                                        : std::optional<std::string>(EncodeBallot(b)));
    }
    job.leaders_publish = trial % 3 != 0;
    job.block = 1 + static_cast<int>(rng() % 6);
    const Verdict want = Decide(job.ballots);
    job.AgreeAll();
    for (const auto& [r, got] : job.agreed) {
      ExpectSameVerdict(got.first, want,
                        "trial " + std::to_string(trial) + " rank " + std::to_string(r) + " of " +
                            std::to_string(size) + ", blocks of " + std::to_string(job.block));
    }
  }
}

// Issue 45: a rank reads at most its block's ballots, two children's first
// ballot and summary, and block 0's; never one per rank of the job.
TEST(BallotTree, ReadsPerRankDoNotGrowWithNodes) {
  constexpr int kBlock = 4;
  std::map<int, int> most;
  for (int nodes : {2, 4, 16, 64, 256}) {
    FakeJob job;
    job.ballots = AllOn(nodes * kBlock);
    job.block = kBlock;
    job.AgreeAll();
    ASSERT_EQ(job.agreed.size(), static_cast<size_t>(nodes * kBlock));
    for (const auto& [r, got] : job.agreed) {
      EXPECT_TRUE(got.first.on) << "rank " << r;
      most[nodes] = std::max(most[nodes], got.second);
    }
    EXPECT_LE(most[nodes], kBlock + 6) << nodes << " nodes";
  }
  EXPECT_EQ(most[256], most[16]) << "a rank's reads grew from 16 to 256 nodes";
}

TEST(BallotSummary, RoundTripAndRefusals) {
  BallotSummary s = SummaryOfRank(3, EncodeBallot(MakeBallot(false, 7, "1.0")));
  MergeInto(&s, SummaryOfRank(5, std::nullopt));
  const std::string text = EncodeSummary(s, "1/4/8");
  const auto back = DecodeSummary(text, "1/4/8");
  ASSERT_TRUE(back.has_value()) << text;
  EXPECT_EQ(EncodeSummary(*back, "1/4/8"), text);
  EXPECT_EQ(back->bare.lowest[0], 5);
  EXPECT_EQ(back->off_reason, "no profile for this node; tune it");
  EXPECT_FALSE(DecodeSummary(text, "1/4/9").has_value()) << "another scope";
  for (const std::string& bad : {std::string(""), text.substr(0, 20), "mls2" + text.substr(4)}) {
    EXPECT_FALSE(DecodeSummary(bad, "1/4/8").has_value()) << bad;
  }
  std::string leading_zero = text;
  leading_zero.replace(leading_zero.find("|2|"), 3, "|02|");
  EXPECT_FALSE(DecodeSummary(leading_zero, "1/4/8").has_value()) << leading_zero;
}

TEST(BallotTree, BlocksAreANodeAtMostKMaxBlock) {
  EXPECT_EQ(TreeBlock(0), 1);
  EXPECT_EQ(TreeBlock(8), 8);
  EXPECT_EQ(TreeBlock(kMaxBlock), kMaxBlock);
  EXPECT_EQ(TreeBlock(96), 48);
  EXPECT_EQ(TreeBlock(1024), 64);
}

}  // namespace
}  // namespace mla::lib
