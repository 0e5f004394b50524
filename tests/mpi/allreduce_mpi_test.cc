// allreduce_mpi_test: end-to-end MPI tests of libmlallreduce.
//
// Runs under mpirun with any number of ranks (tests/CMakeLists.txt registers
// 1..8 ranks, virtual multi-node layouts and an irregular one).  Every test
// compares the library's algorithms (forced through mla_allreduce_with, and
// the intercepted MPI_Allreduce) with PMPI_Allreduce on the same data.
//
// The suites, in the order they run (the link order in
// MLA_ALLREDUCE_TEST_SOURCES, tests/CMakeLists.txt):
//   allreduce_layout_test.cc     Environment, Layout
//   allreduce_datatypes_test.cc  PredefinedTypes, Counts, RealData
//   allreduce_userops_test.cc    UserOps, DerivedTypes
//   allreduce_comms_test.cc      Communicators
//   allreduce_threads_test.cc    Concurrency
//   allreduce_intercept_test.cc  Intercept
// with the shared helpers in allreduce_support.h (ranks, agreement,
// environment, layout oracles; the rules every test follows) and
// allreduce_cases.h (element kinds, variants, RunCase).  This file holds
// main().

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>

#include "../gtest_filter_check.h"
#include "allreduce_support.h"

using mlatest::EnvInt;
using mlatest::g_provided;
using mlatest::g_rank;
using mlatest::g_size;

int main(int argc, char** argv) {
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &g_provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  ::testing::InitGoogleTest(&argc, argv);
  // A filter pattern naming no test fails the run (issue 27).
  const std::string unmatched = mlatest::FilterPatternsMatchingNothing();
  if (!unmatched.empty()) {
    if (g_rank == 0)
      std::printf("allreduce_mpi_test: FAILED: filter pattern(s) matching no test: %s\n", unmatched.c_str());
    MPI_Finalize();
    return 1;
  }
  if (g_rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  // MLA_TEST_NO_SKIP=1: a skipped test fails the run (a registration that
  // exists to run one thing, such as the TSan run of Concurrency.*).
  const int skipped = ::testing::UnitTest::GetInstance()->skipped_test_count();
  if (EnvInt("MLA_TEST_NO_SKIP", 0) != 0 && skipped > 0) {
    if (g_rank == 0) std::printf("allreduce_mpi_test: FAILED: %d test(s) skipped under MLA_TEST_NO_SKIP=1\n", skipped);
    rc = 1;
  }
  int all_rc = rc;
  PMPI_Allreduce(&rc, &all_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_rc;
}
