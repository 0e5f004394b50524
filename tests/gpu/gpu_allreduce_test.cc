// gpu_allreduce_test.cc: libmlallreduce on device buffers, under mpirun on a
// GPU host.  Every algorithm and transport is compared with PMPI_Allreduce on
// host copies of the same data.  Exits 77 (CTest: skipped) where no GPU is
// visible, so the suite runs everywhere and proves something only on GPUs.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mlallreduce.h"

namespace {

constexpr int kSkipped = 77;
int g_rank = 0, g_size = 1, g_device = 0;

// All ranks agree: true only when ok on every rank.
bool AllRanks(bool ok, MPI_Comm comm = MPI_COMM_WORLD) {
  int in = ok ? 1 : 0, out = 0;
  PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm);
  return out == 1;
}

uint64_t Hash(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  return h;
}

bool SameOnAllRanks(uint64_t h) {
  uint64_t in[2] = {h, ~h}, out[2];
  PMPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return out[0] == ~out[1];
}

struct Case {
  MPI_Datatype type;
  MPI_Op op;
  size_t size;
  const char* name;
};

// Integer-valued data, exact in every type and order of reduction.
void Fill(std::vector<unsigned char>* host, const Case& c, int count, int seed) {
  std::mt19937 rng(seed * 7919 + g_rank * 104729 + count);
  host->resize(static_cast<size_t>(count) * c.size);
  for (int i = 0; i < count; ++i) {
    const int v = static_cast<int>(rng() % 64) - 32;
    unsigned char* p = host->data() + static_cast<size_t>(i) * c.size;
    const bool prod = c.op == MPI_PROD;
    const int w = prod ? (v % 3 == 0 ? 2 : (v % 3 == 1 ? 1 : -1)) : v;
    if (c.type == MPI_FLOAT) *reinterpret_cast<float*>(p) = static_cast<float>(w);
    else if (c.type == MPI_DOUBLE) *reinterpret_cast<double*>(p) = static_cast<double>(w);
    else if (c.type == MPI_INT) *reinterpret_cast<int32_t*>(p) = w;
    else if (c.type == MPI_INT64_T) *reinterpret_cast<int64_t*>(p) = static_cast<int64_t>(w) * 1000003;
    else if (c.type == MPI_UNSIGNED_CHAR) *p = static_cast<unsigned char>(v & 0xff);
    else if (c.type == MPI_SHORT) *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(w);
    else if (c.type == MPI_DOUBLE_INT) {
      struct { double d; int i; } pair{static_cast<double>(v % 5), g_rank};
      std::memcpy(p, &pair, sizeof pair);
    } else std::memset(p, v, c.size);
  }
}

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) { EXPECT_EQ(cudaMalloc(&ptr, bytes ? bytes : 1), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(ptr); }
};

// Runs one call on device buffers and checks it against PMPI on host copies.
// Returns "" or what went wrong on this rank.
std::string RunCase(const Case& c, int count, const mla_choice* choice, bool in_place, int seed) {
  std::vector<unsigned char> send, expect, got(static_cast<size_t>(count) * c.size);
  Fill(&send, c, count, seed);
  expect.resize(send.size());
  PMPI_Allreduce(send.data(), expect.data(), count, c.type, c.op, MPI_COMM_WORLD);

  const size_t bytes = send.size();
  DeviceBuffer dsend(bytes), drecv(bytes);
  cudaMemcpy(in_place ? drecv.ptr : dsend.ptr, send.data(), bytes, cudaMemcpyHostToDevice);
  if (!in_place) cudaMemset(drecv.ptr, 0x5a, bytes);
  int rc = choice ? mla_allreduce_with(in_place ? MPI_IN_PLACE : dsend.ptr, drecv.ptr, count, c.type, c.op,
                                       MPI_COMM_WORLD, choice)
                  : MPI_Allreduce(in_place ? MPI_IN_PLACE : dsend.ptr, drecv.ptr, count, c.type, c.op,
                                  MPI_COMM_WORLD);
  cudaMemcpy(got.data(), drecv.ptr, bytes, cudaMemcpyDeviceToHost);
  std::string where = std::string(c.name) + " count " + std::to_string(count) + (in_place ? " in place" : "");
  if (rc != MPI_SUCCESS) return where + ": returned " + std::to_string(rc);
  if (c.type == MPI_DOUBLE_INT) {
    for (int i = 0; i < count; ++i) {
      struct { double d; int i; } a, b;
      std::memcpy(&a, got.data() + i * c.size, sizeof a);
      std::memcpy(&b, expect.data() + i * c.size, sizeof b);
      if (a.d != b.d || a.i != b.i) return where + ": element " + std::to_string(i) + " differs";
    }
  } else {
    for (int i = 0; i < count; ++i) {
      if (std::memcmp(got.data() + i * c.size, expect.data() + i * c.size, c.size) != 0)
        return where + ": element " + std::to_string(i) + " differs from PMPI_Allreduce";
    }
  }
  if (!in_place) {
    std::vector<unsigned char> after(bytes);
    cudaMemcpy(after.data(), dsend.ptr, bytes, cudaMemcpyDeviceToHost);
    if (after != send) return where + ": the send buffer was written";
  }
  if (!SameOnAllRanks(Hash(got.data(), got.size()))) return where + ": results differ between ranks";
  return "";
}

