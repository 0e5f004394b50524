// gpu_allreduce_test.cc: every algorithm, and every transport where a step
// between nodes or GPUs exists, on device buffers over the whole predefined
// type x op matrix, compared bitwise with PMPI_Allreduce on host copies, with
// the exact number of calls each algorithm and each transport ran.
//
// DeviceAlgorithms runs in every layout with transport auto (what a profile
// without transport= gets).  DeviceTransports (lane, hier, split x mpi, nccl)
// is registered by tests/gpu/CMakeLists.txt only for layouts of more than one
// (virtual) node: elsewhere lane and hier have no step between nodes and the
// transport would not be exercised.  A *_nccl case where NCCL cannot run
// (two ranks of a lane on one GPU, NCCL missing) checks that every call was
// counted as a fallback to MPI staging and then reports itself skipped, never
// passed; where NCCL can run, a call that NCCL did not carry fails it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <tuple>

#include "gpu_test_support.h"

namespace gputest {
namespace {

// Counts of the matrix: small and odd, 1 being fewer elements than ranks.
const int kMatrixCounts[] = {1, 1001, 65537};

// Up to 64 MiB, odd counts.
struct Large {
  MPI_Datatype type;
  MPI_Op op;
  int count;
  bool in_place;
};
const Large kLarge[] = {
    {MPI_FLOAT, MPI_SUM, (16 << 20) - 3, false},   // 64 MiB - 12 B
    {MPI_UINT8_T, MPI_BXOR, (4 << 20) + 1, true},  // 4 MiB + 1 B
    {MPI_DOUBLE, MPI_MAX, (1 << 20) + 3, false},   // 8 MiB + 24 B
};
constexpr size_t kLargestBytes = 64u << 20;

// Runs the matrix and the large cases with `choice`, adding to *expected
// what each call must count.
void RunMatrix(const mla_choice& choice, Local* local, Counts* expected) {
  DevicePair bufs(kLargestBytes, local);
  uint64_t seed = 1;
  for (const TypeCase& tc : AllTypes()) {
    for (MPI_Op op : tc.ops) {
      if (!MpiAccepts(tc.type, op)) {
        if (g_rank == 0) std::printf("# the system MPI rejects %s %s: not run\n", tc.name, OpName(op).c_str());
        continue;
      }
      for (int count : kMatrixCounts) {
        const bool in_place = (seed % 3) == 0;
        RunCall(Call{&tc, op, count, in_place, seed++}, &choice, &bufs, local);
        ExpectDeviceCall(tc, op, choice, count, expected);
      }
    }
  }
  for (const Large& l : kLarge) {
    const TypeCase& tc = FindType(l.type);
    RunCall(Call{&tc, l.op, l.count, l.in_place, seed++}, &choice, &bufs, local);
    ExpectDeviceCall(tc, l.op, choice, l.count, expected);
  }
}

// RunMatrix with `choice`, every rank's results and the counters checked;
// returns what the calls had to count.
Counts CheckMatrix(const mla_choice& choice) {
  Local local;
  Counts expected;
  mla_stats before, after;
  mla_get_stats(&before);
  RunMatrix(choice, &local, &expected);
  mla_get_stats(&after);
  CheckCounts(before, after, expected, Name(choice), &local);
  ExpectAllRanksOk(local);
  return expected;
}

class DeviceAlgorithms : public testing::TestWithParam<mla_algo> {};

TEST_P(DeviceAlgorithms, MatchTheSystemMpiOnEveryTypeAndOp) {
  mla_choice choice{};
  choice.algo = GetParam();
  choice.transport = MLA_TRANSPORT_AUTO;
  CheckMatrix(choice);
}

INSTANTIATE_TEST_SUITE_P(All, DeviceAlgorithms,
                         testing::Values(MLA_ALGO_PASSTHROUGH, MLA_ALGO_LANE, MLA_ALGO_HIER, MLA_ALGO_SPLIT),
                         [](const testing::TestParamInfo<mla_algo>& info) { return mla_algo_name(info.param); });

class DeviceTransports : public testing::TestWithParam<std::tuple<mla_algo, mla_transport>> {
 protected:
  mla_choice Choice() const {
    mla_choice c{};
    c.algo = std::get<0>(GetParam());
    c.transport = std::get<1>(GetParam());
    return c;
  }
  // Skips (on every rank alike: the layout is the same everywhere) a case
  // whose transport has no step to carry here.
  bool Applicable() {
    if (Layout().CrossStep(Choice().algo)) return true;
    if (g_rank == 0) {
      std::printf("NOT APPLICABLE: %s: no step between nodes or GPUs in this layout (%s)\n", Name(Choice()).c_str(),
                  Layout().Describe().c_str());
    }
    return false;
  }
  // After the checks: a nccl case where NCCL cannot run reports itself skipped.
  void SkipWhereNcclCannotRun(const Counts& expected) {
    std::string why;
    if (Choice().transport != MLA_TRANSPORT_NCCL || Layout().NcclCanRun(Choice().algo, &why)) return;
    GTEST_SKIP() << "NOT APPLICABLE: " << Name(Choice()) << ": NCCL cannot run here (" << why
                 << "); checked instead that its " << expected.nccl_fallbacks
                 << " calls with a step between nodes or GPUs ran on MPI staging, each counted as an nccl_fallback";
  }
};

TEST_P(DeviceTransports, MatchTheSystemMpiOnEveryTypeAndOp) {
  if (!Applicable()) GTEST_SKIP() << "no step between nodes or GPUs in this layout";
  SkipWhereNcclCannotRun(CheckMatrix(Choice()));
}

TEST_P(DeviceTransports, SmallChunksPipelineCorrectly) {
  if (!Applicable()) GTEST_SKIP() << "no step between nodes or GPUs in this layout";
  mla_choice choice = Choice();
  choice.chunk_bytes = 4096 + 12;  // not a multiple of every element size
  Local local;
  Counts expected;
  const int count = 100003;
  DevicePair bufs(static_cast<size_t>(count) * 8, &local);
  mla_stats before, after;
  mla_get_stats(&before);
  uint64_t seed = 7;
  const std::pair<MPI_Datatype, MPI_Op> cases[] = {{MPI_FLOAT, MPI_SUM},    {MPI_DOUBLE, MPI_MAX},
                                                   {MPI_INT, MPI_PROD},     {MPI_INT8_T, MPI_MIN},
                                                   {MPI_UINT16_T, MPI_BOR}, {MPI_UNSIGNED_LONG, MPI_BXOR}};
  for (const auto& [type, op] : cases) {
    const TypeCase& tc = FindType(type);
    RunCall(Call{&tc, op, count, false, seed++}, &choice, &bufs, &local);
    ExpectDeviceCall(tc, op, choice, count, &expected);
  }
  mla_get_stats(&after);
  CheckCounts(before, after, expected, Name(choice), &local);
  ExpectAllRanksOk(local);
  SkipWhereNcclCannotRun(expected);
}

INSTANTIATE_TEST_SUITE_P(All, DeviceTransports,
                         testing::Combine(testing::Values(MLA_ALGO_LANE, MLA_ALGO_HIER, MLA_ALGO_SPLIT),
                                          testing::Values(MLA_TRANSPORT_MPI, MLA_TRANSPORT_NCCL)),
                         [](const testing::TestParamInfo<std::tuple<mla_algo, mla_transport>>& info) {
                           return std::string(mla_algo_name(std::get<0>(info.param))) + "_" +
                                  mla_transport_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace gputest
