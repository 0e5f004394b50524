// ballot_tree.h: the start-up agreement's ballots combined by node leaders
// in a tree (docs/all-in-or-all-out.md, "The tree"), so that a rank reads
// O(ranks per node) values, not one per rank of the job.
//
// The ranks form blocks of consecutive ranks (a node's, at most kMaxBlock);
// block g's children are blocks 2g+1 and 2g+2.  A block's leader is its
// lowest rank whose ballot counts.  Each leader reads its block's ballots
// and its children's subtree summaries, and publishes its own subtree's
// summary; every rank then reads block 0's, the job's.  Every summary is a
// function of the ballots alone (ballot_summary.h), which the MPI's start-up
// exchange fixed before anyone reads: a summary that does not come in time,
// or whose leader runs another version or other settings, is computed by the
// reader from the ballots of that subtree instead, and gives the same
// decision.  Pure logic over the
// store below: pmix_channel.cc binds it to PMIx, tests to their own.
#ifndef MLA_BALLOT_TREE_H_
#define MLA_BALLOT_TREE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "libmlallreduce/startup/ballot.h"
#include "libmlallreduce/startup/ballot_summary.h"

namespace mla::lib {

// The most ranks a block holds: a node of more ranks forms several blocks.
constexpr int kMaxBlock = 64;

// The store the tree reads and writes.
struct TreeStore {
  // The ballot texts of ranks first..first+count-1 (nullopt: none published).
  std::function<std::vector<std::optional<std::string>>(int first, int count)> ballots;
  // The summary text `rank` published, waited for a bounded time; nullopt
  // when none came.
  std::function<std::optional<std::string>(int rank)> summary;
  // Publishes this rank's subtree summary.
  std::function<void(const std::string& text)> publish;
};

struct TreeShape {
  int size = 0;   // ranks in the job
  int block = 1;  // ranks per block (TreeBlock)
};

// The block size for nodes of `ranks_per_node` ranks (at least 1): the node,
// or an even share of it no larger than kMaxBlock.
int TreeBlock(int ranks_per_node);

// The summary of every rank's ballot, as rank `rank` (whose ballot is
// `mine`) learns it through the tree; as its block's leader it publishes its
// subtree's summary on the way.  A leader's summary is waited for only when
// its ballot has this rank's version and settings: then it builds the same
// tree (MULTILANE_RANKS_PER_NODE is one of the settings).
BallotSummary AgreeByTree(const TreeShape& shape, int rank, const Ballot& mine, const TreeStore& store);

}  // namespace mla::lib

#endif  // MLA_BALLOT_TREE_H_