const Case kCases[] = {
    {MPI_FLOAT, MPI_SUM, 4, "float sum"},     {MPI_DOUBLE, MPI_MAX, 8, "double max"},
    {MPI_INT, MPI_PROD, 4, "int prod"},       {MPI_INT64_T, MPI_MIN, 8, "int64 min"},
    {MPI_UNSIGNED_CHAR, MPI_BXOR, 1, "uchar bxor"}, {MPI_SHORT, MPI_SUM, 2, "short sum (no NCCL type)"},
};
const int kCounts[] = {1, 7, 1003, (1 << 20) + 5};

void ExpectAgreed(const std::string& local) {
  const bool ok = AllRanks(local.empty());
  if (!local.empty()) ADD_FAILURE() << "rank " << g_rank << ": " << local;
  EXPECT_TRUE(ok) << "some rank failed (see its message)";
}

class DeviceAlgorithms : public testing::TestWithParam<std::tuple<mla_algo, mla_transport>> {};

TEST_P(DeviceAlgorithms, MatchTheSystemMpiOnEveryCase) {
  mla_choice choice{};
  choice.algo = std::get<0>(GetParam());
  choice.transport = std::get<1>(GetParam());
  mla_stats before, after;
  mla_get_stats(&before);
  int calls = 0;
  std::string failure;
  for (const Case& c : kCases)
    for (int count : kCounts)
      for (bool in_place : {false, true}) {
        if (failure.empty()) failure = RunCase(c, count, &choice, in_place, 1);
        ++calls;
      }
  ExpectAgreed(failure);
  mla_get_stats(&after);
  EXPECT_EQ(after.device_calls - before.device_calls, static_cast<uint64_t>(calls));
  if (choice.algo != MLA_ALGO_PASSTHROUGH) {
    EXPECT_GT(after.calls_by_algo[choice.algo], before.calls_by_algo[choice.algo])
        << mla_algo_name(choice.algo) << " never ran on device buffers";
  }
}

TEST_P(DeviceAlgorithms, SmallChunksPipelineCorrectly) {
  mla_choice choice{};
  choice.algo = std::get<0>(GetParam());
  choice.transport = std::get<1>(GetParam());
  choice.chunk_bytes = 4096 + 12;  // not a multiple of the element size of every type
  std::string failure;
  for (const Case& c : kCases)
    if (failure.empty()) failure = RunCase(c, 100003, &choice, false, 2);
  ExpectAgreed(failure);
}

INSTANTIATE_TEST_SUITE_P(
    All, DeviceAlgorithms,
    testing::Values(std::make_tuple(MLA_ALGO_PASSTHROUGH, MLA_TRANSPORT_AUTO),
                    std::make_tuple(MLA_ALGO_LANE, MLA_TRANSPORT_MPI), std::make_tuple(MLA_ALGO_LANE, MLA_TRANSPORT_NCCL),
                    std::make_tuple(MLA_ALGO_HIER, MLA_TRANSPORT_MPI), std::make_tuple(MLA_ALGO_HIER, MLA_TRANSPORT_NCCL),
                    std::make_tuple(MLA_ALGO_SPLIT, MLA_TRANSPORT_MPI),
                    std::make_tuple(MLA_ALGO_SPLIT, MLA_TRANSPORT_NCCL)),
    [](const testing::TestParamInfo<std::tuple<mla_algo, mla_transport>>& info) {
      return std::string(mla_algo_name(std::get<0>(info.param))) + "_" + mla_transport_name(std::get<1>(info.param));
    });

TEST(DeviceBuffers, InterposedMpiAllreduceStagesWhatTheSystemMpiCannotTake) {
  // No profile and no MULTILANE_ALGO in this test's environment, or a
  // profile: either way the call must be correct and counted as device.
  mla_stats before, after;
  mla_get_stats(&before);
  ExpectAgreed(RunCase(kCases[0], 4099, nullptr, false, 3));
  mla_get_stats(&after);
  EXPECT_EQ(after.device_calls - before.device_calls, 1u);
}

