// tune_layout_test.cc: oversubscribed probes are refused or marked.
#include "launcher/tune/tune_layout.h"

#include <gtest/gtest.h>

namespace multilane {
namespace {

TEST(TuneLayout, EnoughCoresIsFine) {
  EXPECT_EQ(CheckOversubscription(4, 4, false, true).verdict, Oversubscription::kNo);
  EXPECT_EQ(CheckOversubscription(4, 4, false, true).message, "");
}

TEST(TuneLayout, OversubscribedIsRefusedWithTheFix) {
  const LayoutVerdict v = CheckOversubscription(4, 2, false, false);
  EXPECT_EQ(v.verdict, Oversubscription::kRefused);
  EXPECT_NE(v.message.find("4 ranks on a node with 2 usable cores"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("--np 2"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("--allow-oversubscribed"), std::string::npos) << v.message;
}

TEST(TuneLayout, AllowedIsMarkedButNeverForTheSystemDatabase) {
  const LayoutVerdict marked = CheckOversubscription(4, 2, true, false);
  EXPECT_EQ(marked.verdict, Oversubscription::kMarked);
  EXPECT_NE(marked.message.find("OVERSUBSCRIBED"), std::string::npos) << marked.message;
  EXPECT_NE(marked.message.find("oversubscribed=4/2"), std::string::npos) << marked.message;
  const LayoutVerdict system = CheckOversubscription(4, 2, true, true);
  EXPECT_EQ(system.verdict, Oversubscription::kRefused);
  EXPECT_NE(system.message.find("system database"), std::string::npos) << system.message;
}

TEST(TuneLayout, UsableCoresIsPositive) { EXPECT_GE(UsableCores(), 1); }

}  // namespace
}  // namespace multilane
