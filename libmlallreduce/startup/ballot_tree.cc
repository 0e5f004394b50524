// ballot_tree.cc: the ballots combined by node leaders in a tree
// (ballot_tree.h).
#include "libmlallreduce/startup/ballot_tree.h"

#include <algorithm>
#include <map>

#include "libmlallreduce/startup/ballot.h"

namespace mla::lib {
namespace {

class Tree {
 public:
  Tree(const TreeShape& shape, const Ballot& mine, const TreeStore& store)
      : shape_(shape), mine_(mine), store_(store) {}

  int Blocks() const { return (shape_.size + shape_.block - 1) / shape_.block; }
  int First(int g) const { return g * shape_.block; }
  int Count(int g) const { return std::min(shape_.block, shape_.size - First(g)); }

  // The lowest rank of block g whose ballot counts, or -1: its first rank's
  // ballot alone when that one counts, else the whole block's.
  int Leader(int g) {
    Read(g, 1);
    for (int i = 0; i < Count(g); ++i) {
      if (i == static_cast<int>(texts_[g].size())) Read(g, Count(g));
      const auto& text = texts_[g][static_cast<size_t>(i)];
      const std::optional<Ballot> b = text ? DecodeBallot(*text) : std::nullopt;
      if (b && b->counts) return First(g) + i;
    }
    return -1;
  }

  // Block g's subtree from its ballots and its children's subtrees.
  BallotSummary Compute(int g) {
    Read(g, Count(g));
    BallotSummary s;
    for (int i = 0; i < Count(g); ++i) MergeInto(&s, SummaryOfRank(First(g) + i, texts_[g][static_cast<size_t>(i)]));
    MergeInto(&s, Obtain(2 * g + 1));
    MergeInto(&s, Obtain(2 * g + 2));
    return s;
  }

  // Block g's subtree as its leader published it, else computed here.
  BallotSummary Obtain(int g) {
    if (g >= Blocks()) return BallotSummary{};
    const int leader = Leader(g);
    if (leader >= 0 && BuildsThisTree(leader)) {
      if (auto text = store_.summary(leader)) {
        if (auto s = DecodeSummary(*text, Scope(g))) return *s;
      }
    }
    return Compute(g);
  }

  std::string Scope(int g) const {
    return std::to_string(g) + "/" + std::to_string(shape_.block) + "/" + std::to_string(shape_.size);
  }

 private:
  // Reads block g's ballots up to its first `count` ranks.
  void Read(int g, int count) {
    auto& texts = texts_[g];
    const int have = static_cast<int>(texts.size());
    if (have >= count) return;
    auto more = store_.ballots(First(g) + have, count - have);
    more.resize(static_cast<size_t>(count - have));
    texts.insert(texts.end(), more.begin(), more.end());
  }

  // Whether `rank` of a read block runs this version with these settings:
  // only then is its summary waited for (another version's leader may
  // publish none, one of other settings may form other blocks).
  bool BuildsThisTree(int rank) {
    const auto& text = texts_[rank / shape_.block][static_cast<size_t>(rank % shape_.block)];
    const std::optional<Ballot> b = text ? DecodeBallot(*text) : std::nullopt;
    return b && b->version == mine_.version && b->settings == mine_.settings;
  }

  TreeShape shape_;
  const Ballot& mine_;
  const TreeStore& store_;
  std::map<int, std::vector<std::optional<std::string>>> texts_;  // per block, from its first rank
};

}  // namespace

int TreeBlock(int ranks_per_node) {
  const int node = std::max(ranks_per_node, 1);
  const int parts = (node + kMaxBlock - 1) / kMaxBlock;
  return node / parts;
}

BallotSummary AgreeByTree(const TreeShape& shape, int rank, const Ballot& mine, const TreeStore& store) {
  if (shape.size <= 0 || shape.block <= 0) return BallotSummary{};
  Tree tree(shape, mine, store);
  const int g = rank / shape.block;
  if (tree.Leader(g) == rank) {
    BallotSummary mine = tree.Compute(g);
    store.publish(EncodeSummary(mine, tree.Scope(g)));
    if (g == 0) return mine;
  }
  return tree.Obtain(0);
}

}  // namespace mla::lib
