// task_layout_test.cc: GPU and CPU blocks of a step's tasks.
#include "spank/task_layout.h"

#include <gtest/gtest.h>

namespace multilane_spank {
namespace {

TEST(TaskLayout, TasksShareGpusInBlocks) {
  const std::vector<std::string> gpus = {"0", "1"};
  EXPECT_EQ(GpuOfTask(gpus, 0, 4), "0");
  EXPECT_EQ(GpuOfTask(gpus, 1, 4), "0");
  EXPECT_EQ(GpuOfTask(gpus, 2, 4), "1");
  EXPECT_EQ(GpuOfTask(gpus, 3, 4), "1");
  EXPECT_EQ(GpuOfTask({"2", "5", "6"}, 5, 6), "6");
  EXPECT_EQ(GpuOfTask(gpus, 0, 1), "0");  // fewer tasks than GPUs
  EXPECT_EQ(GpuOfTask({}, 0, 4), "");
  EXPECT_EQ(GpuOfTask(gpus, 4, 4), "");
  EXPECT_EQ(GpuOfTask(gpus, -1, 4), "");
}

TEST(TaskLayout, CpuBlocksAreContiguous) {
  const std::vector<int> cpus = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(CpusOfTask(cpus, 0, 4), (std::vector<int>{0, 1}));
  EXPECT_EQ(CpusOfTask(cpus, 3, 4), (std::vector<int>{6, 7}));
  EXPECT_EQ(CpusOfTask(cpus, 1, 3), (std::vector<int>{2, 3, 4}));
  // More tasks than CPUs: tasks share, neighbours first.
  EXPECT_EQ(CpusOfTask({0, 1}, 0, 4), (std::vector<int>{0}));
  EXPECT_EQ(CpusOfTask({0, 1}, 1, 4), (std::vector<int>{0}));
  EXPECT_EQ(CpusOfTask({0, 1}, 2, 4), (std::vector<int>{1}));
  EXPECT_TRUE(CpusOfTask({}, 0, 1).empty());
}

TEST(TaskLayout, Lists) {
  EXPECT_EQ(SplitList("0,1,,3"), (std::vector<std::string>{"0", "1", "3"}));
  EXPECT_TRUE(SplitList("").empty());
  EXPECT_EQ(CpuListString({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(CpuListString({}), "");
}

}  // namespace
}  // namespace multilane_spank
