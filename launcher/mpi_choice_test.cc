// mpi_choice_test.cc: the MPI family of a job's command, on real files.
#include "mpi_choice.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace multilane {
namespace {

namespace fs = std::filesystem;

TEST(MpiChoice, ExplicitFamilyWins) {
  std::string error;
  EXPECT_EQ(JobMpiFamily("mpich", {"mpirun", "-np", "2", "./a"}, &error), "mpich");
  EXPECT_EQ(JobMpiFamily("openmpi", {"mpiexec.mpich", "-n", "2", "./a"}, &error), "openmpi");
  EXPECT_EQ(JobMpiFamily("lam", {"mpirun"}, &error), "");
  EXPECT_NE(error.find("must be auto, openmpi or mpich"), std::string::npos) << error;
}

TEST(MpiChoice, HydraByNameOrThroughLinks) {
  std::string error;
  EXPECT_EQ(JobMpiFamily("auto", {"mpiexec.mpich", "-n", "2", "./a"}, &error), "mpich");
  EXPECT_EQ(JobMpiFamily("", {"/usr/bin/mpiexec.hydra", "./a"}, &error), "mpich");
  // A program named mpiexec that is a link to hydra, found on PATH.
  const fs::path dir = fs::temp_directory_path() / ("mpi_choice_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path hydra = dir / "mpiexec.hydra";
  { std::ofstream(hydra) << "#!/bin/sh\n"; }
  fs::permissions(hydra, fs::perms::owner_all);
  fs::create_symlink(hydra, dir / "mpiexec");
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", dir.c_str(), 1);
  EXPECT_EQ(JobMpiFamily("auto", {"mpiexec", "-n", "2", "./a"}, &error), "mpich");
  setenv("PATH", saved.c_str(), 1);
  fs::remove_all(dir);
}

TEST(MpiChoice, OpenMpiOtherwise) {
  std::string error;
  EXPECT_EQ(JobMpiFamily("auto", {"srun", "./a"}, &error), "openmpi");
  EXPECT_EQ(JobMpiFamily("auto", {"/nonexistent/program"}, &error), "openmpi");
  EXPECT_EQ(JobMpiFamily("auto", {}, &error), "openmpi");
}

TEST(MpiChoice, ProbeAndLauncherOfFamily) {
  EXPECT_EQ(ProbeOfFamily("/usr/libexec/multilane/mlprobe", "openmpi"), "/usr/libexec/multilane/mlprobe");
  EXPECT_EQ(ProbeOfFamily("/usr/libexec/multilane/mlprobe", "mpich"), "/usr/libexec/multilane/mlprobe-mpich");
  EXPECT_EQ(LauncherOfFamily("mpich"), "mpiexec.mpich");
  EXPECT_EQ(LauncherOfFamily("openmpi"), "mpirun");
}

TEST(MpiChoice, VersionOfAMissingProbeIsAnError) {
  std::string error;
  EXPECT_EQ(MpiVersionOfFamily("mpich", "/nonexistent/mlprobe-mpich", &error), "");
  EXPECT_NE(error.find("--mpi-version"), std::string::npos) << error;
}

}  // namespace
}  // namespace multilane
