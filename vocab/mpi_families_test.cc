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
  EXPECT_EQ(SrunMpiAdvice(), "srun --mpi=pmix for Open MPI, --mpi=pmi2 for MPICH");
  EXPECT_EQ(FamilyLibraryFile("mpich"), "libmlallreduce-mpich.so.0");
  EXPECT_EQ(FamilyProbeFile("openmpi"), "mlprobe");
  EXPECT_EQ(FamilyProbeFile("mpich"), "mlprobe-mpich");
  EXPECT_EQ(FamilyCudaModuleFile("openmpi"), "libmlallreduce_cuda.so");
  EXPECT_EQ(FamilyCudaModuleFile("mpich"), "libmlallreduce_cuda-mpich.so");
  for (const MpiFamilyInfo& f : MpiFamilies()) EXPECT_EQ(&MpiFamilyRow(f.family), &f) << f.name;
}

// The file names come from the build's list of families: it and the table
// name the same families, the default one first, and nothing else has files.
TEST(MpiFamily, BuildNamesTheFilesOfEveryFamilyInTheTable) {
  EXPECT_EQ(MpiFamilies().front().name, BuildDefaultFamily());
  for (const MpiFamilyInfo& f : MpiFamilies()) {
    EXPECT_NE(FamilyLibraryFile(f.name), "") << f.name;
    EXPECT_NE(FamilyCudaModuleFile(f.name), "") << f.name;
    EXPECT_NE(FamilyProbeFile(f.name), "") << f.name;
  }
  EXPECT_EQ(FamilyLibraryFile("intelmpi"), "");
  EXPECT_EQ(FamilyProbeFile(""), "");
}

}  // namespace
// Open MPI 4 (ORTE) and 5 (PRRTE) take the same oversubscription flag; each
// generation names the variable its runtime reads (5 ignores 4's).
TEST(MpiFamily, LauncherGenerations) {
  EXPECT_EQ(LauncherMajorVersion("mpirun (Open MPI) 5.0.7\n\nReport bugs to ..."), 5);
  EXPECT_EQ(LauncherMajorVersion("mpirun (Open MPI) 4.1.4"), 4);
  EXPECT_EQ(LauncherMajorVersion("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4"), 4);
  EXPECT_EQ(LauncherMajorVersion("HYDRA build details:\n    Version:                                 4.2.1"), 4);
  EXPECT_EQ(LauncherMajorVersion("mpi 2 x 3 no version"), 0);
  EXPECT_EQ(LauncherMajorVersion(""), 0);
  const MpiFamilyInfo& openmpi = MpiFamilyRow(MpiFamily::kOpenMpi);
  EXPECT_EQ(openmpi.oversubscribe_flags, (std::vector<std::string>{"--map-by", ":OVERSUBSCRIBE"}));
  ASSERT_NE(FindLauncherGeneration(openmpi, 5), nullptr);
  EXPECT_EQ(FindLauncherGeneration(openmpi, 5)->runtime, "PRRTE");
  EXPECT_EQ(FindLauncherGeneration(openmpi, 5)->oversubscribe_variable,
            "PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe");
  EXPECT_EQ(FindLauncherGeneration(openmpi, 4)->oversubscribe_variable, "OMPI_MCA_rmaps_base_oversubscribe=1");
  EXPECT_EQ(FindLauncherGeneration(openmpi, 4)->session_base_variable, "OMPI_MCA_orte_tmpdir_base");
  EXPECT_EQ(FindLauncherGeneration(openmpi, 5)->session_base_variable, "PRTE_MCA_prte_tmpdir_base");
  EXPECT_EQ(FindLauncherGeneration(openmpi, 3), nullptr);
  EXPECT_EQ(LauncherGenerationChoices(openmpi), "4, 5");
  EXPECT_TRUE(MpiFamilyRow(MpiFamily::kMpich).oversubscribe_flags.empty());
}

}  // namespace mla
