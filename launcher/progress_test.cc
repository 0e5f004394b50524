#include "launcher/progress.h"

#include <gtest/gtest.h>

namespace multilane {
namespace {

TEST(ProgressLine, ParsesTheProbesFormat) {
  ProgressLine p;
  ASSERT_TRUE(ParseProgressLine("progress 3 10 12.5 lane lanes=2 at 1M\n", &p));
  EXPECT_EQ(p.done, 3);
  EXPECT_EQ(p.total, 10);
  EXPECT_DOUBLE_EQ(p.seconds_left, 12.5);
  EXPECT_EQ(p.what, "lane lanes=2 at 1M");
}

TEST(ProgressLine, RejectsOtherLines) {
  ProgressLine p;
  EXPECT_FALSE(ParseProgressLine("# a comment", &p));
  EXPECT_FALSE(ParseProgressLine("progress x 10 1 what", &p));
  EXPECT_FALSE(ParseProgressLine("progress 11 10 1 what", &p));
  EXPECT_FALSE(ParseProgressLine("progress 1 0 1 what", &p));
  EXPECT_FALSE(ParseProgressLine("", &p));
}

TEST(RenderBar, FillsInProportion) {
  ProgressLine p;
  p.done = 5;
  p.total = 10;
  p.seconds_left = 7;
  p.what = "hier at 4K";
  EXPECT_EQ(RenderBar(p, 10), "[#####-----]  50%  7 s left  hier at 4K");
}

}  // namespace
}  // namespace multilane