TEST(DeviceBuffers, TypesAndOpsWithoutKernelsAreStaged) {
  const Case pair{MPI_DOUBLE_INT, MPI_MINLOC, 16, "double_int minloc"};
  mla_choice choice{};
  choice.algo = MLA_ALGO_LANE;
  ExpectAgreed(RunCase(pair, 1001, &choice, false, 4));
}

TEST(DeviceBuffers, MixedHostAndDeviceBuffersAreStaged) {
  const int count = 5000;
  std::vector<float> send(count), got(count), expect(count);
  for (int i = 0; i < count; ++i) send[i] = static_cast<float>((g_rank * 3 + i) % 11);
  PMPI_Allreduce(send.data(), expect.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  DeviceBuffer recv(count * sizeof(float));
  mla_choice choice{};
  choice.algo = MLA_ALGO_LANE;
  int rc = mla_allreduce_with(send.data(), recv.ptr, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &choice);
  cudaMemcpy(got.data(), recv.ptr, count * sizeof(float), cudaMemcpyDeviceToHost);
  ExpectAgreed(rc == MPI_SUCCESS && got == expect ? "" : "host send, device receive: wrong result");
}

TEST(IpcCache, RepeatedCallsOnTheSameBuffersOpenNoNewHandles) {
  const int count = 1 << 16;
  DeviceBuffer send(count * sizeof(float)), recv(count * sizeof(float));
  std::vector<float> host(count, 1.0f);
  cudaMemcpy(send.ptr, host.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  mla_choice choice{};
  choice.algo = MLA_ALGO_LANE;
  mla_allreduce_with(send.ptr, recv.ptr, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &choice);
  mla_stats first, later;
  mla_get_stats(&first);
  for (int i = 0; i < 50; ++i) mla_allreduce_with(send.ptr, recv.ptr, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &choice);
  mla_get_stats(&later);
  cudaMemcpy(host.data(), recv.ptr, count * sizeof(float), cudaMemcpyDeviceToHost);
  bool ok = later.ipc_opened == first.ipc_opened && host[0] == static_cast<float>(g_size) &&
            host[count - 1] == static_cast<float>(g_size);
  // Peers are mapped only inside a (virtual) node of more than one rank.
  mla_layout layout{};
  mla_comm_layout(MPI_COMM_WORLD, &layout);
  const int node_size = layout.ranks_per_node;
  if (node_size > 1) ok = ok && later.ipc_hits > first.ipc_hits;
  ExpectAgreed(ok ? "" : "opened " + std::to_string(later.ipc_opened - first.ipc_opened) +
                             " new IPC handles over 50 calls on the same buffers (hits " +
                             std::to_string(later.ipc_hits - first.ipc_hits) + ")");
}

TEST(IpcCache, BuffersFreedAndReallocatedAtTheSameAddressGiveFreshResults) {
  const int count = 1 << 18;
  const size_t bytes = count * sizeof(int);
  mla_choice choice{};
  choice.algo = MLA_ALGO_LANE;
  int same_address = 0;
  std::string failure;
  void* previous = nullptr;
  for (int round = 0; round < 4 && failure.empty(); ++round) {
    void *send = nullptr, *recv = nullptr;
    cudaMalloc(&send, bytes);
    cudaMalloc(&recv, bytes);
    if (send == previous) ++same_address;
    previous = send;
    std::vector<int> host(count, round + 1 + g_rank), got(count);
    cudaMemcpy(send, host.data(), bytes, cudaMemcpyHostToDevice);
    mla_allreduce_with(send, recv, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &choice);
    cudaMemcpy(got.data(), recv, bytes, cudaMemcpyDeviceToHost);
    const int expect = g_size * (round + 1) + g_size * (g_size - 1) / 2;
    if (got[0] != expect || got[count - 1] != expect)
      failure = "round " + std::to_string(round) + ": got " + std::to_string(got[0]) + ", expected " +
                std::to_string(expect) + " (a stale IPC mapping?)";
    cudaFree(send);
    cudaFree(recv);
  }
  ExpectAgreed(failure);
  if (g_rank == 0) std::printf("# reallocations at the same address: %d of 3\n", same_address);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  int min_devices = 0;
  PMPI_Allreduce(&devices, &min_devices, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (min_devices == 0) {
    if (g_rank == 0) std::printf("gpu_allreduce_test: no CUDA device visible: skipped\n");
    MPI_Finalize();
    return kSkipped;
  }
  // Consecutive ranks of a host share a GPU.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
  int local_rank = 0, local_size = 1;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
  int per_gpu = (local_size + min_devices - 1) / min_devices;
  if (const char* v = std::getenv("MULTILANE_RANKS_PER_GPU")) per_gpu = std::max(1, std::atoi(v));
  g_device = (local_rank / per_gpu) % min_devices;
  cudaSetDevice(g_device);

  testing::InitGoogleTest(&argc, argv);
  if (g_rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any = 0;
  PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
