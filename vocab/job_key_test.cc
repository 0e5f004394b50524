#include "vocab/job_key.h"

#include <gtest/gtest.h>

namespace mla {
namespace {

TEST(JobKey, Rule) {
  EXPECT_TRUE(ValidJobKey("train-resnet50"));
  EXPECT_TRUE(ValidJobKey("lmp:0123456789ab"));
  EXPECT_TRUE(ValidJobKey("team/alice@v2+fp16"));
  EXPECT_TRUE(ValidJobKey(std::string(kMaxJobKeyLength, 'k')));
  EXPECT_FALSE(ValidJobKey(""));
  EXPECT_FALSE(ValidJobKey(std::string(kMaxJobKeyLength + 1, 'k')));
  EXPECT_FALSE(ValidJobKey("-rf"));
  EXPECT_FALSE(ValidJobKey("two words"));
  EXPECT_FALSE(ValidJobKey("tab\there"));
  EXPECT_FALSE(ValidJobKey("quote'"));
  EXPECT_FALSE(ValidJobKey("caf\xc3\xa9"));
  EXPECT_NE(JobKeyRule().find("128"), std::string::npos);
}

TEST(JobKey, DefaultIsNameAndDigestOfTheWholeCommandLine) {
  const std::string a = DefaultJobKey("train", std::string("./train\0--epochs\0"
                                                           "10\0",
                                                           20));
  const std::string b = DefaultJobKey("train", std::string("./train\0--epochs\0"
                                                           "20\0",
                                                           20));
  EXPECT_EQ(a.substr(0, 6), "train:");
  EXPECT_EQ(a.size(), 6u + 12u);
  EXPECT_NE(a, b);  // other arguments: another job
  EXPECT_EQ(a, DefaultJobKey("train", std::string("./train\0--epochs\0"
                                                  "10\0",
                                                  20)));  // stable
  // FNV-1a 64 of the empty string is cbf29ce484222325, of "a" af63dc4c8601ec8c.
  EXPECT_EQ(Fnv1a64Hex(""), "cbf29ce484222325");
  EXPECT_EQ(Fnv1a64Hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(DefaultJobKey("x", ""), "x:cbf29ce48422");
  EXPECT_TRUE(ValidJobKey(DefaultJobKey("my prog\x01", "a")));
  EXPECT_EQ(DefaultJobKey("my prog", "").substr(0, 8), "my_prog:");
  EXPECT_EQ(DefaultJobKey("", "").substr(0, 4), "job:");
  EXPECT_TRUE(ValidJobKey(DefaultJobKey("-x", "")));
  EXPECT_TRUE(ValidJobKey(DefaultJobKey(std::string(500, 'n'), "")));
}

}  // namespace
}  // namespace mla
