// output_file_test.cc: a file the command writes never goes through a link
// someone planted (N3).
#include "launcher/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include "vocab/fresh_test_folder.h"

namespace multilane {
namespace {

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WriteOutputFile, PlantedLinksAreReplacedNeverFollowed) {
  const std::string d = mla::FreshTestFolder("output_file_links");
  std::ofstream(d + "/victim") << "precious";
  std::ofstream(d + "/victim2") << "precious too";
  std::filesystem::create_symlink(d + "/victim", d + "/out.json.tmp");  // the old temporary name
  std::filesystem::create_symlink(d + "/victim2", d + "/out.json");
  std::string error;
  ASSERT_TRUE(WriteOutputFile(d + "/out.json", "{}\n", &error)) << error;
  EXPECT_EQ(Contents(d + "/victim"), "precious");
  EXPECT_EQ(Contents(d + "/victim2"), "precious too");
  struct stat st;
  ASSERT_EQ(lstat((d + "/out.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(Contents(d + "/out.json"), "{}\n");
  // Nothing else is left behind but the planted link.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(d)) files += e.path().filename().string()[0] == '.';
  EXPECT_EQ(files, 0u);
}

TEST(WriteOutputFile, ARelativeNameIsWrittenInTheCurrentFolder) {
  const std::string d = mla::FreshTestFolder("output_file_relative");
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(d);
  std::string error;
  EXPECT_TRUE(WriteOutputFile("page.html", "<html>", &error)) << error;
  std::filesystem::current_path(cwd);
  EXPECT_EQ(Contents(d + "/page.html"), "<html>");
}

TEST(WriteOutputFile, FailuresNameTheFileAndTheFix) {
  std::string error;
  EXPECT_FALSE(WriteOutputFile("/nonexistent/dir/out.json", "{}", &error));
  EXPECT_EQ(error,
            "cannot write /nonexistent/dir/out.json: No such file or directory; check that the folder "
            "/nonexistent/dir exists and that you may write it");
  EXPECT_FALSE(WriteOutputFile("/tmp/", "{}", &error));
  EXPECT_NE(error.find("give a file name"), std::string::npos) << error;
}

}  // namespace
}  // namespace multilane
