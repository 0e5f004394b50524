// Why two halves of the segment suffice, without a barrier: a rank writes
// the slot and result block of epoch e+2 only after it saw every rank's
// `posted` reach e+2 (before reducing) or `reduced`/`posted` reach e+1 (at
// the end of e+1), and a rank posts e+1 only after it finished reading every
// slot and block of epoch e.  So nobody still reads what epoch e+2 overwrites.
// With single copy, the owner of block b reads it from each peer's buffer
// after that peer's `posted` and before its own `reduced`; a peer writes
// block b of its recvbuf (its sendbuf, in place) and returns from the call
// only after it saw that `reduced`, so no read meets a write or a buffer the
// program has taken back.  A peer publishes the next chunk's address only
// after every owner said `reduced` for this one.
#include "libmlallreduce/shm/node_allreduce.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "libmlallreduce/base/partition.h"
#include "libmlallreduce/shm/local_reduce.h"
#include "libmlallreduce/shm/single_copy.h"

namespace mla::lib {
namespace {

// Copies `bytes` at `from` into this rank's slot of `epoch` (single copy:
// publishes the address instead) and says so.
void Post(const NodeArea& area, int rank, uint64_t epoch, const char* from, size_t bytes, bool single_copy) {
  if (single_copy)
    area.flags(rank).source.store(reinterpret_cast<uint64_t>(from), std::memory_order_relaxed);
  else
    std::memcpy(area.input(epoch, rank), from, bytes);
  area.flags(rank).posted.store(epoch, std::memory_order_release);
}

// Scratch memory for a peer's block read with single copy, per thread.
char* Scratch(size_t bytes) {
  thread_local std::vector<char> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

// Where rank p's elements [first, first+n) of chunk `epoch` are to be read:
// its slot, or (single copy) its own buffer, read into `into` for a peer.
// Null when the kernel refused the read.
const char* Operand(const NodeArea& area, int rank, uint64_t epoch, const NodeStepCall& c, const char* own, int p,
                    size_t offset, size_t bytes, char* into) {
  if (!c.single_copy) return area.input(epoch, p) + offset;
  if (p == rank) return own + offset;
  const RankFlags& f = area.flags(p);
  const uint64_t at = f.source.load(std::memory_order_relaxed) + offset;
  return ReadPeer(static_cast<pid_t>(f.pid.load(std::memory_order_relaxed)), at, into, bytes) ? into : nullptr;
}

void WaitAllPosted(const NodeArea& area, uint64_t epoch) {
  for (int p = 0; p < area.ranks(); ++p) WaitForEpoch(area.flags(p).posted, epoch);
}

// out = rank 0's op rank 1's op ... elements [first, first+n) of the chunk
// at `own` (this rank's part), in rank order.
int ReduceSlots(const NodeArea& area, int rank, uint64_t epoch, const NodeStepCall& c, const char* own, long long first,
                long long n, char* out) {
  const size_t offset = static_cast<size_t>(first * c.extent), bytes = static_cast<size_t>(n * c.extent);
  char* scratch = c.single_copy ? Scratch(bytes) : nullptr;
  int rc = MPI_SUCCESS;
  for (int p = 0; p < area.ranks() && rc == MPI_SUCCESS; ++p) {
    const char* in = Operand(area, rank, epoch, c, own, p, offset, bytes, p == 0 ? out : scratch);
    if (in == nullptr)
      rc = MPI_ERR_OTHER;
    else if (p == 0 && in != out)
      std::memcpy(out, in, bytes);
    else if (p > 0)
      rc = LocalReduce(in, out, static_cast<int>(n), c.datatype, c.op);
  }
  return rc;
}

// The one-shot form of one chunk (one node only): every rank reduces it all.
int OneShot(const NodeArea& area, int rank, uint64_t epoch, const NodeStepCall& c, long long at, long long n) {
  const size_t bytes = static_cast<size_t>(n * c.extent);
  NodeStepCall copy = c;
  copy.single_copy = false;  // every rank reads every part: dst may be a peer's src
  Post(area, rank, epoch, c.src + at * c.extent, bytes, false);
  WaitAllPosted(area, epoch);
  // Reduce into dst only after every slot holds its input (dst may be src).
  return ReduceSlots(area, rank, epoch, copy, nullptr, 0, n, c.dst + at * c.extent);
}

// One chunk of `n` elements at element `at` of the message.
int Chunk(const NodeArea& area, int rank, uint64_t epoch, const NodeStepCall& c, long long at, long long n,
          const CrossNodeStep& cross) {
  const char* own = c.src + at * c.extent;
  Post(area, rank, epoch, own, static_cast<size_t>(n * c.extent), c.single_copy);
  WaitAllPosted(area, epoch);
  long long first = 0, mine = 0;
  BlockOf(n, c.active, rank, &first, &mine);
  int rc = MPI_SUCCESS;
  char* result = area.result(epoch);
  if (mine > 0) {
    rc = ReduceSlots(area, rank, epoch, c, own, first, mine, result + first * c.extent);
    if (rc == MPI_SUCCESS && cross) rc = cross(result + first * c.extent, static_cast<int>(mine));
  }
  area.flags(rank).reduced.store(epoch, std::memory_order_release);
  for (int p = 0; p < area.ranks(); ++p) {
    BlockOf(n, c.active, p, &first, &mine);
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
  const bool one_shot =
      !cross && static_cast<size_t>(call.count * call.extent) * static_cast<size_t>(area.ranks()) <= kOneShotReadBytes;
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
