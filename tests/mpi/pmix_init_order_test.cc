// pmix_init_order_test.cc: the start-up ballot's PMIx connection must not
// hide the process's name from the MPI (pmix_channel.h).  Open MPI 5 asks
// PMIx_Initialized() before its own PMIx_Init and, told "yes", never learns
// its name: every MPI_Init then failed with "local rank ... Not found" once
// the library had published its ballot.  Run under Open MPI's mpirun (a real
// PMIx server); the test plays the MPI's part with PMIx's own entry points.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "libmlallreduce/startup/pmix_abi.h"
#include "libmlallreduce/startup/pmix_channel.h"

extern "C" int PMIx_Initialized(void);
extern "C" int PMIx_Init(mla::lib::pmix::Proc* proc, mla::lib::pmix::Info* info, size_t ninfo);

namespace {

TEST(PmixInitOrder, TheMpiGetsItsNameAfterTheBallot) {
  ASSERT_TRUE(mla::lib::PmixLaunched()) << "run this test under Open MPI's mpirun (a PMIx launcher)";
  std::string why;
  ASSERT_TRUE(mla::lib::PmixPublish("test ballot", &why)) << why;
  EXPECT_EQ(PMIx_Initialized(), 1) << "outside MPI initialisation PMIx_Initialized tells the truth";

  mla::lib::PmixMpiInitBegins();  // as MPI_Init through the library does
  EXPECT_EQ(PMIx_Initialized(), 0) << "the MPI must call PMIx_Init itself, or it has no name";
  mla::lib::pmix::Proc me{};
  ASSERT_EQ(PMIx_Init(&me, nullptr, 0), mla::lib::pmix::kSuccess);
  EXPECT_EQ(std::string(me.nspace), std::getenv("PMIX_NAMESPACE"));
  EXPECT_EQ(me.rank, static_cast<uint32_t>(std::atoi(std::getenv("PMIX_RANK"))));
  EXPECT_EQ(PMIx_Initialized(), 1) << "after the MPI's own PMIx_Init the truth again";
  mla::lib::PmixMpiInitEnds();

  // The ballot's connection goes; the MPI's stays until the MPI finalises.
  mla::lib::PmixRelease();
  EXPECT_EQ(PMIx_Initialized(), 1);
  void* lib = dlopen("libpmix.so.2", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto finalize = reinterpret_cast<mla::lib::pmix::FinalizeFn>(dlsym(lib, "PMIx_Finalize"));
  ASSERT_NE(finalize, nullptr);
  EXPECT_EQ(finalize(nullptr, 0), mla::lib::pmix::kSuccess);
  EXPECT_EQ(PMIx_Initialized(), 0);
}

}  // namespace
