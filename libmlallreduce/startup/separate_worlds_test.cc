#include "libmlallreduce/startup/separate_worlds.h"

#include <gtest/gtest.h>

namespace mla::lib {
namespace {

TEST(SeparateWorlds, AStepOfSeveralTasksInWorldsOfOneIsSaidWithTheFix) {
  const std::string line = SeparateWorldsLine(4, 1, false);
  EXPECT_NE(line.find("4 tasks"), std::string::npos) << line;
  EXPECT_NE(line.find("--mpi=pmix for Open MPI"), std::string::npos) << line;
  EXPECT_NE(line.find("--mpi=pmi2 for MPICH"), std::string::npos) << line;
}

TEST(SeparateWorlds, NothingToSayOtherwise) {
  EXPECT_EQ(SeparateWorldsLine(0, 1, false), "");  // not under the plugin
  EXPECT_EQ(SeparateWorldsLine(1, 1, false), "");  // a one-task step
  EXPECT_EQ(SeparateWorldsLine(4, 4, false), "");  // one world
  EXPECT_EQ(SeparateWorldsLine(4, 2, false), "");  // an MPMD part, several ranks
  EXPECT_EQ(SeparateWorldsLine(4, 1, true), "");   // a spawned world of one
}

}  // namespace
}  // namespace mla::lib
