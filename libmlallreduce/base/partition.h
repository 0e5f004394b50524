// partition.h: how a message of `count` elements is cut into blocks.
#ifndef MLA_PARTITION_H_
#define MLA_PARTITION_H_

#include <vector>

namespace mla::lib {

// Blocks of a message: block i holds counts[i] elements starting at element
// displs[i].  Blocks are contiguous, in order, and cover [0, count).
struct Partition {
  std::vector<int> counts;
  std::vector<int> displs;
};

// Cuts `count` elements into `parts` blocks as evenly as possible: the first
// count % active blocks get one element more.  Only the first `active` blocks
// (1 <= active <= parts) receive elements; the others are empty.  Requires
// count >= 0 and parts >= 1; active is clamped to [1, parts].
Partition BlockPartition(int count, int parts, int active);

// Block b of that cut, without building the others: its first element and
// its length (an empty block, b >= active, starts at `count`).  Requires
// count >= 0 and active >= 1.
void BlockOf(long long count, int active, int b, long long* first, long long* n);

// Cuts [0, count) into segments of at most `segment` elements (segment <= 0
// means one segment).  Returns the segment lengths, in order; empty for count 0.
std::vector<int> Segments(int count, long long segment);

}  // namespace mla::lib

#endif  // MLA_PARTITION_H_
