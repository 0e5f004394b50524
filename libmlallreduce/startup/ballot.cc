// ballot.cc: the start-up agreement's rule (ballot.h).
#include "libmlallreduce/startup/ballot.h"

#include <cinttypes>
#include <cstdio>

namespace mla::lib {
namespace {

constexpr char kTag[] = "mla1";
constexpr char kOffForAll[] = "multilane is off for the whole job and every rank runs unchanged";
// The collective form's words (BallotToWords): every value below 2^63, so
// that MPI_MAX gives the same words whether the MPI compares them as unsigned
// or, as MPICH 4.0 does for MPI_UNSIGNED_LONG_LONG, as signed.
constexpr uint64_t kMask = 0x7fffffffffffffffull;
// Word 0 of this protocol ("mla2"): below the first protocol's word 0
// (0x6d6c61310a0b0c0d), which wins the maximum when both are in one job, so
// that this side sees another protocol; word 7 is this protocol's tag, where
// the first protocol sends 0 and requires 0 back, so that it sees one too.
constexpr uint64_t kMagic = 0x2d6c61320a0b0c0dull;
constexpr uint64_t kWordsTag = 0x6d6c6132ull;

uint64_t Hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bit: the same in every process
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

// "rank 3", "ranks 3 and 5", "ranks 3, 5 and 7 others".
std::string RankList(const RankSample& ranks) {
  if (ranks.count == 1) return "rank " + std::to_string(ranks.lowest[0]);
  std::string s = "ranks " + std::to_string(ranks.lowest[0]);
  if (ranks.count == 2) return s + " and " + std::to_string(ranks.lowest[1]);
  return s + ", " + std::to_string(ranks.lowest[1]) + " and " + std::to_string(ranks.count - 2) + " others";
}

Verdict Off(int reporter, std::string line) {
  Verdict v;
  v.reporter = reporter;
  v.line = std::move(line);
  return v;
}

// Ranks that published nothing, or another protocol: nobody may call.
std::optional<Verdict> MissingRanks(const BallotSummary& s, int64_t size, int reporter) {
  if (s.bare.count > 0) {
    return Off(reporter, RankList(s.bare) + " of " + std::to_string(size) + (s.bare.count == 1 ? " runs" : " run") +
                             " without multilane (the library is not in their LD_PRELOAD or did not load "
                             "there); " +
                             kOffForAll +
                             "; give every rank the library: multilane run, srun --multilane, or "
                             "mpirun -x LD_PRELOAD");
  }
  if (s.foreign.count > 0) {
    return Off(reporter, RankList(s.foreign) + (s.foreign.count == 1 ? " runs" : " run") +
                             " a multilane version with another start-up protocol; " + kOffForAll +
                             "; install one multilane version on every node");
  }
  return std::nullopt;
}

}  // namespace

std::string EncodeBallot(const Ballot& b) {
  return std::string(kTag) + "|" +
         (b.on       ? "on"
          : b.counts ? "off"
                     : "mute") +
         "|" + Hex(b.settings) + "|" + b.version + "|" + b.reason;
}

std::optional<Ballot> DecodeBallot(const std::string& text) {
  std::vector<std::string> f;
  size_t start = 0;
  while (f.size() < 4) {
    const size_t bar = text.find('|', start);
    if (bar == std::string::npos) return std::nullopt;
    f.push_back(text.substr(start, bar - start));
    start = bar + 1;
  }
  if (f[0] != kTag || (f[1] != "on" && f[1] != "off" && f[1] != "mute") || f[2].size() != 16 || f[3].empty())
    return std::nullopt;
  Ballot b;
  for (char c : f[2]) {
    const bool digit = c >= '0' && c <= '9', letter = c >= 'a' && c <= 'f';
    if (!digit && !letter) return std::nullopt;
    b.settings = b.settings * 16 + static_cast<uint64_t>(digit ? c - '0' : c - 'a' + 10);
  }
  b.on = f[1] == "on";
  b.counts = f[1] != "mute";
  b.version = f[3];
  b.reason = text.substr(start);
  return b;
}

Verdict Decide(const std::vector<std::optional<std::string>>& published) {
  BallotSummary all;
  for (size_t r = 0; r < published.size(); ++r) MergeInto(&all, SummaryOfRank(static_cast<int>(r), published[r]));
  return DecideFromSummary(all);
}

Verdict DecideFromSummary(const BallotSummary& s) {
  if (s.ranks == 0) return Verdict{};
  const int reporter = s.first_counting == kNoRank ? -1 : s.first_counting;
  if (auto missing = MissingRanks(s, s.ranks, reporter)) return *missing;
  if (s.other_version != kNoRank) {
    // Every rank has a ballot here: the first is rank 0's.
    return Off(reporter, "ranks run different multilane versions (" + s.first_version + " on rank 0, " +
                             s.other_version_text + " on rank " + std::to_string(s.other_version) + "); " + kOffForAll +
                             "; install one version on every node, and upgrade while no job runs");
  }
  Verdict v;
  v.consistent = s.same_settings;
  if (s.first_off != kNoRank) {
    // The lowest rank that votes off gives the reason; with one setting for
    // all, it holds for every rank.
    v.reporter = reporter;
    v.line = v.consistent ? s.off_reason
                          : std::string(kOffForAll) + ": rank " + std::to_string(s.first_off) + ": " + s.off_reason;
    return v;
  }
  if (!v.consistent) {
    return Off(reporter, "the MULTILANE_* variables (or the profile file's content) differ between ranks; " +
                             std::string(kOffForAll) + " (pass the same variables to every rank, e.g. mpirun -x NAME)");
  }
  v.on = true;
  return v;
}

// Words: [0] magic, [1] its complement, [2] version, [3] its complement,
// [4] settings, [5] its complement (each value and complement taken in 63
// bits: the maximum of the values and the complement of the minimum, all
// equal when max == kMask - (kMask - min)), [6] the lowest off-voting rank as
// kMask - rank (0: none), [7] the protocol's tag.
void BallotToWords(const Ballot& ballot, int rank, uint64_t words[kBallotWords]) {
  const uint64_t values[3] = {kMagic, Hash(ballot.version) & kMask, ballot.settings & kMask};
  for (int i = 0; i < 3; ++i) {
    words[2 * i] = values[i];
    words[2 * i + 1] = kMask - values[i];
  }
  words[6] = ballot.on ? 0 : kMask - static_cast<uint64_t>(rank);
  words[7] = kWordsTag;
}

Verdict DecideFromWords(const uint64_t words[kBallotWords], const Ballot& mine, int rank) {
  auto same = [&](int i) { return words[2 * i] <= kMask && words[2 * i] == kMask - words[2 * i + 1]; };
  if (!same(0) || words[0] != kMagic || words[7] != kWordsTag) {
    return Off(0, std::string("some ranks run a multilane version with another start-up protocol; ") + kOffForAll +
                      "; install one multilane version on every node");
  }
  if (!same(1)) {
    return Off(0, "ranks run different multilane versions (" + mine.version + " on rank " + std::to_string(rank) +
                      "); " + kOffForAll + "; install one version on every node, and upgrade while no job runs");
  }
  Verdict v;
  v.consistent = same(2);
  if (words[6] != 0) {
    // Only the lowest off-voting rank knows its reason, and it reports.
    v.reporter = static_cast<int>(kMask - words[6]);
    if (v.reporter == rank) {
      v.line =
          v.consistent ? mine.reason : std::string(kOffForAll) + ": rank " + std::to_string(rank) + ": " + mine.reason;
    }
    return v;
  }
  if (!v.consistent) {
    return Off(0, "the MULTILANE_* variables (or the profile file's content) differ between ranks; " +
                      std::string(kOffForAll) + " (pass the same variables to every rank, e.g. mpirun -x NAME)");
  }
  v.on = true;
  return v;
}

}  // namespace mla::lib
