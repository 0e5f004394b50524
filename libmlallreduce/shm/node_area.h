// node_area.h: the layout of a node's segment and its flags.  For each of
// two halves (epoch parity) every rank has an input slot of slot_bytes, and
// the half has one result area of slot_bytes; every rank has two flags,
// `posted` (its input of an epoch is in its slot) and `reduced` (its block of
// an epoch's result is in the result area).  Flags only grow: a rank writes
// its own with release, reads the others' with acquire, and the epochs let
// the segment serve call after call without a barrier (node_allreduce.cc
// says why two halves suffice).
#ifndef MLA_SHM_NODE_AREA_H_
#define MLA_SHM_NODE_AREA_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace mla::lib {

// One rank's flags, each on a cache line of its own, and what the single-copy
// path (single_copy.h) needs of it: its pid, written once at set-up, and the
// address of its part of the current chunk, written before `posted`.
struct alignas(64) RankFlags {
  alignas(64) std::atomic<uint64_t> posted{0};
  alignas(64) std::atomic<uint64_t> reduced{0};
  alignas(64) std::atomic<uint64_t> source{0};
  std::atomic<int64_t> pid{0};
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the segment's flags must be lock-free across processes");

// The slot size for a node of `ranks` ranks: 256 KiB, less on large nodes so
// that a segment stays near 64 MiB; a multiple of 4 KiB.
size_t SlotBytesFor(int ranks);

// A view of one mapped segment.
class NodeArea {
 public:
  // The bytes a segment of `ranks` ranks and `slot_bytes` slots needs.
  static size_t Bytes(int ranks, size_t slot_bytes);

  // Constructs the flags (all 0) in a fresh segment at `base`; once, by its
  // creator, before any other rank attaches.
  static void Initialize(void* base, int ranks, size_t slot_bytes);

  NodeArea(void* base, int ranks, size_t slot_bytes);

  int ranks() const { return ranks_; }
  size_t slot_bytes() const { return slot_bytes_; }
  RankFlags& flags(int rank) const;
  char* input(uint64_t epoch, int rank) const;
  char* result(uint64_t epoch) const;

 private:
  char* base_;
  int ranks_;
  size_t slot_bytes_;
};

// Waits until `flag` holds at least `epoch` (acquire): spins a while, then
// yields the core between looks, so that more ranks than cores still move.
void WaitForEpoch(const std::atomic<uint64_t>& flag, uint64_t epoch);

}  // namespace mla::lib

#endif  // MLA_SHM_NODE_AREA_H_
