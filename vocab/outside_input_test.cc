// outside_input_test.cc: bounded reads refuse what is not a regular file of
// sane size, and excerpts bound what a message echoes.
#include "vocab/outside_input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include "vocab/fresh_test_folder.h"

namespace mla {
namespace {

TEST(ReadInputFile, ReadsARegularFileAndFollowsALinkToOne) {
  const std::string d = mla::FreshTestFolder("outside_input_regular");
  std::ofstream(d + "/f") << "{\"a\": 1}";
  std::filesystem::create_symlink(d + "/f", d + "/link");
  std::string text, error;
  ASSERT_TRUE(ReadInputFile(d + "/link", &text, &error)) << error;
  EXPECT_EQ(text, "{\"a\": 1}");
  EXPECT_FALSE(ReadInputFile(d + "/link", &text, &error, /*refuse_links=*/true));
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
}

TEST(ReadInputFile, RefusesDevicesFifosAndFoldersWithoutBlocking) {
  const std::string d = mla::FreshTestFolder("outside_input_special");
  ASSERT_EQ(mkfifo((d + "/fifo").c_str(), 0600), 0);
  std::string text, error;
  EXPECT_FALSE(ReadInputFile(d + "/fifo", &text, &error));  // no writer: would hang with a plain open
  EXPECT_NE(error.find("it is a FIFO (named pipe), not a regular file: give a regular file"), std::string::npos)
      << error;
  EXPECT_FALSE(ReadInputFile("/dev/zero", &text, &error));
  EXPECT_NE(error.find("a character device"), std::string::npos) << error;
  EXPECT_FALSE(ReadInputFile(d, &text, &error));
  EXPECT_NE(error.find("it is a folder"), std::string::npos) << error;
  EXPECT_FALSE(ReadInputFile(d + "/missing", &text, &error));
  EXPECT_EQ(error.rfind("cannot read: No such file or directory", 0), 0u) << error;
}

TEST(ReadInputFile, RefusesAFileOverTheBound) {
  const std::string d = mla::FreshTestFolder("outside_input_large");
  const std::string big = d + "/big";
  { std::ofstream(big) << "x"; }
  std::filesystem::resize_file(big, kMaxInputFileBytes + 1);  // sparse: no disk used
  std::string text, error;
  EXPECT_FALSE(ReadInputFile(big, &text, &error));
  EXPECT_NE(error.find("larger than 16 MiB"), std::string::npos) << error;
  EXPECT_TRUE(text.empty());
}

TEST(Excerpt, ShortValuesStayWholeLongOnesAreCutWithAnEllipsis) {
  EXPECT_EQ(Excerpt("gpu"), "gpu");
  const std::string long_value(100 * 1024, 'a');
  const std::string e = Excerpt(long_value);
  EXPECT_LT(e.size(), mla::kExcerptBytes + 40);
  EXPECT_EQ(e, std::string(mla::kExcerptBytes, 'a') + "\u2026 (102400 bytes)");
  // A cut never splits a UTF-8 character: "é" is two bytes.
  std::string accents;
  while (accents.size() <= mla::kExcerptBytes) accents += "\xc3\xa9";
  accents = "x" + accents;
  const std::string cut = Excerpt(accents);
  EXPECT_EQ(cut.substr(0, cut.find("\u2026")).size() % 2, 1u) << cut;
}

}  // namespace
}  // namespace mla
