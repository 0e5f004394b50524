// Why two halves of the segment suffice, without a barrier: a rank writes
// the slot and result block of epoch e+2 only after it saw every rank's
// `posted` reach e+2 (before reducing) or `reduced`/`posted` reach e+1 (at
// the end of e+1), and a rank posts e+1 only after it finished reading every
// slot and block of epoch e.  So nobody still reads what epoch e+2 overwrites.
#include "libmlallreduce/shm/node_allreduce.h"

#include <algorithm>
#include <cstring>

#include "libmlallreduce/shm/local_reduce.h"

namespace mla::lib {
namespace {

// Block b of a chunk of `count` elements cut among `active` ranks.
void Block(long long count, int active, int b, long long* first, long long* n) {
  if (b >= active) {
    *first = count;
    *n = 0;
    return;
  }
  const long long q = count / active, r = count % active;
  *first = b * q + std::min<long long>(b, r);
  *n = q + (b < r ? 1 : 0);
}

// Copies `bytes` at `from` into this rank's slot of `epoch` and says so.
void Post(const NodeArea& area, int rank, uint64_t epoch, const char* from, size_t bytes) {
  std::memcpy(area.input(epoch, rank), from, bytes);
  area.flags(rank).posted.store(epoch, std::memory_order_release);
}

void WaitAllPosted(const NodeArea& area, uint64_t epoch) {
  for (int p = 0; p < area.ranks(); ++p) WaitForEpoch(area.flags(p).posted, epoch);
}

// out = slot[0] op slot[1] op ... of elements [first, first+n), in rank order.
int ReduceSlots(const NodeArea& area, uint64_t epoch, const NodeStepCall& c, long long first, long long n, char* out) {
  const size_t offset = static_cast<size_t>(first * c.extent);
  std::memcpy(out, area.input(epoch, 0) + offset, static_cast<size_t>(n * c.extent));
  int rc = MPI_SUCCESS;
  for (int p = 1; p < area.ranks() && rc == MPI_SUCCESS; ++p)
    rc = LocalReduce(area.input(epoch, p) + offset, out, static_cast<int>(n), c.datatype, c.op);
  return rc;
}

// The one-shot form of one chunk (one node only): every rank reduces it all.
int OneShot(const NodeArea& area, int rank, uint64_t epoch, const NodeStepCall& c, long long at, long long n) {
  const size_t bytes = static_cast<size_t>(n * c.extent);
  Post(area, rank, epoch, c.src + at * c.extent, bytes);
  WaitAllPosted(area, epoch);
  // Reduce into dst only after every slot holds its input (dst may be src).
  return ReduceSlots(area, epoch, c, 0, n, c.dst + at * c.extent);
}

// One chunk of `n` elements at element `at` of the message.
int Chunk(const NodeArea& area, int rank, uint64_t epoch, const NodeStepCall& c, long long at, long long n,
          const CrossNodeStep& cross) {
  Post(area, rank, epoch, c.src + at * c.extent, static_cast<size_t>(n * c.extent));
  WaitAllPosted(area, epoch);
  long long first = 0, mine = 0;
  Block(n, c.active, rank, &first, &mine);
  int rc = MPI_SUCCESS;
  char* result = area.result(epoch);
  if (mine > 0) {
    rc = ReduceSlots(area, epoch, c, first, mine, result + first * c.extent);
    if (rc == MPI_SUCCESS && cross) rc = cross(result + first * c.extent, static_cast<int>(mine));
  }
  area.flags(rank).reduced.store(epoch, std::memory_order_release);
  for (int p = 0; p < area.ranks(); ++p) {
    Block(n, c.active, p, &first, &mine);
    WaitForEpoch(area.flags(p).reduced, epoch);
    if (mine > 0)
      std::memcpy(c.dst + (at + first) * c.extent, result + first * c.extent, static_cast<size_t>(mine * c.extent));
  }
  return rc;
}

}  // namespace

int NodeAllreduce(const NodeArea& area, int rank, uint64_t* epoch, const NodeStepCall& call,
                  const CrossNodeStep& cross) {
  const long long chunk = std::max<long long>(1, static_cast<long long>(area.slot_bytes()) / call.extent);
  const bool one_shot = !cross && static_cast<size_t>(call.count * call.extent) <= kOneShotBytes;
  int rc = MPI_SUCCESS;
  for (long long at = 0; at < call.count; at += chunk) {
    const long long n = std::min(chunk, call.count - at);
    const int r =
        one_shot ? OneShot(area, rank, ++*epoch, call, at, n) : Chunk(area, rank, ++*epoch, call, at, n, cross);
    if (rc == MPI_SUCCESS) rc = r;
  }
  return rc;
}

}  // namespace mla::lib
