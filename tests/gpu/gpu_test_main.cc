// gpu_test_main.cc: MPI and GPU set-up of the GPU tests, and an exit status
// that cannot hide a skip:
//   0   every test that ran passed;
//   1   a test failed on some rank, or some tests were skipped while others
//       ran (a skip must be visible as a skip: register such tests apart);
//   77  no CUDA device is visible, or every test that ran was skipped
//       (CTest's SKIP_RETURN_CODE: reported as skipped, never as passed).
// Also 1: a positive pattern of --gtest_filter that matches no registered
// test (a filter that runs less than it names), and MLA_TEST_EXPECT_MPS=1
// where MPS did not attach on every rank (the MPS tests).
// Ranks are placed on GPUs in blocks of MLA_TEST_RANKS_PER_GPU consecutive
// ranks of a host (default: the host's ranks spread evenly over its GPUs).
// MULTILANE_RANKS_PER_GPU is left to the library, which must not use it for
// device buffers.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../gtest_filter_check.h"
#include "gpu_test_support.h"
#include "vocab/ranks_per_gpu.h"

using gputest::g_device;
using gputest::g_rank;
using gputest::g_size;

int main(int argc, char** argv) {
  constexpr int kSkipped = 77;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  // Before the GPU check, so that a filter naming no test fails on hosts
  // without a GPU too.
  testing::InitGoogleTest(&argc, argv);
  const std::string unmatched = mlatest::FilterPatternsMatchingNothing();
  if (!unmatched.empty()) {
    if (g_rank == 0)
      std::printf("gpu_allreduce_test: FAILED: filter pattern(s) matching no test: %s\n", unmatched.c_str());
    MPI_Finalize();
    return 1;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  int min_devices = 0;
  PMPI_Allreduce(&devices, &min_devices, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (min_devices == 0) {
    if (g_rank == 0) std::printf("gpu_allreduce_test: SKIPPED: no CUDA device visible on some rank\n");
    MPI_Finalize();
    return kSkipped;
  }
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &host);
  int local_rank = 0, local_size = 1;
  MPI_Comm_rank(host, &local_rank);
  MPI_Comm_size(host, &local_size);
  MPI_Comm_free(&host);
  // The placement multilane's own parts use (vocab/ranks_per_gpu.h).
  int per_gpu = 0;
  if (const char* v = std::getenv("MLA_TEST_RANKS_PER_GPU")) per_gpu = std::max(1, std::atoi(v));
  g_device = mla::GpuOfRank(local_rank, local_size, per_gpu, min_devices);
  cudaSetDevice(g_device);
  gputest::ComputeLayout();
  if (g_rank == 0) std::printf("# layout: %s\n", gputest::Layout().Describe().c_str());

  const char* expect_mps = std::getenv("MLA_TEST_EXPECT_MPS");
  if (expect_mps != nullptr && std::atoi(expect_mps) != 0 && !gputest::Layout().mps) {
    if (g_rank == 0)
      std::printf("gpu_allreduce_test: FAILED: MLA_TEST_EXPECT_MPS=1 but MPS is not enabled on every rank's GPU\n");
    MPI_Finalize();
    return 1;
  }
  if (g_rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  const int ran = unit.test_to_run_count(), skipped = unit.skipped_test_count();
  int status = failed ? 1 : ran == 0 ? 1 : skipped == ran ? kSkipped : skipped > 0 ? 1 : 0;
  if (g_rank == 0 && ran == 0) std::printf("gpu_allreduce_test: FAILED: no test matched the filter\n");
  if (g_rank == 0 && !failed && skipped > 0 && skipped < ran)
    std::printf("gpu_allreduce_test: FAILED: %d of %d tests were skipped: register them apart\n", skipped, ran);
  if (g_rank == 0 && status == kSkipped)
    std::printf("gpu_allreduce_test: SKIPPED: every test was not applicable here\n");
  // Any failure wins; 77 only when every rank skipped everything.
  int mine[2] = {status == 1 ? 1 : 0, status == kSkipped ? 0 : 1}, all[2];
  PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const int worst = all[0] ? 1 : all[1] == 0 ? kSkipped : 0;
  MPI_Finalize();
  return worst;
}
