// mpi_choice_test.cc: the MPI family and launcher kind of a job's command, on
// real files, and the flags that hand the ranks their variables.
#include "launcher/mpi_choice.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace multilane {
namespace {

namespace fs = std::filesystem;

// A folder on PATH holding fake launchers; PATH is restored when it ends.
class FakeLaunchers : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mpi_choice_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const char* old = std::getenv("PATH");
    saved_ = old ? old : "";
    setenv("PATH", (dir_.string() + ":" + saved_).c_str(), 1);
  }
  void TearDown() override {
    setenv("PATH", saved_.c_str(), 1);
    fs::remove_all(dir_);
  }
  // A script `name` that prints `version` for --version and leaves a mark
  // when it runs.
  fs::path Script(const std::string& name, const std::string& version) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\ntouch " << (dir_ / (name + ".ran")).string() << "\nprintf '" << version << "'\n";
    fs::permissions(p, fs::perms::owner_all);
    return p;
  }
  bool Ran(const std::string& name) const { return fs::exists(dir_ / (name + ".ran")); }

  fs::path dir_;
  std::string saved_;
};

TEST(MpiChoice, ExplicitFamilyWins) {
  std::string error;
  EXPECT_EQ(JobMpiFamily("mpich", LauncherKind::kOpenMpi, "", &error), "mpich");
  EXPECT_EQ(JobMpiFamily("openmpi", LauncherKind::kHydra, "mpich", &error), "openmpi");
  EXPECT_EQ(JobMpiFamily("lam", LauncherKind::kOpenMpi, "", &error), "");
  EXPECT_NE(error.find("must be auto, openmpi or mpich"), std::string::npos) << error;
  EXPECT_EQ(JobMpiFamily("auto", LauncherKind::kHydra, "", &error), "mpich");
  EXPECT_EQ(JobMpiFamily("", LauncherKind::kSrun, "", &error), "openmpi");
  EXPECT_EQ(JobMpiFamily("auto", LauncherKind::kOther, "", &error), "openmpi");
  // The program's own MPI library, where the launcher does not say it.
  EXPECT_EQ(JobMpiFamily("auto", LauncherKind::kSrun, "mpich", &error), "mpich");
}

// Debian's own programs linked with each family's MPI (mpich's mpichversion,
// Open MPI's ompi_info), found on PATH, by relative path and inside srun.
TEST(MpiChoice, FamilyOfTheProgramFromItsMpiLibrary) {
  EXPECT_EQ(FamilyOfProgram("mpichversion", "/nonexistent:/usr/bin", ""), "mpich");
  EXPECT_EQ(FamilyOfProgram("ompi_info", "/usr/bin", ""), "openmpi");
  EXPECT_EQ(FamilyOfProgram("bin/mpichversion", "", "/usr"), "mpich");
  EXPECT_EQ(FamilyOfProgram("hydra_pmi_proxy", "/usr/bin", ""), "mpich");  // hydra's proxy, by name
  EXPECT_EQ(FamilyOfProgram("true", "/usr/bin:/bin", ""), "");             // no MPI
  EXPECT_EQ(FamilyOfProgram("/etc/passwd", "", ""), "");                   // not a program
  EXPECT_EQ(FamilyOfProgram("no-such-program", "/usr/bin", ""), "");
  EXPECT_EQ(FamilyOfCommand({"srun", "-n", "4", "--mpi=pmi2", "/usr/bin/mpichversion"}, LauncherKind::kSrun), "mpich");
  EXPECT_EQ(FamilyOfCommand({"/usr/bin/ompi_info"}, LauncherKind::kOther), "openmpi");
  EXPECT_EQ(FamilyOfCommand({"mpirun", "/usr/bin/mpichversion"}, LauncherKind::kOpenMpi), "");
}

// N5: an `mpirun` that is hydra (Intel MPI's, or MPICH's installed as the
// default MPI) is told by what it says it is, not by its name.
TEST_F(FakeLaunchers, AnMpirunThatIsHydraIsHydra) {
  Script("mpirun", "HYDRA build details:\\n    Version: 4.0.2\\n");
  std::string note;
  EXPECT_EQ(KindOfLauncher({"mpirun", "-n", "2", "./a"}, &note), LauncherKind::kHydra);
  EXPECT_TRUE(note.empty()) << note;
}

TEST_F(FakeLaunchers, AnMpirunThatIsOpenMpiIsOpenMpi) {
  Script("mpirun", "mpirun (Open MPI) 4.1.4\\n");
  EXPECT_EQ(KindOfLauncher({"mpirun", "-np", "2", "./a"}, nullptr), LauncherKind::kOpenMpi);
  Script("mpiexec.hydra", "mpiexec (OpenRTE) 4.1.4\\n");  // what it says beats its name
  EXPECT_EQ(KindOfLauncher({"mpiexec.hydra", "./a"}, nullptr), LauncherKind::kOpenMpi);
}

TEST_F(FakeLaunchers, SilentLaunchersFallBackOnTheNamesTheirLinksLeadTo) {
  const fs::path hydra = Script("mpiexec.hydra", "");
  fs::create_symlink(hydra, dir_ / "mpiexec");
  EXPECT_EQ(KindOfLauncher({"mpiexec", "-n", "2", "./a"}, nullptr), LauncherKind::kHydra);
  EXPECT_EQ(KindOfLauncher({(dir_ / "mpiexec.hydra").string(), "./a"}, nullptr), LauncherKind::kHydra);
}

