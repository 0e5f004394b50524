#include "vocab/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace mla {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "mla-atomic-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Plants a link at DIR/`name` to a file "victim" holding "precious", then
  // writes "report" to DIR/r.json; the victim must keep its text.
  void WriteBesideALinkAt(const char* name) {
    const fs::path victim = dir_ / "victim";
    { std::ofstream(victim) << "precious"; }
    fs::create_symlink(victim, dir_ / name);
    ASSERT_EQ(WriteFileAtomically(dir_, "r.json", "report"), "");
    EXPECT_EQ(Read(victim), "precious");
  }
  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesTheTextAndLeavesNoTemporaryFile) {
  ASSERT_EQ(WriteFileAtomically(dir_, "r.json", "{\"a\": 1}\n"), "");
  EXPECT_EQ(Read(dir_ / "r.json"), "{\"a\": 1}\n");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

// The old writer used the fixed name DIR/.NAME.tmp and fopen(..., "w"), which
// follows a link planted there by anyone who can write DIR.
TEST_F(AtomicFileTest, NeverFollowsALinkAtThePredictableTemporaryName) {
  ASSERT_NO_FATAL_FAILURE(WriteBesideALinkAt(".r.json.tmp"));
  EXPECT_EQ(Read(dir_ / "r.json"), "report");
}

TEST_F(AtomicFileTest, ReplacesALinkAtTheFinalNameInsteadOfFollowingIt) {
  ASSERT_NO_FATAL_FAILURE(WriteBesideALinkAt("r.json"));
  EXPECT_FALSE(fs::is_symlink(dir_ / "r.json"));
  EXPECT_EQ(Read(dir_ / "r.json"), "report");
}

TEST_F(AtomicFileTest, ModeIsTheUmasksNotMkstemps) {
  const mode_t old = umask(027);
  const std::string why = WriteFileAtomically(dir_, "r.json", "x");
  umask(old);
  ASSERT_EQ(why, "");
  struct stat st;
  ASSERT_EQ(stat((dir_ / "r.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(AtomicFileTest, AMissingDirectoryIsAnErrorNotACrash) {
  EXPECT_NE(WriteFileAtomically((dir_ / "no" / "such").string(), "r.json", "x"), "");
}

}  // namespace
}  // namespace mla
