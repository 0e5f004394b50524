#include "db/resolve.h"

#include <gtest/gtest.h>

#include "db/test_util.h"

namespace mldb {
namespace {

using testing_util::NewTempDir;
using testing_util::TestFingerprint;
using testing_util::TestProfile;
using testing_util::WriteFile;

int64_t Publish(const std::string& path, const std::string& tag) {
  std::string error;
  auto store = ProfileStore::Open(path, ProfileStore::Access::kReadWrite, &error);
  EXPECT_NE(store, nullptr) << error;
  if (store == nullptr) return 0;
  ProfileRecord r = TestProfile(tag);
  EXPECT_TRUE(store->Publish(TestFingerprint(), &r, {}, &error)) << error;
  return r.id;
}

std::string Joined(const std::vector<std::string>& notes) {
  std::string out;
  for (const std::string& n : notes) out += n + "\n";
  return out;
}

TEST(ResolveTest, FirstHitWinsAndProblemsAreNotes) {
  const std::string dir = NewTempDir();
  const std::string missing = dir + "/user/missing.db";
  const std::string corrupt = dir + "/corrupt.db";
  const std::string empty_match = dir + "/other.db";
  const std::string system = dir + "/system.db";
  const std::string later = dir + "/later.db";
  WriteFile(corrupt, std::string(4096, 'z'));
  {
    std::string error;
    auto store = ProfileStore::Open(empty_match, ProfileStore::Access::kReadWrite, &error);
    ASSERT_NE(store, nullptr) << error;
  }
  Publish(system, "system");
  Publish(later, "later");

  std::vector<std::string> notes;
  auto found = ResolveProfile({missing, corrupt, empty_match, system, later}, TestFingerprint().Key(),
                              "", "0.1.0", "Open MPI 4.1.5", &notes);
  ASSERT_TRUE(found.has_value()) << Joined(notes);
  EXPECT_EQ(found->tuned_by, "tester-system");
  ASSERT_EQ(notes.size(), 4u) << Joined(notes);
  EXPECT_NE(notes[0].find("no database at " + missing), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find(corrupt), std::string::npos) << notes[1];
  EXPECT_NE(notes[1].find("multilane doctor"), std::string::npos) << notes[1];
  EXPECT_NE(notes[2].find("no profile"), std::string::npos) << notes[2];
  EXPECT_NE(notes[3].find("using profile"), std::string::npos) << notes[3];
  struct stat st;
  EXPECT_NE(stat(missing.c_str(), &st), 0);  // nothing created
}

TEST(ResolveTest, MissReturnsNulloptWithNotes) {
  const std::string dir = NewTempDir();
  Publish(dir + "/a.db", "a");
  std::vector<std::string> notes;
  EXPECT_FALSE(ResolveProfile({dir + "/a.db", dir + "/b.db"}, TestFingerprint().Key(), "gpu",
                              "9.9.9", "Open MPI 4.1.5", &notes));
  EXPECT_EQ(notes.size(), 2u) << Joined(notes);
  EXPECT_FALSE(ResolveProfile({}, "k", "", "v", "m", nullptr));
}

TEST(ResolveTest, LabelsUserAndSystemDatabases) {
  const std::string dir = NewTempDir();
  const std::string user = dir + "/user.db";
  setenv("MULTILANE_USER_DB", user.c_str(), 1);
  std::vector<std::string> notes;
  ResolveProfile({user}, "k", "", "v", "m", &notes);
  unsetenv("MULTILANE_USER_DB");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "no user database at " + user);
}

}  // namespace
}  // namespace mldb
