// allreduce_intercept_test.cc: part of allreduce_mpi_test.  Intercept: the
// intercepted MPI_Allreduce alone, on every predefined type, and with a fixed
// number of calls that the stats-line tests count.

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "allreduce_cases.h"
#include "allreduce_support.h"
#include "mlallreduce.h"

namespace mlatest {
namespace {

// Every predefined type through the intercepted MPI_Allreduce only (no
// forced algorithm): used by the bad/inconsistent-variable tests too.
TEST(Intercept, AllTypesIntercepted) {
  Local local;
  std::vector<Variant> only{Variant{Variant::kIntercepted, {}, "MPI_Allreduce (intercepted)"}};
  for (auto cases : {IntegerCases(), ByteBoolCases(), FloatCases(), ComplexCases(), PairCases()})
    for (const TypeCase& tc : cases)
      for (MPI_Op op : tc.ops)
        if (MpiAccepts(tc.type, op))
          for (int count : {1, 37}) RunCase(MPI_COMM_WORLD, tc, op, count, only, CaseOptions{true, true, 11}, local);
  EXPECT_ALL_RANKS_OK(local);
}

// Calls on MPI_COMM_SELF, which the algorithms never take (one rank): run
// alone with MULTILANE_STATS=1 and a forced algorithm, the stats line reads
// "unsupported=3 unsupported_one_rank=3" (tests/CMakeLists.txt).
TEST(Intercept, OneRankCalls) {
  Local local;
  mla_reset_stats();
  for (int k = 0; k < 3; ++k) {
    int send = g_rank + k, recv = -1;
    if (MPI_Allreduce(&send, &recv, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF) != MPI_SUCCESS || recv != send)
      local.Fail("MPI_Allreduce on MPI_COMM_SELF #" + std::to_string(k) + " wrong result");
  }
  EXPECT_ALL_RANKS_OK(local);
}

// ---------------------------------------------------------------------------
// The intercepted path with a fixed number of calls.  Run alone
// (--gtest_filter=Intercept.FixedCallCount) with MULTILANE_STATS=1 by the
// stats-line test, which then reads "calls=21 ... unsupported=1" at finalize.

constexpr int kInterceptCalls = 20;

TEST(Intercept, FixedCallCount) {
  Local local;
  mla_reset_stats();
  mla_stats zero;
  mla_get_stats(&zero);
  if (zero.calls != 0 || zero.unsupported != 0) local.Fail("mla_reset_stats did not zero");
  const int algo = InterceptedAlgo();
  for (int k = 0; k < kInterceptCalls; ++k) {
    const int count = 1 + 97 * k;
    std::vector<int> send(count), recv(count, -1), ref(count);
    for (int i = 0; i < count; ++i) send[i] = (g_rank + 1) * (i % 5) - k;
    PMPI_Allreduce(send.data(), ref.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (MPI_Allreduce(send.data(), recv.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS || recv != ref)
      local.Fail("intercepted MPI_Allreduce #" + std::to_string(k) + " wrong result");
  }
  // one unsupported call: a non-contiguous type
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Op vsum;
  MPI_Op_create(&UserVectorSum, 1, &vsum);
  int vs[3] = {g_rank, -5, 1}, vr[3] = {0, -6, 0};
  if (MPI_Allreduce(vs, vr, 1, vec, vsum, MPI_COMM_WORLD) != MPI_SUCCESS || vr[0] != g_size * (g_size - 1) / 2 ||
      vr[1] != -6 || vr[2] != g_size)
    local.Fail("intercepted MPI_Allreduce on MPI_Type_vector wrong result");
  MPI_Op_free(&vsum);
  MPI_Type_free(&vec);
  mla_stats s;
  mla_get_stats(&s);
  if (mla_enabled()) {
    if (s.calls != kInterceptCalls + 1)
      local.Fail("calls = " + std::to_string(s.calls) + ", want " + std::to_string(kInterceptCalls + 1));
    if (algo > MLA_ALGO_PASSTHROUGH && AlgoCanRun(algo, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) {
      if (s.calls_by_algo[algo] != kInterceptCalls || s.unsupported != 1)
        local.Fail(std::string(mla_algo_name(static_cast<mla_algo>(algo))) + " = " +
                   std::to_string(s.calls_by_algo[algo]) + " unsupported = " + std::to_string(s.unsupported) +
                   ", want " + std::to_string(kInterceptCalls) + " and 1");
    } else if (algo > MLA_ALGO_PASSTHROUGH) {
      // the algorithm cannot run on world (irregular layout, one rank)
      if (s.unsupported != kInterceptCalls + 1 || s.calls_by_algo[algo] != 0)
        local.Fail("unsupported = " + std::to_string(s.unsupported) + ", want " + std::to_string(kInterceptCalls + 1));
    } else if (algo == MLA_ALGO_PASSTHROUGH) {
      if (s.calls_by_algo[MLA_ALGO_PASSTHROUGH] != kInterceptCalls + 1 || s.unsupported != 0)
        local.Fail("passthrough = " + std::to_string(s.calls_by_algo[MLA_ALGO_PASSTHROUGH]) + " unsupported = " +
                   std::to_string(s.unsupported) + ", want " + std::to_string(kInterceptCalls + 1) + " and 0");
    }
  }
  EXPECT_ALL_RANKS_OK(local);
}

}  // namespace
}  // namespace mlatest
