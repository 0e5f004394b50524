#include "command_line.h"

#include <gtest/gtest.h>

namespace multilane {
namespace {

TEST(ClassifyLauncher, KnowsOpenMpiAndSrunByName) {
  EXPECT_EQ(ClassifyLauncher("mpirun"), LauncherKind::kOpenMpi);
  EXPECT_EQ(ClassifyLauncher("/usr/bin/mpiexec"), LauncherKind::kOpenMpi);
  EXPECT_EQ(ClassifyLauncher("orterun"), LauncherKind::kOpenMpi);
  EXPECT_EQ(ClassifyLauncher("/opt/slurm/bin/srun"), LauncherKind::kSrun);
  EXPECT_EQ(ClassifyLauncher("./my_app"), LauncherKind::kOther);
  EXPECT_EQ(ClassifyLauncher("mpirunner"), LauncherKind::kOther);
}

TEST(ForwardVariables, InsertsDashXAfterMpirun) {
  std::vector<std::string> cmd{"mpirun", "-np", "4", "./app", "--x"};
  EXPECT_EQ(ForwardVariables(cmd, {"LD_PRELOAD", "MULTILANE_PROFILE"}),
            (std::vector<std::string>{"mpirun", "-x", "LD_PRELOAD", "-x", "MULTILANE_PROFILE", "-np", "4", "./app",
                                      "--x"}));
}

TEST(ForwardVariables, LeavesSrunAndPlainCommandsAlone) {
  std::vector<std::string> srun{"srun", "-n", "8", "./app"};
  EXPECT_EQ(ForwardVariables(srun, {"LD_PRELOAD"}), srun);
  std::vector<std::string> plain{"./app", "arg"};
  EXPECT_EQ(ForwardVariables(plain, {"LD_PRELOAD"}), plain);
  EXPECT_TRUE(ForwardVariables({}, {"LD_PRELOAD"}).empty());
}

}  // namespace
}  // namespace multilane
