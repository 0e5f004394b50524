// node_allreduce.h: an allreduce among the ranks of one node over their
// shared segment (node_area.h), with an optional step between nodes: lane's
// node reduce-scatter and allgather, without MPI in between.
#ifndef MLA_SHM_NODE_ALLREDUCE_H_
#define MLA_SHM_NODE_ALLREDUCE_H_

#include <mpi.h>

#include <cstdint>
#include <functional>

#include "libmlallreduce/shm/node_area.h"

namespace mla::lib {

// One rank's part of the node's allreduce.  `src` may equal `dst` (in place).
// The datatype is contiguous: each element is `extent` bytes, all of them data.
struct NodeStepCall {
  const char* src;
  char* dst;
  long long count;
  MPI_Aint extent;
  MPI_Datatype datatype;
  MPI_Op op;
  int active;  // ranks that reduce a block (1..ranks), lane's `lanes`
  // Read the peers' blocks from their buffers (single_copy.h) instead of
  // copying each rank's chunk into its slot first; only where every rank of
  // the node passed ProbeSingleCopy.  The one-shot form always copies.
  bool single_copy = false;
};

// The step between nodes for this rank's reduced block (`count` elements at
// `block`, in place): lane's allreduce among the ranks of the same index on
// the other nodes.  Empty on a one-node communicator.
using CrossNodeStep = std::function<int(char* block, int count)>;

// Messages on one node whose bytes times the node's ranks are at most this
// take the one-shot form: every rank reduces the whole message itself from
// all slots (one flag wait instead of two, but ranks x bytes read from other
// cores); above it, each rank reduces its block and copies the rest.  On the
// H100 host's 16 ranks the one-shot form took 4.8 us at 512 B and 13.7 us at
// 2 KiB, the two-step form 3.1 and 5.0 us even with a step between 2 nodes
// (docs/benchmarks.md).
constexpr size_t kOneShotReadBytes = 4u << 10;

// This rank's (`rank` of area.ranks()) part of one allreduce: the message is
// cut into chunks of the slot's size; for each chunk every rank copies its
// part into its slot, reduces its block from every rank's slot into the
// result area (in rank order), runs `cross` on it, and copies every block
// of the result out (with single_copy: each rank publishes where its part
// is and the owner of a block reads it from there; a rank writes block b of
// its own recvbuf only after b's owner said it is done, so in place is safe):
// every element is reduced by one rank only, so every
// rank ends with the same bits.  *epoch is this rank's count of the
// segment's epochs; every rank of the node must run the same calls in the
// same order.  Returns MPI_SUCCESS or the first error of a reduction or of
// `cross` (the flags still advance, so that no rank waits forever).
int NodeAllreduce(const NodeArea& area, int rank, uint64_t* epoch, const NodeStepCall& call,
                  const CrossNodeStep& cross);

}  // namespace mla::lib

#endif  // MLA_SHM_NODE_ALLREDUCE_H_
