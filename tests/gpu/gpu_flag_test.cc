// gpu_flag_test.cc: the flag path of small device messages (docs/gpu.md,
// "Small messages: the flag path"), where the ranks of one node meet on the
// GPU instead of the host.  It runs where each rank's kernels run alongside
// the others' (one rank per GPU, or MPS: tests/gpu/CMakeLists.txt runs these
// tests under a private MPS daemon too); elsewhere the same calls take the
// host-synchronised path, and the counters say which ran:
//  - sizes around MULTILANE_DEVICE_FLAG_MAX, one-shot and two-shot, aligned
//    and misaligned buffers, in place, bitwise equal to PMPI_Allreduce;
//  - thousands of back-to-back calls with ranks arriving late at random
//    (the double-buffered areas and the growing flags);
//  - new buffers on every call, freed after it, and several communicators
//    alive at once, freed at the end;
//  - pool memory (cudaMallocAsync), which CUDA IPC cannot share: copied, so
//    it runs on the flag path without a warning;
//  - the stream rule: work queued before the call is seen.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.h"

namespace gputest {
namespace {

mla_choice Choice(mla_algo algo, int lanes = 0) {
  mla_choice c{};
  c.algo = algo;
  c.lanes = lanes;
  return c;
}

const mla_choice kChoices[] = {Choice(MLA_ALGO_HIER), Choice(MLA_ALGO_LANE), Choice(MLA_ALGO_LANE, 1),
                               Choice(MLA_ALGO_SPLIT)};

uint64_t FlagLimit() {
  const char* v = std::getenv("MULTILANE_DEVICE_FLAG_MAX");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : (64u << 10);  // the library's default
}

// At least 2 MiB: CUDA IPC (the host-synchronised path, when the flag path
// is off or the call too large for it) cannot open two allocations that share
// a 2 MiB page, so smaller buffers would be staged instead.
size_t Roomy(size_t bytes) { return std::max(bytes, size_t{2} << 20); }

TEST(FlagPath, SizesAroundTheLimitMatchTheSystemMpi) {
  Local local;
  if (g_rank == 0) std::printf("# layout: %s\n", Layout().Describe().c_str());
  const int limit_floats = static_cast<int>(FlagLimit() / sizeof(float));
  const int counts[] = {1, 3, 4, 5, 1000, 1001, 4096, 65537, limit_floats - 1, limit_floats, limit_floats + 1};
  DevicePair bufs(Roomy((static_cast<size_t>(std::max(limit_floats, 65537)) + 8) * sizeof(double)), &local);
  Counts expected;
  mla_stats before, after;
  mla_get_stats(&before);
  uint64_t seed = 300;
  const TypeCase& f = FindType(MPI_FLOAT);
  const TypeCase& i8 = FindType(MPI_INT8_T);
  const TypeCase& d = FindType(MPI_DOUBLE);
  for (const mla_choice& choice : kChoices) {
    for (int count : counts) {
      if (count <= 0) continue;
      const bool in_place = seed % 2 == 0;
      RunCall(Call{&f, MPI_SUM, count, in_place, seed++}, &choice, &bufs, &local);
      ExpectDeviceCall(f, MPI_SUM, choice, count, &expected);
    }
    // Elements narrower and wider than float, odd counts (the scalar form).
    RunCall(Call{&i8, MPI_MAX, 4097, false, seed++}, &choice, &bufs, &local);
    ExpectDeviceCall(i8, MPI_MAX, choice, 4097, &expected);
    RunCall(Call{&d, MPI_PROD, 1023, true, seed++}, &choice, &bufs, &local);
    ExpectDeviceCall(d, MPI_PROD, choice, 1023, &expected);
  }
  mla_get_stats(&after);
  CheckCounts(before, after, expected, "sizes around the flag limit", &local);
  ExpectAllRanksOk(local);
}

TEST(FlagPath, MisalignedBuffersMatchTheSystemMpi) {
  Local local;
  const int count = 10001;
  DevicePair bufs(Roomy((count + 8) * sizeof(int)), &local);
  std::vector<int> host(count), expect(count), got(count);
  for (int i = 0; i < count; ++i) host[i] = (i * 7 + g_rank * 13) % 1000 - 500;
  PMPI_Allreduce(host.data(), expect.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  // One element (4 bytes) past 16-byte alignment on both sides.
  int* send = static_cast<int*>(bufs.send) + 1;
  int* recv = static_cast<int*>(bufs.recv) + 3;
  Counts expected;
  mla_stats before, after;
  mla_get_stats(&before);
  for (const mla_choice& choice : kChoices) {
    Check(cudaMemcpy(send, host.data(), count * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy", &local);
    Check(cudaMemset(recv, 0, count * sizeof(int)), "cudaMemset", &local);
    if (mla_allreduce_with(send, recv, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &choice) != MPI_SUCCESS)
      local.Fail(Name(choice) + ": misaligned call failed");
    Check(cudaMemcpy(got.data(), recv, count * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy", &local);
    if (got != expect) local.Fail(Name(choice) + ": misaligned buffers: result differs from PMPI_Allreduce");
    ExpectDeviceCall(FindType(MPI_INT), MPI_SUM, choice, count, &expected);
  }
  mla_get_stats(&after);
  CheckCounts(before, after, expected, "misaligned buffers", &local);
  ExpectAllRanksOk(local);
}

// Many calls with no host synchronisation between the ranks: each call's
// data differ, and some ranks arrive late at random, so a rank that runs
// ahead writes its next call's input while slower peers still read this
// call's (the other parity) or have not started.
TEST(FlagPath, BackToBackCallsWithLateRanks) {
  Local local;
  const int count = 1024 + 3;
  DevicePair bufs(Roomy(count * sizeof(int)), &local);
  std::mt19937 rng(1234 + g_rank);
  std::vector<int> host(count), got(count);
  Counts expected;
  mla_stats before, after;
  mla_get_stats(&before);
  const int calls = 3000;
  for (int k = 0; k < calls; ++k) {
    for (int i = 0; i < count; ++i) host[i] = (k + 1) * (g_rank + 1) + i % 5;
    Check(cudaMemcpy(bufs.recv, host.data(), count * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy", &local);
    if (rng() % 16 == 0) usleep(rng() % 200);
    const mla_choice& choice = kChoices[k % 4];
    if (mla_allreduce_with(MPI_IN_PLACE, bufs.recv, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &choice) != MPI_SUCCESS)
      local.Fail("call " + std::to_string(k) + " failed");
    ExpectDeviceCall(FindType(MPI_INT), MPI_SUM, choice, count, &expected);
    Check(cudaMemcpy(got.data(), bufs.recv, count * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy", &local);
    const int ranks_sum = g_size * (g_size + 1) / 2;
    for (int i = 0; i < count; ++i) {
      const int want = (k + 1) * ranks_sum + g_size * (i % 5);
      if (got[i] != want) {
        local.Fail("call " + std::to_string(k) + " (" + Name(choice) + "): element " + std::to_string(i) + " is " +
                   std::to_string(got[i]) + ", expected " + std::to_string(want));
        break;
      }
    }
  }
  mla_get_stats(&after);
  CheckCounts(before, after, expected, "back-to-back calls", &local);
  ExpectAllRanksOk(local);
}

// New buffers on every call (freed right after it, so cudaMalloc hands the
// same addresses out again), on three communicators alive at once: two
// duplicates of MPI_COMM_WORLD and its halves.  Each has its own flag memory
// and call numbers; freeing them at the end must not hang or fault.
TEST(FlagPath, NewBuffersEveryCallOnSeveralCommunicators) {
  Local local;
  MPI_Comm comms[3];
  PMPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  PMPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  PMPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &comms[2]);
  std::mt19937 rng(99);  // the same sizes on every rank
  mla_stats before, after;
  mla_get_stats(&before);
  uint64_t flag_calls = 0, all_calls = 0;
  for (int round = 0; round < 40; ++round) {
    for (int c = 0; c < 3; ++c) {
      int size = 0, rank = 0;
      PMPI_Comm_size(comms[c], &size);
      PMPI_Comm_rank(comms[c], &rank);
      const uint64_t most = std::max<uint64_t>(FlagLimit(), 1u << 20) / sizeof(float);
      const int count = 1 + static_cast<int>(rng() % most);
      const size_t bytes = count * sizeof(float);
      void *send = nullptr, *recv = nullptr;
      Check(cudaMalloc(&send, bytes), "cudaMalloc", &local);
      Check(cudaMalloc(&recv, bytes), "cudaMalloc", &local);
      std::vector<float> host(count), got(count);
      for (int i = 0; i < count; ++i) host[i] = static_cast<float>((i + round + c) % 7 + rank);
      Check(cudaMemcpy(send, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy", &local);
      const mla_choice& choice = kChoices[(round + c) % 4];
      if (mla_allreduce_with(send, recv, count, MPI_FLOAT, MPI_SUM, comms[c], &choice) != MPI_SUCCESS)
        local.Fail("round " + std::to_string(round) + " communicator " + std::to_string(c) + ": call failed");
      Check(cudaMemcpy(got.data(), recv, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", &local);
      for (int i = 0; i < count; ++i) {
        const float want = static_cast<float>(size * ((i + round + c) % 7) + size * (size - 1) / 2);
        if (got[i] != want) {
          local.Fail("round " + std::to_string(round) + " communicator " + std::to_string(c) + " (" + Name(choice) +
                     ", count " + std::to_string(count) + "): element " + std::to_string(i) + " is " +
                     std::to_string(got[i]) + ", expected " + std::to_string(want));
          break;
        }
      }
      Check(cudaFree(send), "cudaFree", &local);
      Check(cudaFree(recv), "cudaFree", &local);
      ++all_calls;
      // Halves of a 2-rank world hold one rank: no flag path (nothing to meet).
      if (Layout().FlagPath(bytes) && size >= 2) ++flag_calls;
    }
  }
  mla_get_stats(&after);
  const uint64_t ran = after.device_flag_calls - before.device_flag_calls;
  if (ran != flag_calls)
    local.Fail(std::to_string(ran) + " of " + std::to_string(all_calls) + " calls ran on the flag path, expected " +
               std::to_string(flag_calls));
  for (MPI_Comm& c : comms) PMPI_Comm_free(&c);
  ExpectAllRanksOk(local);
}

TEST(FlagPath, PoolMemoryIsCopiedNotShared) {
  Local local;
  const int count = 10007;
  const size_t bytes = count * sizeof(float);
  DevicePair pool(bytes, &local, true);
  void *send = pool.send, *recv = pool.recv;
  const TypeCase& f = FindType(MPI_FLOAT);
  const mla_choice hier = Choice(MLA_ALGO_HIER);
  const bool flag = Layout().FlagPath(bytes);
  Counts expected;
  mla_stats before, after;
  mla_get_stats(&before);
  StderrCapture capture;
  capture.Start();
  const std::vector<unsigned char> data = Fill(f, MPI_SUM, count, 77);
  std::vector<unsigned char> expect(bytes), got(bytes);
  PMPI_Allreduce(data.data(), expect.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  Check(cudaMemcpy(send, data.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy", &local);
  if (mla_allreduce_with(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &hier) != MPI_SUCCESS)
    local.Fail("pool memory: call failed");
  Check(cudaMemcpy(got.data(), recv, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", &local);
  if (got != expect) local.Fail("pool memory: result differs from PMPI_Allreduce");
  const std::string said = capture.Stop();
  if (flag) ExpectDeviceCall(f, MPI_SUM, hier, count, &expected);
  mla_get_stats(&after);
  if (flag) {
    CheckCounts(before, after, expected, "pool memory on the flag path", &local);
    if (!said.empty()) local.Fail("pool memory on the flag path: the library said '" + said + "'");
  }
  ExpectAllRanksOk(local);
}

// A host callback that holds a stream for 20 ms: the copy queued behind it
// lands long after the call starts unless the library waits for it.
void HoldHostFor20ms(void*) { usleep(20000); }

// MULTILANE_DEVICE_SYNC=device (the default) waits for every stream, a
// non-blocking one included; =stream for the legacy default stream and
// blocking streams (a stream made by cudaStreamCreate, the per-thread
// default stream), which is what the test then queues on.
TEST(FlagPath, WorkQueuedBeforeTheCallIsSeen) {
  Local local;
  const char* rule = std::getenv("MULTILANE_DEVICE_SYNC");
  const bool stream_rule = rule != nullptr && std::strcmp(rule, "stream") == 0;
  const int count = 50001;
  const size_t bytes = count * sizeof(float);
  DevicePair bufs(Roomy(bytes), &local);
  float* pinned = nullptr;
  Check(cudaMallocHost(reinterpret_cast<void**>(&pinned), bytes), "cudaMallocHost", &local);
  std::vector<cudaStream_t> streams;
  cudaStream_t made = nullptr;
  if (stream_rule) {
    Check(cudaStreamCreate(&made), "cudaStreamCreate", &local);
    streams = {made, cudaStreamLegacy, cudaStreamPerThread};
  } else {
    Check(cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", &local);
    streams = {made, cudaStreamLegacy};
  }
  const TypeCase& f = FindType(MPI_FLOAT);
  Counts expected;
  mla_stats before, after;
  mla_get_stats(&before);
  uint64_t seed = 500;
  for (size_t s = 0; s < streams.size(); ++s) {
    for (const mla_choice& choice : {Choice(MLA_ALGO_HIER), Choice(MLA_ALGO_LANE)}) {
      const std::string what = Name(choice) + " on stream " + std::to_string(s) + (stream_rule ? " (rule stream)" : "");
      const std::vector<unsigned char> data = Fill(f, MPI_SUM, count, seed++);
      std::vector<unsigned char> expect(bytes), got(bytes);
      PMPI_Allreduce(data.data(), expect.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      Check(cudaMemset(bufs.send, 0x7f, bytes), "cudaMemset", &local);
      Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", &local);
      std::memcpy(pinned, data.data(), bytes);
      Check(cudaLaunchHostFunc(streams[s], HoldHostFor20ms, nullptr), "cudaLaunchHostFunc", &local);
      Check(cudaMemcpyAsync(bufs.send, pinned, bytes, cudaMemcpyHostToDevice, streams[s]), "cudaMemcpyAsync", &local);
      if (mla_allreduce_with(bufs.send, bufs.recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &choice) != MPI_SUCCESS)
        local.Fail(what + ": call failed");
      // Read on the same stream right after the call returns.
      Check(cudaMemcpyAsync(pinned, bufs.recv, bytes, cudaMemcpyDeviceToHost, streams[s]), "cudaMemcpyAsync", &local);
      Check(cudaStreamSynchronize(streams[s]), "cudaStreamSynchronize", &local);
      std::memcpy(got.data(), pinned, bytes);
      if (got != expect) local.Fail(what + ": the result differs from PMPI_Allreduce (read before the copy landed?)");
      ExpectDeviceCall(f, MPI_SUM, choice, count, &expected);
    }
  }
  mla_get_stats(&after);
  CheckCounts(before, after, expected, "stream rule", &local);
  cudaFreeHost(pinned);
  cudaStreamDestroy(made);
  ExpectAllRanksOk(local);
}

}  // namespace
}  // namespace gputest
