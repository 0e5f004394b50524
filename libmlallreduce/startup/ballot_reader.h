// ballot_reader.h: reading ranks' start-up ballots from PMIx within one
// bound for the whole read, and the other values the agreement reads
// (pmix_channel.h publishes and collects them).
// Apart from pmix_channel.cc so that the rule can be tested with PMIx calls
// of the test's own.
#ifndef MLA_BALLOT_READER_H_
#define MLA_BALLOT_READER_H_

#include <optional>
#include <string>
#include <vector>

#include "libmlallreduce/startup/pmix_abi.h"

namespace mla::lib {

// The PMIx client calls the read makes, and this process's name.
struct BallotReads {
  pmix::GetFn get = nullptr;       // PMIx_Get
  pmix::GetNbFn get_nb = nullptr;  // PMIx_Get_nb
  pmix::Proc self{};
  int* reads = nullptr;  // counts each value read (the agreement's cost), however many PMIx calls it took
};

// The seconds a whole read may take, at most, for the ranks whose ballot the
// local store lacks (their reads run at once): a rank without multilane is
// known absent after this long, however many there are.
constexpr int kBallotReadSeconds = 2;

// The text published under `key` by each rank first..first+count-1 of self's namespace,
// nullopt for a rank that published none.  First from the local store (what
// MPI_Init's exchange collected; Open MPI 4 collects every rank's data), then,
// for the ranks it lacks, from each rank's own node (the direct modex: Open
// MPI 5 collects none), all those reads in flight at once, each bounded by
// PMIX_TIMEOUT = kBallotReadSeconds, so that the whole read takes at most
// about kBallotReadSeconds.  A text longer than 64 KiB counts as none.
// Returns false in *complete when an answer did not come back in time (its
// request is left to PMIx, which must then stay initialised).
std::vector<std::optional<std::string>> ReadBallots(const BallotReads& pmix, const char* key, int first, int count,
                                                    bool* complete);

// The text `rank` publishes under `key`, waiting for it up to `seconds` (it
// may be published after this read began, and PMIx ends a wait early at the
// rank's next commit of anything: then it is asked again); nullopt when none
// came in time.
std::optional<std::string> ReadPublished(const BallotReads& pmix, const char* key, int rank, int seconds);

// The number of nodes of self's job (PMIX_NUM_NODES), 0 when unknown.
int ReadNodeCount(const BallotReads& pmix);

}  // namespace mla::lib

#endif  // MLA_BALLOT_READER_H_
