// ballot_test.cc: the start-up agreement's rule (ballot.h), without MPI.
#include "libmlallreduce/startup/ballot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace mla::lib {
namespace {

Ballot On(uint64_t settings = 7, const std::string& version = "0.1.0") {
  Ballot b;
  b.version = version;
  b.settings = settings;
  return b;
}

Ballot Off(const std::string& reason, uint64_t settings = 7) {
  Ballot b = On(settings);
  b.on = false;
  b.reason = reason;
  return b;
}

std::vector<std::optional<std::string>> Publish(const std::vector<std::optional<Ballot>>& ballots) {
  std::vector<std::optional<std::string>> out;
  for (const auto& b : ballots) out.push_back(b ? std::optional<std::string>(EncodeBallot(*b)) : std::nullopt);
  return out;
}

TEST(Ballot, RoundTrip) {
  const Ballot b = Off("no profile | for node type x; tune it", 0xfedcba9876543210ull);
  const auto back = DecodeBallot(EncodeBallot(b));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->version, "0.1.0");
  EXPECT_EQ(back->settings, 0xfedcba9876543210ull);
  EXPECT_FALSE(back->on);
  EXPECT_EQ(back->reason, "no profile | for node type x; tune it");
}

TEST(Ballot, RefusesOtherTexts) {
  for (const char* text : {"", "mla1", "mla2|on|0000000000000007|0.1.0|", "mla1|maybe|0000000000000007|0.1.0|",
                           "mla1|on|7|0.1.0|", "mla1|on|000000000000000G|0.1.0|", "mla1|on|0000000000000007||"}) {
    EXPECT_FALSE(DecodeBallot(text).has_value()) << text;
  }
}

TEST(Decide, AllOnAlike) {
  const Verdict v = Decide(Publish({On(), On(), On()}));
  EXPECT_TRUE(v.consistent);
  EXPECT_TRUE(v.on);
  EXPECT_TRUE(v.line.empty());
}

TEST(Decide, ABareRankTurnsEveryoneOffAndTheFirstCarrierSays) {
  const Verdict v = Decide(Publish({std::nullopt, On(), std::nullopt, On()}));
  EXPECT_FALSE(v.consistent);
  EXPECT_FALSE(v.on);
  EXPECT_EQ(v.reporter, 1);
  EXPECT_NE(v.line.find("ranks 0 and 2 of 4 run without multilane"), std::string::npos) << v.line;
  EXPECT_NE(v.line.find("every rank runs unchanged"), std::string::npos) << v.line;
}

TEST(Decide, AnotherProtocolIsNotPairedWith) {
  auto published = Publish({On(), On()});
  published[1] = "mla2|whatever";
  const Verdict v = Decide(published);
  EXPECT_FALSE(v.consistent);
  EXPECT_EQ(v.reporter, 0);
  EXPECT_NE(v.line.find("rank 1 runs a multilane version with another start-up protocol"), std::string::npos);
}

TEST(Decide, TwoVersions) {
  const Verdict v = Decide(Publish({On(7, "0.1.0"), On(7, "0.2.0")}));
  EXPECT_FALSE(v.consistent);
  EXPECT_EQ(v.reporter, 0);
  EXPECT_NE(v.line.find("0.1.0 on rank 0, 0.2.0 on rank 1"), std::string::npos) << v.line;
}

TEST(Decide, AnOffVoteWithOtherSettingsNamesItsRankAndReason) {
  const Verdict v = Decide(Publish({On(7), On(7), Off("no profile for node type n2; tune it", 9)}));
  EXPECT_FALSE(v.consistent);
  EXPECT_FALSE(v.on);
  EXPECT_EQ(v.reporter, 0);  // every rank sees every reason: the lowest rank says it
  EXPECT_NE(v.line.find("rank 2: no profile for node type n2; tune it"), std::string::npos) << v.line;
}

TEST(Decide, AMuteRankNeverReports) {
  Ballot mute = Off("the mpich build in an Open MPI job", 3);
  mute.counts = false;
  const auto back = DecodeBallot(EncodeBallot(mute));
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->counts);
  EXPECT_FALSE(back->on);
  const Verdict v = Decide(Publish({mute, On(7), On(7)}));
  EXPECT_FALSE(v.on);
  EXPECT_EQ(v.reporter, 1);
  EXPECT_NE(v.line.find("rank 0: the mpich build in an Open MPI job"), std::string::npos) << v.line;
}

TEST(Decide, OneBadSettingForAllIsSaidOnceAsItself) {
  const Verdict v = Decide(Publish({Off("MULTILANE_ALGO='x' is bad"), Off("MULTILANE_ALGO='x' is bad")}));
  EXPECT_TRUE(v.consistent);
  EXPECT_FALSE(v.on);
  EXPECT_EQ(v.reporter, 0);
  EXPECT_EQ(v.line, "MULTILANE_ALGO='x' is bad");
}

TEST(Decide, SettingsThatDiffer) {
  const Verdict v = Decide(Publish({On(7), On(8)}));
  EXPECT_FALSE(v.consistent);
  EXPECT_EQ(v.reporter, 0);
  EXPECT_NE(v.line.find("differ between ranks"), std::string::npos);
}

