// gpu_intercept_test.cc: the intercepted MPI_Allreduce on device buffers,
// decided by the environment as in a user's job.  tests/gpu/CMakeLists.txt
// runs it (--gtest_filter=Intercepted.*) with:
//  - nothing set: every device call goes to the system MPI, staged;
//  - MULTILANE_ALGO (and MULTILANE_TRANSPORT): that choice for every call;
//  - MULTILANE_PROFILE_FILE=tests/gpu/ppg_profile.txt with
//    MULTILANE_RANKS_PER_GPU set to a number no line names: the device lines
//    must be matched against the ranks per GPU found from the GPU UUIDs.
// Every call is checked against PMPI_Allreduce and counted exactly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gpu_test_support.h"

namespace gputest {
namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// tests/gpu/ppg_profile.txt, as a table: ranks per GPU -> the choice below
// 4 KiB and the choice from 4 KiB on.  Any other ranks per GPU: passthrough.
mla_choice FromProfile(int ppg, uint64_t bytes) {
  struct Row {
    int ppg;
    mla_algo small;
    mla_transport small_transport;
    mla_algo large;
    mla_transport large_transport;
  };
  const Row rows[] = {
      {1, MLA_ALGO_HIER, MLA_TRANSPORT_AUTO, MLA_ALGO_LANE, MLA_TRANSPORT_MPI},
      {2, MLA_ALGO_LANE, MLA_TRANSPORT_MPI, MLA_ALGO_HIER, MLA_TRANSPORT_MPI},
      {4, MLA_ALGO_HIER, MLA_TRANSPORT_AUTO, MLA_ALGO_LANE, MLA_TRANSPORT_AUTO},
      {8, MLA_ALGO_LANE, MLA_TRANSPORT_AUTO, MLA_ALGO_HIER, MLA_TRANSPORT_AUTO},
  };
  mla_choice c{};
  for (const Row& r : rows) {
    if (r.ppg != ppg) continue;
    c.algo = bytes < 4096 ? r.small : r.large;
    c.transport = bytes < 4096 ? r.small_transport : r.large_transport;
  }
  return c;
}

TEST(Intercepted, DeviceCallsFollowTheEnvironment) {
  Local local;
  const char* algo_name = Env("MULTILANE_ALGO");
  const char* transport_name = Env("MULTILANE_TRANSPORT");
  const char* profile = Env("MULTILANE_PROFILE_FILE");
  if (mla_enabled() != 1) local.Fail("the library is off: a bad MULTILANE_* variable or profile");
  mla_choice forced{};
  if (algo_name != nullptr && !mla_algo_from_name(algo_name, &forced.algo))
    local.Fail(std::string("MULTILANE_ALGO='") + algo_name + "' is not an algorithm");
  if (transport_name != nullptr && !mla_transport_from_name(transport_name, &forced.transport))
    local.Fail(std::string("MULTILANE_TRANSPORT='") + transport_name + "' is not a transport");
  if (profile != nullptr) {
    const std::string p = profile;
    if (p.size() < 15 || p.compare(p.size() - 15, 15, "ppg_profile.txt") != 0)
      local.Fail("this test knows tests/gpu/ppg_profile.txt only, not " + p);
    const char* rpg = Env("MULTILANE_RANKS_PER_GPU");
    if (rpg == nullptr || std::atoi(rpg) == Layout().ppg)
      local.Fail("set MULTILANE_RANKS_PER_GPU to a number other than the real ranks per GPU (" +
                 std::to_string(Layout().ppg) + "), or the test cannot tell which one the look-up used");
  }
  if (g_rank == 0) {
    std::printf("# intercepted: %s; layout: %s\n",
                algo_name != nullptr ? ("MULTILANE_ALGO=" + Name(forced)).c_str()
                : profile != nullptr ? "profile with device ppg= lines"
                                     : "no algorithm, no profile",
                Layout().Describe().c_str());
  }

  struct Case {
    MPI_Datatype type;
    MPI_Op op;
    int count;
  };
  // Sizes on both sides of the profile's 4 KiB edge.
  const Case cases[] = {{MPI_FLOAT, MPI_SUM, 7},       {MPI_FLOAT, MPI_SUM, 1000},    {MPI_FLOAT, MPI_SUM, 1025},
                        {MPI_FLOAT, MPI_SUM, 262147},  {MPI_INT, MPI_MAX, 1023},      {MPI_INT, MPI_MAX, 1024},
                        {MPI_UINT8_T, MPI_BXOR, 4095}, {MPI_UINT8_T, MPI_BXOR, 4097}, {MPI_SHORT, MPI_SUM, 3001},
                        {MPI_2INT, MPI_MAXLOC, 601},   {MPI_DOUBLE, MPI_PROD, 511},   {MPI_DOUBLE, MPI_PROD, 513}};
  DevicePair bufs(262147 * sizeof(float), &local);
  Counts expected;
  mla_stats before, after;
  mla_get_stats(&before);
  uint64_t seed = 90;
  for (const Case& c : cases) {
    const TypeCase& tc = FindType(c.type);
    RunCall(Call{&tc, c.op, c.count, seed % 2 == 0, seed}, nullptr, &bufs, &local);
    ++seed;
    const uint64_t bytes = static_cast<uint64_t>(c.count) * tc.size;
    const mla_choice choice = algo_name != nullptr ? forced
                              : profile != nullptr ? FromProfile(Layout().ppg, bytes)
                                                   : mla_choice{};
    ExpectDeviceCall(tc, c.op, choice, c.count, &expected);
  }
  mla_get_stats(&after);
  CheckCounts(before, after, expected, "intercepted MPI_Allreduce", &local);
  ExpectAllRanksOk(local);
  std::string why;
  if (algo_name != nullptr && forced.transport == MLA_TRANSPORT_NCCL && !Layout().NcclCanRun(forced.algo, &why)) {
    GTEST_SKIP() << "NOT APPLICABLE: MULTILANE_TRANSPORT=nccl: NCCL cannot run here (" << why
                 << "); checked instead that its " << expected.nccl_fallbacks
                 << " calls with a step between nodes ran on MPI staging, each counted as an nccl_fallback";
  }
}

}  // namespace
}  // namespace gputest
