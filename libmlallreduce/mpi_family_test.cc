// mpi_family_test.cc: the MPI family of a library version text.
#include "mpi_family.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace mla {
namespace {

TEST(MpiFamily, OpenMpi) {
  EXPECT_EQ(MpiFamilyFromVersion("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4"),
            MpiFamily::kOpenMpi);
}

TEST(MpiFamily, MpichAndItsAbi) {
  EXPECT_EQ(MpiFamilyFromVersion("MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022"),
            MpiFamily::kMpich);
  EXPECT_EQ(MpiFamilyFromVersion("MVAPICH2 Version      :\t2.3.7"), MpiFamily::kMpich);
  EXPECT_EQ(MpiFamilyFromVersion("Intel(R) MPI Library 2021.10 for Linux* OS"), MpiFamily::kMpich);
  EXPECT_EQ(MpiFamilyFromVersion("MPI VERSION    : CRAY MPICH version 8.1.28.2"), MpiFamily::kMpich);
}

TEST(MpiFamily, Neither) {
  EXPECT_EQ(MpiFamilyFromVersion("Spectrum-Like MPI 1.0"), MpiFamily::kNeither);
  EXPECT_EQ(MpiFamilyFromVersion(""), MpiFamily::kNeither);
  EXPECT_STREQ(MpiFamilyName(MpiFamily::kNeither), "neither");
  EXPECT_STREQ(MpiFamilyName(MpiFamily::kOpenMpi), "openmpi");
  EXPECT_STREQ(MpiFamilyName(MpiFamily::kMpich), "mpich");
}

TEST(MpiFamily, FirstLine) {
  EXPECT_EQ(FirstLine("MPICH Version:\t4.0.2  \nMPICH Release date"), "MPICH Version: 4.0.2");
  EXPECT_EQ(FirstLine("one"), "one");
}

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
}  // namespace mla

namespace mla {
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
}  // namespace mla