// MPI_MAX of two words as an MPI compares them: unsigned, as the standard
// says, or signed, as MPICH 4.0 does for MPI_UNSIGNED_LONG_LONG.
uint64_t Max(uint64_t a, uint64_t b, bool as_signed) {
  if (!as_signed) return std::max(a, b);
  return static_cast<int64_t>(a) > static_cast<int64_t>(b) ? a : b;
}

void CombineInto(uint64_t all[kBallotWords], const uint64_t w[kBallotWords], bool as_signed) {
  for (int i = 0; i < kBallotWords; ++i) all[i] = Max(all[i], w[i], as_signed);
}

// The collective form: combine the words of every rank as MPI_MAX would.
Verdict Combine(const std::vector<Ballot>& ballots, int self, bool as_signed = false) {
  uint64_t all[kBallotWords] = {};
  for (size_t r = 0; r < ballots.size(); ++r) {
    uint64_t w[kBallotWords];
    BallotToWords(ballots[r], static_cast<int>(r), w);
    if (r == 0)
      std::copy(w, w + kBallotWords, all);
    else
      CombineInto(all, w, as_signed);
  }
  return DecideFromWords(all, ballots[static_cast<size_t>(self)], self);
}

// MPICH 4.0 compares MPI_UNSIGNED_LONG_LONG as signed: the decision is the
// same (an off vote with the same settings is not lost, nor its reporter).
TEST(DecideFromWords, TheSameUnderASignedMaximum) {
  for (bool as_signed : {false, true}) {
    SCOPED_TRACE(as_signed ? "signed" : "unsigned");
    EXPECT_TRUE(Combine({On(0xfedcba9876543210ull), On(0xfedcba9876543210ull)}, 0, as_signed).on);
    const std::vector<Ballot> one_off = {On(0xfedcba9876543210ull), Off("bad", 0xfedcba9876543210ull),
                                         On(0xfedcba9876543210ull)};
    for (int self = 0; self < 3; ++self) {
      const Verdict v = Combine(one_off, self, as_signed);
      EXPECT_FALSE(v.on);
      EXPECT_TRUE(v.consistent);
      EXPECT_EQ(v.reporter, 1);
    }
    EXPECT_EQ(Combine(one_off, 1, as_signed).line, "bad");
    const Verdict differ = Combine({On(0x8000000000000001ull), On(0x0000000000000002ull)}, 0, as_signed);
    EXPECT_FALSE(differ.consistent);
    const Verdict versions = Combine({On(7, "0.1.0"), On(7, "0.2.0"), On(7, "0.1.0")}, 2, as_signed);
    EXPECT_NE(versions.line.find("different multilane versions"), std::string::npos);
  }
}

// A rank of the first protocol (magic 0x6d6c61310a0b0c0d and its bitwise
// complement, word 7 zero) in the job: another protocol, under either maximum.
TEST(DecideFromWords, TheFirstProtocolIsAnotherProtocol) {
  const uint64_t magic1 = 0x6d6c61310a0b0c0dull;
  const uint64_t first[kBallotWords] = {magic1, ~magic1, 5, ~5ull, 7, ~7ull, 0, 0};
  for (bool as_signed : {false, true}) {
    uint64_t all[kBallotWords];
    BallotToWords(On(), 0, all);
    CombineInto(all, first, as_signed);
    const Verdict v = DecideFromWords(all, On(), 0);
    EXPECT_FALSE(v.on);
    EXPECT_NE(v.line.find("another start-up protocol"), std::string::npos) << (as_signed ? "signed" : "unsigned");
    // What the first protocol checks: its magic pair intact and word 7 zero.
    const bool first_sees_itself = all[0] == ~all[1] && all[0] == magic1 && all[7] == 0;
    EXPECT_FALSE(first_sees_itself);
  }
}

TEST(DecideFromWords, MatchesDecide) {
  EXPECT_TRUE(Combine({On(), On(), On()}, 1).on);
  const Verdict versions = Combine({On(7, "0.1.0"), On(7, "0.2.0")}, 1);
  EXPECT_FALSE(versions.consistent);
  EXPECT_EQ(versions.reporter, 0);
  const std::vector<Ballot> off = {On(7), Off("no profile", 9), Off("no family build", 3)};
  for (int self = 0; self < 3; ++self) {
    const Verdict v = Combine(off, self);
    EXPECT_FALSE(v.consistent);
    EXPECT_FALSE(v.on);
    EXPECT_EQ(v.reporter, 1);  // the lowest off-voting rank, which knows its reason
    EXPECT_EQ(v.line.empty(), self != 1);
  }
  EXPECT_NE(Combine(off, 1).line.find("rank 1: no profile"), std::string::npos);
  const Verdict differ = Combine({On(7), On(8)}, 0);
  EXPECT_FALSE(differ.consistent);
  EXPECT_NE(differ.line.find("differ between ranks"), std::string::npos);
}

}  // namespace
}  // namespace mla::lib
