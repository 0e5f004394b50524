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
  auto found = ResolveProfile({missing, corrupt, empty_match, system, later}, TestFingerprint().Key(), "", "0.1.0",
                              "Open MPI 4.1.5", &notes);
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
  EXPECT_FALSE(ResolveProfile({dir + "/a.db", dir + "/b.db"}, TestFingerprint().Key(), "gpu", "9.9.9", "Open MPI 4.1.5",
                              &notes));
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

int64_t PublishRecord(const std::string& path, ProfileRecord r) {
  std::string error;
  auto store = ProfileStore::Open(path, ProfileStore::Access::kReadWrite, &error);
  EXPECT_NE(store, nullptr) << error;
  if (store == nullptr) return 0;
  EXPECT_TRUE(store->Publish(TestFingerprint(), &r, {}, &error)) << error;
  return r.id;
}

// `multilane run` outside an allocation: the profile `tune --partition` made
// is found when it is the only partition's; with two, the miss names both.
TEST(ResolveTest, WithoutPartitionFindsTheOnePartitionsProfile) {
  const std::string dir = NewTempDir();
  const std::string db = dir + "/system.db";
  const int64_t id = PublishRecord(db, TestProfile("gpu", "gpu"));
  std::vector<std::string> notes;
  std::string why;
  auto found = ResolveWithoutPartition({db}, TestFingerprint().Key(), "0.1.0", "Open MPI 4.1.5", &why, &notes);
  ASSERT_TRUE(found.has_value()) << why << "\n" << Joined(notes);
  EXPECT_EQ(found->id, id);
  EXPECT_EQ(found->partition, "gpu");
  EXPECT_NE(Joined(notes).find("the only partition"), std::string::npos) << Joined(notes);

  PublishRecord(db, TestProfile("debug", "debug"));
  EXPECT_FALSE(ResolveWithoutPartition({db}, TestFingerprint().Key(), "0.1.0", "Open MPI 4.1.5", &why, nullptr));
  EXPECT_NE(why.find("partitions debug, gpu"), std::string::npos) << why;
  EXPECT_NE(why.find("--partition NAME"), std::string::npos) << why;
}

// A profile of another library or MPI version is a miss that says so and
// says to retune, never "no profile".
TEST(ResolveTest, WithoutPartitionMissNamesTheOtherVersions) {
  const std::string dir = NewTempDir();
  const std::string db = dir + "/system.db";
  PublishRecord(db, TestProfile("old", "gpu", "0.0.9", "Open MPI 4.1.5"));
  std::string why;
  EXPECT_FALSE(ResolveWithoutPartition({db}, TestFingerprint().Key(), "0.1.0", "Open MPI 5.0.7", &why, nullptr));
  EXPECT_NE(why.find("tuned with libmlallreduce 0.0.9 and MPI 'Open MPI 4.1.5'"), std::string::npos) << why;
  EXPECT_NE(why.find("tune again (`multilane tune --partition gpu`)"), std::string::npos) << why;
  EXPECT_FALSE(ResolveWithoutPartition({dir + "/none.db"}, "k", "0.1.0", "m", &why, nullptr));
  EXPECT_NE(why.find("`multilane tune` makes one"), std::string::npos) << why;
}

TEST(ResolveTest, OutdatedProfilesAreGroupsWithoutACurrentOne) {
  ProfileRecord current = TestProfile("cur", "gpu", "0.2.0", "Open MPI 5.0.7");
  current.node_type_key = "a";
  ProfileRecord old_same_group = TestProfile("old", "gpu", "0.1.0", "Open MPI 4.1.5");
  old_same_group.node_type_key = "a";
  ProfileRecord old_mpi = TestProfile("oldmpi", "", "0.2.0", "Open MPI 4.1.5");
  old_mpi.node_type_key = "a";
  old_mpi.id = 3;
  ProfileRecord older_mpi = old_mpi;
  older_mpi.id = 2;
  ProfileRecord mpich = TestProfile("mpich", "", "0.2.0", "MPICH Version: 4.2.1");
  mpich.node_type_key = "b";
  const auto out = OutdatedProfiles({current, old_same_group, older_mpi, old_mpi, mpich}, "0.2.0",
                                    {"Open MPI 5.0.7", "MPICH Version: 4.2.1"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, 3);  // the newest of node type a without a partition
  EXPECT_EQ(TunedWith(out[0]), "tuned with libmlallreduce 0.2.0 and MPI 'Open MPI 4.1.5'");
}

}  // namespace
}  // namespace mldb
