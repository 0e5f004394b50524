// verbose_level_test.cc: MULTILANE_VERBOSE's one reading.
#include "vocab/verbose_level.h"

#include <gtest/gtest.h>

#include <utility>

namespace mla {
namespace {

TEST(VerboseLevel, ZeroOneAndLargerNumbers) {
  const std::pair<const char*, int> cases[] = {{"", 0}, {"0", 0}, {"1", 1}, {"01", 1}, {"2", 2}, {"9999999", 9999999}};
  for (const auto& [text, level] : cases) EXPECT_EQ(VerboseLevel(text), level) << text;
}

// Issue 41 item 10: the front took every value but "0" as "on" and spoke
// beside the settings' warning about it.
TEST(VerboseLevel, AnythingElseIsBad) {
  for (const char* bad :
       {"loud", "yes", "on", "-1", "+1", " 1", "1 ", "0x1", "1.0", "00", "10000000", "99999999999999999999", "1\n"})
    EXPECT_EQ(VerboseLevel(bad), -1) << bad;
}

}  // namespace
}  // namespace mla
