#include "libmlallreduce/shm/node_area.h"

#include <sched.h>

#include <algorithm>
#include <new>

namespace mla::lib {
namespace {

constexpr size_t kFlagsOffset = 64;  // after the first cache line (unused)
constexpr size_t kPage = 4096;

size_t RoundUp(size_t v, size_t to) { return (v + to - 1) / to * to; }

size_t DataOffset(int ranks) { return RoundUp(kFlagsOffset + sizeof(RankFlags) * static_cast<size_t>(ranks), kPage); }

// Spins before the first yield: about a microsecond of looks.
constexpr int kSpinsBeforeYield = 256;

}  // namespace

size_t SlotBytesFor(int ranks) {
  constexpr size_t kSlot = 256u << 10;
  constexpr size_t kSegmentGoal = 64u << 20;
  const size_t fit = kSegmentGoal / (2 * (static_cast<size_t>(ranks) + 1));
  return std::max(kPage, std::min(kSlot, fit / kPage * kPage));
}

size_t NodeArea::Bytes(int ranks, size_t slot_bytes) {
  return DataOffset(ranks) + 2 * (static_cast<size_t>(ranks) + 1) * slot_bytes;
}

void NodeArea::Initialize(void* base, int ranks, size_t) {
  char* flags = static_cast<char*>(base) + kFlagsOffset;
  for (int r = 0; r < ranks; ++r) new (flags + sizeof(RankFlags) * r) RankFlags();
}

NodeArea::NodeArea(void* base, int ranks, size_t slot_bytes)
    : base_(static_cast<char*>(base)), ranks_(ranks), slot_bytes_(slot_bytes) {}

RankFlags& NodeArea::flags(int rank) const {
  return *std::launder(reinterpret_cast<RankFlags*>(base_ + kFlagsOffset + sizeof(RankFlags) * rank));
}

char* NodeArea::input(uint64_t epoch, int rank) const {
  const size_t half = (static_cast<size_t>(ranks_) + 1) * slot_bytes_;
  return base_ + DataOffset(ranks_) + (epoch & 1) * half + static_cast<size_t>(rank) * slot_bytes_;
}

char* NodeArea::result(uint64_t epoch) const { return input(epoch, ranks_); }

void WaitForEpoch(const std::atomic<uint64_t>& flag, uint64_t epoch) {
  for (int spins = 0; flag.load(std::memory_order_acquire) < epoch; ++spins) {
    if (spins >= kSpinsBeforeYield) sched_yield();
  }
}

}  // namespace mla::lib
