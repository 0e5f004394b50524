// ballot.h: the start-up agreement's rule (docs/all-in-or-all-out.md).
//
// Every rank that carries multilane casts one ballot before the program's
// first MPI call can see it: its library version, the hash of its settings,
// and whether it can and will run multilane.  The ballots of all ranks reach
// every rank (through PMIx, or through one fixed collective where the job is
// certified to run multilane on every rank), and every rank applies the same
// rule to the same ballots, so all take the same decision.  Pure logic: no
// MPI, no PMIx.
#ifndef MLA_BALLOT_H_
#define MLA_BALLOT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libmlallreduce/startup/ballot_summary.h"

namespace mla::lib {

// One rank's vote.
struct Ballot {
  std::string version;    // the library version (no '|')
  uint64_t settings = 0;  // Config::fingerprint: every MULTILANE_* value read
  bool on = true;         // false: this rank cannot or will not run multilane
  std::string reason;     // why off: one line that ends with the fix
  // False for a rank that publishes its vote but cannot read the others'
  // (a build injected into a job of the other MPI family): it never reports.
  bool counts = true;
};

// The decision every rank takes from all ballots.
struct Verdict {
  // Every rank carries this protocol, one version and the same settings: the
  // library may make collective calls of its own (layouts, the job report).
  bool consistent = false;
  // consistent, and every rank votes on: the algorithms may run.
  bool on = false;
  // The rank that prints `line` (-1: nobody), so a job sees it once.
  int reporter = -1;
  // Why multilane is off, for the user (printed by `reporter`); empty when on.
  // With one setting for all ranks it is the reporter's own reason as it
  // voted it, so a warning printed elsewhere with the same text is the same.
  std::string line;
};

// The ballot as the text published for the other ranks:
// "mla1|<on, off or mute>|<settings, 16 hex digits>|<version>|<reason>"
// (mute: off, and the rank does not count).
std::string EncodeBallot(const Ballot& ballot);

// Parses EncodeBallot's text; nullopt for anything else (another protocol).
std::optional<Ballot> DecodeBallot(const std::string& text);

// The decision from every rank's published text, indexed by world rank;
// nullopt marks a rank that published nothing (it runs without multilane) and
// a text DecodeBallot refuses counts as another protocol.  Every rank sees
// every reason here, so the reporter is the lowest rank that counts.
Verdict Decide(const std::vector<std::optional<std::string>>& published);

// The same decision from the summary of every rank's ballot
// (ballot_summary.h): Decide(published) is DecideFromSummary of the merged
// SummaryOfRank of each rank, merged in any order or grouping.
Verdict DecideFromSummary(const BallotSummary& all);

// The collective form, for jobs certified to carry multilane on every rank
// (MULTILANE_ALL_RANKS): kBallotWords 64-bit words that one in-place
// MPI_Allreduce of MPI_UNSIGNED_LONG_LONG with MPI_MAX over MPI_COMM_WORLD
// combines.  This call is frozen: every version issues exactly it, once,
// right after MPI_Init.  Its words never rely on the MPI comparing them as
// unsigned (MPICH 4.0 compares them as signed), and a job mixing this
// encoding with the first one's is seen as another protocol on every rank.
constexpr int kBallotWords = 8;

// Fills `words` with this rank's ballot.
void BallotToWords(const Ballot& ballot, int rank, uint64_t words[kBallotWords]);

// The decision from the combined words; `mine` and `rank` say who this rank
// is, since only an off-voting rank knows its own reason.
Verdict DecideFromWords(const uint64_t words[kBallotWords], const Ballot& mine, int rank);

}  // namespace mla::lib

#endif  // MLA_BALLOT_H_
