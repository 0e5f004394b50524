// gpu_buffers_test.cc: what docs/gpu.md promises about kinds of memory, the
// CUDA IPC handle cache and streams, each checked with exact counters:
//  - cudaMalloc buffers shared with CUDA IPC, the handles cached (hits
//    counted), a buffer freed and another made at the same address opened
//    afresh, at most 1024 peer allocations kept (least recently used closed);
//  - cudaMallocAsync (pool) buffers, which CUDA IPC cannot share, staged
//    through the host with exactly one warning;
//  - managed and pinned host memory on the host path (not device calls);
//  - one host and one device buffer staged;
//  - work queued on another (non-blocking) stream before the call complete
//    before the library reads the buffer, and the result there on return.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_support.h"

namespace gputest {
namespace {

constexpr char kIpcWarning[] = "could not be shared with CUDA IPC";

mla_choice Lane() {
  mla_choice c{};
  c.algo = MLA_ALGO_LANE;
  return c;
}

// lane maps the buffers of the other ranks of its node.
int Peers() { return Layout().node_size - 1; }

// An in-place float sum of `count` ones at `buf` (device memory); checks the
// return code and, when `check`, the result (g_size everywhere).
void SumOnes(void* buf, int count, bool check, Local* local, const std::string& what) {
  std::vector<float> ones(count, 1.0f);
  Check(cudaMemcpy(buf, ones.data(), count * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy", local);
  const mla_choice lane = Lane();
  if (mla_allreduce_with(MPI_IN_PLACE, buf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &lane) != MPI_SUCCESS)
    local->Fail(what + ": mla_allreduce_with failed");
  if (!check) return;
  Check(cudaMemcpy(ones.data(), buf, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy", local);
  for (int i = 0; i < count; ++i) {
    if (ones[i] != static_cast<float>(g_size)) {
      local->Fail(what + ": element " + std::to_string(i) + " is " + std::to_string(ones[i]));
      break;
    }
  }
}

TEST(IpcCache, RepeatedCallsOnTheSameBuffersOpenNoNewHandles) {
  Local local;
  // Above any flag path limit these tests set (1 MiB): the flag path never maps the application's buffers.
  const int count = (1 << 18) + 4;
  DevicePair bufs(count * sizeof(float), &local);
  const TypeCase& f = FindType(MPI_FLOAT);
  const mla_choice lane = Lane();
  mla_stats s0, s1, s2;
  mla_get_stats(&s0);
  RunCall(Call{&f, MPI_SUM, count, false, 1}, &lane, &bufs, &local);
  mla_get_stats(&s1);
  for (int i = 0; i < 50; ++i) RunCall(Call{&f, MPI_SUM, count, false, 2u + i}, &lane, &bufs, &local);
  mla_get_stats(&s2);
  // Each call looks up the send and the receive buffer of every peer.
  const uint64_t peers = static_cast<uint64_t>(Peers());
  if (s1.ipc_opened - s0.ipc_opened != 2 * peers || s1.ipc_hits != s0.ipc_hits)
    local.Fail("first call on new buffers: opened " + std::to_string(s1.ipc_opened - s0.ipc_opened) + ", hits " +
               std::to_string(s1.ipc_hits - s0.ipc_hits) + " (expected " + std::to_string(2 * peers) + ", 0)");
  if (s2.ipc_opened != s1.ipc_opened || s2.ipc_hits - s1.ipc_hits != 50 * 2 * peers)
    local.Fail("50 calls on the same buffers: opened " + std::to_string(s2.ipc_opened - s1.ipc_opened) + ", hits " +
               std::to_string(s2.ipc_hits - s1.ipc_hits) + " (expected 0, " + std::to_string(100 * peers) + ")");
  ExpectAllRanksOk(local);
}

TEST(IpcCache, BuffersFreedAndReallocatedAtTheSameAddressAreOpenedAfresh) {
  Local local;
  const int count = (1 << 18) + 1;  // above any flag path limit the tests set (1 MiB)
  const size_t bytes = count * sizeof(int);
  const mla_choice lane = Lane();
  const uint64_t peers = static_cast<uint64_t>(Peers());
  int same_address = 0;
  void* previous = nullptr;
  for (int round = 0; round < 4; ++round) {
    void *send = nullptr, *recv = nullptr;
    Check(cudaMalloc(&send, bytes), "cudaMalloc", &local);
    Check(cudaMalloc(&recv, bytes), "cudaMalloc", &local);
    if (round > 0 && send == previous) ++same_address;
    previous = send;
    std::vector<int> host(count, round + 1 + g_rank), got(count, 0);
    Check(cudaMemcpy(send, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy", &local);
    mla_stats before, after;
    mla_get_stats(&before);
    if (mla_allreduce_with(send, recv, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &lane) != MPI_SUCCESS)
      local.Fail("round " + std::to_string(round) + ": mla_allreduce_with failed");
    mla_get_stats(&after);
    Check(cudaMemcpy(got.data(), recv, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", &local);
    const int expect = g_size * (round + 1) + g_size * (g_size - 1) / 2;
    if (got[0] != expect || got[count - 1] != expect)
      local.Fail("round " + std::to_string(round) + ": got " + std::to_string(got[0]) + ", expected " +
                 std::to_string(expect) + " (a stale IPC mapping?)");
    // New allocations have new buffer ids: every peer buffer is a miss.
    if (after.ipc_opened - before.ipc_opened != 2 * peers || after.ipc_hits != before.ipc_hits)
      local.Fail("round " + std::to_string(round) + ": opened " + std::to_string(after.ipc_opened - before.ipc_opened) +
                 " and hit " + std::to_string(after.ipc_hits - before.ipc_hits) + " peer buffers, expected " +
                 std::to_string(2 * peers) + " and 0");
    Check(cudaFree(send), "cudaFree", &local);
    Check(cudaFree(recv), "cudaFree", &local);
  }
  // Without a reuse of the address the test would prove nothing about stale
  // mappings: it must have happened.
  if (Peers() > 0 && same_address == 0)
    local.Fail(
        "cudaMalloc never returned a freed address again in 3 reallocations: the stale-mapping case was not exercised");
  if (g_rank == 0) std::printf("# reallocations at the same address on rank 0: %d of 3\n", same_address);
  ExpectAllRanksOk(local);
}

TEST(IpcCache, HoldsAtMost1024PeerAllocationsAndClosesTheLeastRecentlyUsed) {
  Local local;
  const uint64_t peers = static_cast<uint64_t>(Peers());
  // One 2 MiB allocation (its own IPC handle) per round, in place: each round
  // opens one allocation of each peer.  Enough rounds to pass the limit by two.
  const int rounds = peers > 0 ? static_cast<int>((1024 + peers - 1) / peers) + 2 : 4;
  const size_t bytes = 2u << 20;
  const int count = (1 << 18) + 1;  // above any flag path limit the tests set (1 MiB)
  std::vector<void*> bufs(rounds, nullptr);
  for (void*& b : bufs) Check(cudaMalloc(&b, bytes), "cudaMalloc", &local);
  mla_stats s0, s1, s2, s3;
  mla_get_stats(&s0);
  for (int r = 0; r < rounds; ++r)
    SumOnes(bufs[r], count, r == 0 || r == rounds - 1, &local, "round " + std::to_string(r));
  mla_get_stats(&s1);
  const uint64_t open_before = s0.ipc_opened - s0.ipc_closed;
  const uint64_t opened = static_cast<uint64_t>(rounds) * peers;
  const uint64_t closed = open_before + opened > 1024 ? open_before + opened - 1024 : 0;
  auto delta = [](const char* name, uint64_t a, uint64_t b) { return std::string(name) + " " + std::to_string(b - a); };
  if (s1.ipc_opened - s0.ipc_opened != opened || s1.ipc_closed - s0.ipc_closed != closed ||
      s1.ipc_hits - s0.ipc_hits != opened)
    local.Fail(std::to_string(rounds) + " rounds: " + delta("opened", s0.ipc_opened, s1.ipc_opened) + ", " +
               delta("closed", s0.ipc_closed, s1.ipc_closed) + ", " + delta("hits", s0.ipc_hits, s1.ipc_hits) +
               "; expected " + std::to_string(opened) + ", " + std::to_string(closed) + ", " + std::to_string(opened));
  if (peers > 0 && s1.ipc_opened - s1.ipc_closed != 1024)
    local.Fail("the cache holds " + std::to_string(s1.ipc_opened - s1.ipc_closed) + " peer allocations, not 1024");
  // The first round's allocations were the least recently used: closed, so
  // opened again; the last round's are still there.
  SumOnes(bufs[0], count, true, &local, "first buffer again");
  mla_get_stats(&s2);
  SumOnes(bufs[rounds - 1], count, true, &local, "last buffer again");
  mla_get_stats(&s3);
  if (s2.ipc_opened - s1.ipc_opened != peers || s2.ipc_closed - s1.ipc_closed != peers)
    local.Fail("the least recently used allocation: " + delta("opened", s1.ipc_opened, s2.ipc_opened) + ", " +
               delta("closed", s1.ipc_closed, s2.ipc_closed) + ", expected " + std::to_string(peers) + " each");
  if (s3.ipc_opened != s2.ipc_opened || s3.ipc_hits - s2.ipc_hits != 2 * peers)
    local.Fail("the most recently used allocation: " + delta("opened", s2.ipc_opened, s3.ipc_opened) + ", " +
               delta("hits", s2.ipc_hits, s3.ipc_hits) + ", expected 0 and " + std::to_string(2 * peers));
  for (void* b : bufs) cudaFree(b);
  ExpectAllRanksOk(local);
}

TEST(DeviceBuffers, PoolMemoryFromCudaMallocAsyncIsStagedWithOneWarning) {
  Local local;
  const int count = (1 << 18) + 3;  // above any flag path limit the tests set (gpu_flag_test.cc covers below)
  const size_t bytes = count * sizeof(float);
  DevicePair pool(bytes, &local, true);
  void *send = pool.send, *recv = pool.recv;
  const TypeCase& f = FindType(MPI_FLOAT);
  const mla_choice lane = Lane();
  Counts expected;
  mla_stats before, after;
  mla_get_stats(&before);
  StderrCapture capture;
  capture.Start();
  for (int i = 0; i < 3; ++i) {
    const std::vector<unsigned char> data = Fill(f, MPI_SUM, count, 40u + i);
    std::vector<unsigned char> expect(bytes), got(bytes);
    PMPI_Allreduce(data.data(), expect.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    Check(cudaMemcpy(send, data.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy", &local);
    if (mla_allreduce_with(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &lane) != MPI_SUCCESS)
      local.Fail("pool memory: mla_allreduce_with failed");
    Check(cudaMemcpy(got.data(), recv, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", &local);
    if (got != expect) local.Fail("pool memory: call " + std::to_string(i) + " differs from PMPI_Allreduce");
    // With peers, IPC is needed and cannot share pool memory: staged.
    // Alone on its node, a rank needs no IPC and lane runs.
    if (Peers() > 0)
      ExpectStagedCall(&expected);
    else
      ExpectDeviceCall(f, MPI_SUM, lane, count, &expected);
  }
  const std::string said = capture.Stop();
  mla_get_stats(&after);
  CheckCounts(before, after, expected, "pool memory", &local);
  const int warnings = Occurrences(said, kIpcWarning);
  if (g_rank == 0 && warnings != (Peers() > 0 ? 1 : 0))
    local.Fail("pool memory: " + std::to_string(warnings) + " warnings '" + kIpcWarning + "' over 3 calls, expected " +
               (Peers() > 0 ? "1" : "0"));
  ExpectAllRanksOk(local);
}

// Managed and pinned host memory are host memory to the library: the host
// algorithm runs on them, no device call is counted and nothing is said.
TEST(DeviceBuffers, ManagedAndPinnedMemoryTakeTheHostPath) {
  Local local;
  const int count = 4099;
  const size_t bytes = count * sizeof(double);
  const TypeCase& d = FindType(MPI_DOUBLE);
  const mla_choice lane = Lane();
  mla_stats before, after;
  mla_get_stats(&before);
  StderrCapture capture;
  capture.Start();
  for (int kind = 0; kind < 2; ++kind) {
    const char* name = kind == 0 ? "managed" : "pinned";
    void *send = nullptr, *recv = nullptr;
    if (kind == 0) {
      Check(cudaMallocManaged(&send, bytes), "cudaMallocManaged", &local);
      Check(cudaMallocManaged(&recv, bytes), "cudaMallocManaged", &local);
    } else {
      Check(cudaMallocHost(&send, bytes), "cudaMallocHost", &local);
      Check(cudaMallocHost(&recv, bytes), "cudaMallocHost", &local);
    }
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", &local);
    const std::vector<unsigned char> data = Fill(d, MPI_SUM, count, kind == 0 ? 50 : 51);
    std::vector<unsigned char> expect(bytes);
    PMPI_Allreduce(data.data(), expect.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const bool have = AllRanks(send != nullptr && recv != nullptr);  // every rank calls, or none
    if (have) {
      std::memcpy(send, data.data(), bytes);
      if (mla_allreduce_with(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &lane) != MPI_SUCCESS)
        local.Fail(std::string(name) + ": mla_allreduce_with failed");
      if (std::memcmp(recv, expect.data(), bytes) != 0)
        local.Fail(std::string(name) + ": result differs from PMPI_Allreduce");
    }
    if (kind == 0) {
      cudaFree(send);
      cudaFree(recv);
    } else {
      cudaFreeHost(send);
      cudaFreeHost(recv);
    }
  }
  const std::string said = capture.Stop();
  mla_get_stats(&after);
  Counts expected;
  expected.calls = 2;
  expected.algo[MLA_ALGO_LANE] = 2;  // the host algorithm
  CheckCounts(before, after, expected, "managed and pinned memory", &local);
  if (g_rank == 0 && Occurrences(said, "multilane: warning") != 0)
    local.Fail("managed and pinned memory: the library warned: " + said);
  ExpectAllRanksOk(local);
}

TEST(DeviceBuffers, MixedHostAndDeviceBuffersAreStaged) {
  Local local;
  const int count = 5000;
  std::vector<float> send(count), got(count), expect(count);
  for (int i = 0; i < count; ++i) send[i] = static_cast<float>((g_rank * 3 + i) % 11);
  PMPI_Allreduce(send.data(), expect.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  DevicePair bufs(count * sizeof(float), &local);
  const mla_choice lane = Lane();
  mla_stats before, after;
  mla_get_stats(&before);
  if (mla_allreduce_with(send.data(), bufs.recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &lane) != MPI_SUCCESS)
    local.Fail("host send, device receive: mla_allreduce_with failed");
  mla_get_stats(&after);
  Check(cudaMemcpy(got.data(), bufs.recv, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy", &local);
  if (got != expect) local.Fail("host send, device receive: wrong result");
  Counts expected;
  ExpectStagedCall(&expected);
  CheckCounts(before, after, expected, "mixed buffers", &local);
  ExpectAllRanksOk(local);
}

// A host callback that holds the stream for 50 ms: the copy queued after it
// lands long after the call starts, unless the library waits for the device.
void HoldHostFor50ms(void*) { usleep(50000); }

TEST(Streams, WorkQueuedOnAnotherStreamBeforeTheCallIsComplete) {
  Local local;
  const int count = (1 << 18) + 1;
  const size_t bytes = count * sizeof(float);
  cudaStream_t user;
  Check(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", &local);
  DevicePair bufs(bytes, &local);
  float* pinned = nullptr;
  Check(cudaMallocHost(reinterpret_cast<void**>(&pinned), bytes), "cudaMallocHost", &local);
  const TypeCase& f = FindType(MPI_FLOAT);
  Counts expected;
  mla_stats before, after;
  mla_get_stats(&before);
  struct Way {
    mla_algo algo;
    bool mixed;  // device send, host receive
  };
  const Way ways[] = {{MLA_ALGO_PASSTHROUGH, false},
                      {MLA_ALGO_LANE, false},
                      {MLA_ALGO_HIER, false},
                      {MLA_ALGO_SPLIT, false},
                      {MLA_ALGO_LANE, true}};
  uint64_t seed = 60;
  for (const Way& way : ways) {
    const std::string what = std::string(mla_algo_name(way.algo)) + (way.mixed ? " (host receive buffer)" : "");
    const std::vector<unsigned char> data = Fill(f, MPI_SUM, count, seed++);
    std::vector<unsigned char> expect(bytes), got(bytes);
    PMPI_Allreduce(data.data(), expect.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    // Stale contents first, then the new data queued behind a 50 ms hold.
    Check(cudaMemset(bufs.send, 0x7f, bytes), "cudaMemset", &local);
    Check(cudaMemset(bufs.recv, 0x7f, bytes), "cudaMemset", &local);
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", &local);
    std::memcpy(pinned, data.data(), bytes);
    Check(cudaLaunchHostFunc(user, HoldHostFor50ms, nullptr), "cudaLaunchHostFunc", &local);
    Check(cudaMemcpyAsync(bufs.send, pinned, bytes, cudaMemcpyHostToDevice, user), "cudaMemcpyAsync", &local);
    mla_choice choice{};
    choice.algo = way.algo;
    void* recv = way.mixed ? static_cast<void*>(got.data()) : bufs.recv;
    if (mla_allreduce_with(bufs.send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &choice) != MPI_SUCCESS)
      local.Fail(what + ": mla_allreduce_with failed");
    if (!way.mixed) {
      // Read on the application's stream right after the call returns.
      Check(cudaMemcpyAsync(pinned, bufs.recv, bytes, cudaMemcpyDeviceToHost, user), "cudaMemcpyAsync", &local);
      Check(cudaStreamSynchronize(user), "cudaStreamSynchronize", &local);
      std::memcpy(got.data(), pinned, bytes);
    }
    Check(cudaStreamSynchronize(user), "cudaStreamSynchronize", &local);
    if (got != expect)
      local.Fail(what + ": the result differs from PMPI_Allreduce (read before the stream's copy landed?)");
    if (way.mixed)
      ExpectStagedCall(&expected);
    else
      ExpectDeviceCall(f, MPI_SUM, choice, count, &expected);
  }
  mla_get_stats(&after);
  CheckCounts(before, after, expected, "streams", &local);
  cudaFreeHost(pinned);
  cudaStreamDestroy(user);
  ExpectAllRanksOk(local);
}

}  // namespace
}  // namespace gputest
