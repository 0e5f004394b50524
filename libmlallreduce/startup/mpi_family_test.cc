// mpi_family_test.cc: the MPI family of a library version text.
#include "libmlallreduce/startup/mpi_family.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace mla::lib {
namespace {

TEST(MpiFamily, RankZeroFromTheLauncherVariables) {
  unsetenv("PMI_RANK");
  unsetenv("PMIX_RANK");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("SLURM_PROCID");
  EXPECT_TRUE(LaunchedAsRankZero());
  setenv("PMI_RANK", "3", 1);
  EXPECT_FALSE(LaunchedAsRankZero());
  setenv("PMI_RANK", "0", 1);
  EXPECT_TRUE(LaunchedAsRankZero());
  unsetenv("PMI_RANK");
}

}  // namespace
}  // namespace mla::lib

namespace mla::lib {
namespace {

// An MPI opened privately (RTLD_LOCAL, as a Python extension opens it) is
// found among the loaded objects, classified without MPI_Init and made global.
TEST(MpiFamily, FindsAnMpiOpenedPrivately) {
  void* mpi = dlopen("libmpi.so.40", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(mpi, nullptr) << "Open MPI's libmpi.so.40: " << dlerror();
  std::string path;
  std::string version = LoadedMpiVersion(&path);
  EXPECT_EQ(MpiFamilyFromVersion(version), MpiFamily::kOpenMpi) << version;
  EXPECT_NE(path.find("libmpi.so.40"), std::string::npos) << path;
  EXPECT_NE(dlsym(RTLD_DEFAULT, "PMPI_Get_library_version"), nullptr);
}

}  // namespace
}  // namespace mla::lib
