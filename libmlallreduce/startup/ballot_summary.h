// ballot_summary.h: what the start-up decision (ballot.h) needs to know of a
// set of ranks' ballots, in a few fields that merge: the summary of two
// disjoint sets of ranks is the Merge of theirs, in either order, so node
// leaders can combine a job's ballots in a tree (ballot_tree.h) and every way
// of combining them gives the decision Decide takes from the ballots
// themselves.  Pure logic: no MPI, no PMIx.
#ifndef MLA_BALLOT_SUMMARY_H_
#define MLA_BALLOT_SUMMARY_H_

#include <climits>
#include <cstdint>
#include <optional>
#include <string>

namespace mla::lib {

// A rank field that names no rank.
constexpr int kNoRank = INT_MAX;

// Some ranks: how many, and the lowest two (kNoRank where fewer).
struct RankSample {
  int64_t count = 0;
  int lowest[2] = {kNoRank, kNoRank};
};

struct BallotSummary {
  int64_t ranks = 0;    // ranks summarised
  RankSample bare;      // published no ballot: they run without multilane
  RankSample foreign;   // published a text DecodeBallot refuses (another protocol)
  int first = kNoRank;  // the lowest rank with a ballot, its version and settings
  std::string first_version;
  uint64_t first_settings = 0;
  int other_version = kNoRank;  // the lowest rank whose version is not first_version's
  std::string other_version_text;
  bool same_settings = true;  // every ballot's settings are first_settings
  int first_off = kNoRank;    // the lowest rank that votes off, and its reason
  std::string off_reason;
  int first_counting = kNoRank;  // the lowest rank whose ballot counts (it reads the others')
};

// The summary of one rank's published text (nullopt: it published none).
BallotSummary SummaryOfRank(int rank, const std::optional<std::string>& published);

// Adds `b`, the summary of ranks none of which `into` covers, to `into`.
void MergeInto(BallotSummary* into, const BallotSummary& b);

// The summary as text published for other ranks, tagged with `scope` (which
// ranks it covers, in the publisher's words; no '|').
std::string EncodeSummary(const BallotSummary& s, const std::string& scope);

// Parses EncodeSummary's text; nullopt for anything else, or for a summary
// of another scope.
std::optional<BallotSummary> DecodeSummary(const std::string& text, const std::string& scope);

}  // namespace mla::lib

#endif  // MLA_BALLOT_SUMMARY_H_
