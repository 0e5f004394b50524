// mpi_families_test.cc: the family table, the family of a version text and
// the version key.
#include "vocab/mpi_families.h"

#include <gtest/gtest.h>

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

TEST(MpiFamily, VersionKey) {
  EXPECT_EQ(MpiVersionKey("MPICH Version:\t4.0.2  \nMPICH Release date"), "MPICH Version: 4.0.2");
  EXPECT_EQ(MpiVersionKey("one"), "one");
}

TEST(MpiFamily, VersionKeyOfOpenMpiDropsTrailingCommasAndWhatFollowsNul) {
  EXPECT_EQ(MpiVersionKey(std::string_view("Open MPI v4.1.4, package: Debian, \0junk", 38)),
            "Open MPI v4.1.4, package: Debian");
  EXPECT_EQ(MpiVersionKey("Open MPI v5.0.7\r\nmore"), "Open MPI v5.0.7");
}

TEST(MpiFamily, TableNamesAndFiles) {
  ASSERT_NE(FindMpiFamily("mpich"), nullptr);
  EXPECT_EQ(FindMpiFamily("mpich")->family, MpiFamily::kMpich);
  EXPECT_EQ(FindMpiFamily("intelmpi"), nullptr);
  EXPECT_EQ(MpiFamilyChoices(), "openmpi or mpich");
  EXPECT_EQ(FamilyLibraryFile("mpich"), "libmlallreduce-mpich.so.0");
  EXPECT_EQ(FamilyProbeFile("openmpi"), "mlprobe");
  EXPECT_EQ(FamilyProbeFile("mpich"), "mlprobe-mpich");
  EXPECT_EQ(FamilyCudaModuleFile("openmpi"), "libmlallreduce_cuda.so");
  EXPECT_EQ(FamilyCudaModuleFile("mpich"), "libmlallreduce_cuda-mpich.so");
  for (const MpiFamilyInfo& f : MpiFamilies()) EXPECT_EQ(&MpiFamilyRow(f.family), &f) << f.name;
}

}  // namespace
}  // namespace mla