TEST_F(FakeLaunchers, AnUnknownMpirunIsLeftAloneWithANote) {
  Script("mpirun", "some other MPI 1.0\\n");
  std::string note;
  EXPECT_EQ(KindOfLauncher({"mpirun", "./a"}, &note), LauncherKind::kOther);
  EXPECT_NE(note.find("cannot tell which MPI 'mpirun' is"), std::string::npos) << note;
  EXPECT_NE(note.find("pass LD_PRELOAD and MULTILANE_PROFILE"), std::string::npos) << note;
}

TEST_F(FakeLaunchers, WrappersAndProgramsAreNeverRunToAsk) {
  Script("wrapper.sh", "HYDRA");
  std::string note;
  EXPECT_EQ(KindOfLauncher({"wrapper.sh", "4"}, &note), LauncherKind::kOther);
  EXPECT_FALSE(Ran("wrapper.sh"));
  EXPECT_TRUE(note.empty()) << note;
  EXPECT_EQ(KindOfLauncher({"/opt/slurm/bin/srun", "./a"}, nullptr), LauncherKind::kSrun);
  EXPECT_EQ(KindOfLauncher({"mpirunner-not-here"}, nullptr), LauncherKind::kOther);
  EXPECT_EQ(KindOfLauncher({}, nullptr), LauncherKind::kOther);
}

// A family's own launcher names (the family table's launcher_programs) make
// a command a launcher and name its family, even where it is not installed.
TEST_F(FakeLaunchers, AFamilysOwnLauncherNameTellsItsFamily) {
  EXPECT_EQ(KindOfLauncher({"prterun-not-here", "-n", "2", "./a"}, nullptr), LauncherKind::kOpenMpi);
  EXPECT_EQ(KindOfLauncher({"orterun-not-here", "./a"}, nullptr), LauncherKind::kOpenMpi);
}

TEST(ForwardVariables, OpenMpiGetsDashXAfterTheLauncher) {
  std::vector<std::string> cmd{"mpirun", "-np", "4", "./app", "--x"};
  EXPECT_EQ(
      ForwardVariables(LauncherKind::kOpenMpi, cmd, {"LD_PRELOAD", "MULTILANE_PROFILE"}),
      (std::vector<std::string>{"mpirun", "-x", "LD_PRELOAD", "-x", "MULTILANE_PROFILE", "-np", "4", "./app", "--x"}));
}

TEST(ForwardVariables, HydraGetsGenvWithTheValues) {
  setenv("MLA_TEST_A", "a b\nc", 1);
  unsetenv("MLA_TEST_UNSET");
  std::vector<std::string> cmd{"mpiexec.mpich", "-n", "2", "./app"};
  EXPECT_EQ(ForwardVariables(LauncherKind::kHydra, cmd, {"MLA_TEST_A", "MLA_TEST_UNSET"}),
            (std::vector<std::string>{"mpiexec.mpich", "-genv", "MLA_TEST_A", "a b\nc", "-genv", "MLA_TEST_UNSET", "",
                                      "-n", "2", "./app"}));
}

TEST(ForwardVariables, LeavesSrunAndPlainCommandsAlone) {
  std::vector<std::string> srun{"srun", "-n", "8", "./app"};
  EXPECT_EQ(ForwardVariables(LauncherKind::kSrun, srun, {"LD_PRELOAD"}), srun);
  std::vector<std::string> plain{"./wrapper.sh", "arg"};
  EXPECT_EQ(ForwardVariables(LauncherKind::kOther, plain, {"LD_PRELOAD"}), plain);
  EXPECT_TRUE(ForwardVariables(LauncherKind::kOpenMpi, {}, {"LD_PRELOAD"}).empty());
}

TEST(MpiChoice, ProbeAndLauncherOfFamily) {
  EXPECT_EQ(ProbeOfFamily("/usr/libexec/multilane/mlprobe", "openmpi"), "/usr/libexec/multilane/mlprobe");
  EXPECT_EQ(ProbeOfFamily("/usr/libexec/multilane/mlprobe", "mpich"), "/usr/libexec/multilane/mlprobe-mpich");
  // The probe's launcher outside Slurm: the family row's (tune/probe_launch.cc).
  EXPECT_EQ(mla::FindMpiFamily("mpich")->launcher, "mpiexec.mpich");
  EXPECT_EQ(mla::FindMpiFamily("openmpi")->launcher, "mpirun");
  EXPECT_EQ(mla::FindMpiFamily("mpich")->launcher_kind, LauncherKind::kHydra);
  EXPECT_EQ(mla::FindMpiFamily("openmpi")->launcher_kind, LauncherKind::kOpenMpi);
  EXPECT_EQ(mla::FindMpiFamily("mpich")->ranks_flag, "-n");
  EXPECT_EQ(mla::FindMpiFamily("openmpi")->ranks_flag, "-np");
}

TEST(MpiChoice, VersionOfAMissingProbeIsAnError) {
  std::string error;
  EXPECT_EQ(MpiVersionOfFamily("mpich", "/nonexistent/mlprobe-mpich", &error), "");
  EXPECT_NE(error.find("--mpi-version"), std::string::npos) << error;
}

}  // namespace
}  // namespace multilane
