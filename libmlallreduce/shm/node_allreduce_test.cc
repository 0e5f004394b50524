// The node allreduce's flag protocol with threads standing in for ranks over
// one real segment (run under TSan by the tsan preset: tests/CMakeLists.txt,
// tsan_shm_flags).  The threads share one mapping, so that TSan, which
// knows memory by its address, sees every access of the slots and flags;
// one test gives each thread a mapping of its own, as processes have.
#include "libmlallreduce/shm/node_allreduce.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "libmlallreduce/shm/segment_file.h"

namespace mla::lib {
namespace {

// `ranks` threads run `calls` allreduces of `count` MPI_INT (sum) on one
// segment; rank r's element i is r * 1000 + i + call, so the sum is known.
// Every second call runs in place.  Returns the first wrong element, or "".
std::string RunRanks(int ranks, int calls, long long count, bool cross, bool own_mappings = false,
                     bool single_copy = false) {
  const size_t slot = 4096;  // small slots: many chunks and epochs per call
  const size_t bytes = NodeArea::Bytes(ranks, slot);
  std::string name, error;
  SegmentMap first;
  if (!CreateSegment(bytes, &name, &first, &error)) return error;
  NodeArea::Initialize(first.base, ranks, slot);
  std::vector<SegmentMap> maps(ranks);
  maps[0] = first;
  for (int r = 1; r < ranks && own_mappings; ++r)
    if (!AttachSegment(name, bytes, &maps[r], &error)) return error;
  UnlinkSegment(name);
  const NodeArea shared(first.base, ranks, slot);
  for (int r = 0; r < ranks; ++r) shared.flags(r).pid.store(getpid());  // single copy reads this process
  std::vector<std::string> wrong(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      const NodeArea area(maps[own_mappings ? r : 0].base, ranks, slot);
      uint64_t epoch = 0;
      std::vector<int32_t> send(count), recv(count);
      for (int call = 0; call < calls; ++call) {  // all calls even after a wrong one: peers wait for them
        for (long long i = 0; i < count; ++i) send[i] = static_cast<int32_t>(r * 1000 + i + call);
        const bool in_place = call % 2 == 1;
        if (in_place) recv = send;
        const NodeStepCall c{reinterpret_cast<const char*>(in_place ? recv.data() : send.data()),
                             reinterpret_cast<char*>(recv.data()),
                             count,
                             4,
                             MPI_INT,
                             MPI_SUM,
                             ranks,
                             single_copy};
        // A stand-in for the step between nodes: doubles the block.
        CrossNodeStep twice;
        if (cross) {
          twice = [](char* block, int n) {
            for (int i = 0; i < n; ++i) reinterpret_cast<int32_t*>(block)[i] *= 2;
            return MPI_SUCCESS;
          };
        }
        NodeAllreduce(area, r, &epoch, c, twice);
        for (long long i = 0; i < count; ++i) {
          const long long want = (1000LL * ranks * (ranks - 1) / 2 + ranks * (i + call)) * (cross ? 2 : 1);
          if (recv[i] != want && wrong[r].empty()) {
            wrong[r] = "rank " + std::to_string(r) + " call " + std::to_string(call) + " element " + std::to_string(i) +
                       ": " + std::to_string(recv[i]) + ", want " + std::to_string(want);
            break;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (SegmentMap& m : maps) UnmapSegment(&m);
  for (const std::string& w : wrong)
    if (!w.empty()) return w;
  return "";
}

TEST(ShmNodeStep, TwoStepManyChunksAndEpochs) {
  // 5000 ints = 20000 bytes: 5 chunks of 4 KiB per call, above the one-shot size.
  EXPECT_EQ(RunRanks(3, 20, 5000, false), "");
}

TEST(ShmNodeStep, OneShotSmallMessages) { EXPECT_EQ(RunRanks(4, 50, 33, false), ""); }

TEST(ShmNodeStep, CountBelowRanksAndCount1) {
  EXPECT_EQ(RunRanks(4, 10, 1, true), "");
  EXPECT_EQ(RunRanks(4, 10, 3, true), "");
}

TEST(ShmNodeStep, CrossStepOnEachBlock) { EXPECT_EQ(RunRanks(3, 12, 3001, true), ""); }

// Single copy (process_vm_readv of this very process): many chunks, in
// place every second call, counts below the ranks.
TEST(ShmNodeStep, SingleCopy) {
  EXPECT_EQ(RunRanks(3, 20, 5000, false, false, true), "");
  EXPECT_EQ(RunRanks(4, 10, 3, true, false, true), "");
}

TEST(ShmNodeStep, EachRankItsOwnMapping) { EXPECT_EQ(RunRanks(3, 12, 5000, false, true), ""); }

}  // namespace
}  // namespace mla::lib
