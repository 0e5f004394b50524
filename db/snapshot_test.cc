// snapshot_test.cc: the working copy and the published snapshot, with a
// reader and a writer process on the same file at once.
#include "db/snapshot.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "db/test_util.h"

namespace mldb {
namespace {

using testing_util::NewTempDir;
using testing_util::TestFingerprint;
using testing_util::TestProfile;
using Access = ProfileStore::Access;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

void PublishTo(ProfileStore* work, const std::string& tag) {
  ProfileRecord r = TestProfile(tag);
  std::string error;
  ASSERT_TRUE(work->Publish(TestFingerprint(), &r, {}, &error)) << error;
}

TEST(Snapshot, ReadersOpenThePublishedFileImmutableAndWritersAreSentToTheWorkingCopy) {
  const std::string dir = NewTempDir();
  const std::string published = dir + "/profiles.db";
  std::string error;
  auto work = OpenWorkingCopy(published, &error);
  ASSERT_NE(work, nullptr) << error;
  EXPECT_EQ(work->path(), published + ".work");
  PublishTo(work.get(), "a");
  EXPECT_FALSE(Exists(published));  // nothing published before PublishSnapshot
  ASSERT_TRUE(work->PublishSnapshot(published, &error)) << error;
  EXPECT_TRUE(IsPublishedSnapshot(published));
  EXPECT_FALSE(IsPublishedSnapshot(published + ".work"));
  struct stat st;
  ASSERT_EQ(stat(published.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);

  auto reader = ProfileStore::Open(published, Access::kReadOnly, &error);
  ASSERT_NE(reader, nullptr) << error;
  EXPECT_EQ(reader->List(&error).size(), 1u) << error;
  EXPECT_TRUE(reader->Check().ok);
  // Immutable: the reader leaves no journal, WAL or shared-memory file.
  for (const char* suffix : {"-journal", "-wal", "-shm"}) EXPECT_FALSE(Exists(published + suffix)) << suffix;

  // Writing the snapshot in place is refused with the way to do it.
  EXPECT_EQ(ProfileStore::Open(published, Access::kReadWrite, &error), nullptr);
  EXPECT_NE(error.find("published snapshot"), std::string::npos) << error;
  EXPECT_NE(error.find(published + ".work"), std::string::npos) << error;

  // A reader that has the old file open keeps it across a new publication.
  PublishTo(work.get(), "b");
  ASSERT_TRUE(work->PublishSnapshot(published, &error)) << error;
  EXPECT_EQ(reader->List(&error).size(), 1u) << error;
  auto fresh = ProfileStore::Open(published, Access::kReadOnly, &error);
  ASSERT_NE(fresh, nullptr) << error;
  EXPECT_EQ(fresh->List(&error).size(), 2u) << error;
}

TEST(Snapshot, AMissingWorkingCopyStartsFromThePublishedFile) {
  const std::string dir = NewTempDir();
  const std::string published = dir + "/profiles.db";
  std::string error;
  {
    // A database from before the scheme: written in place (WAL).
    auto old = ProfileStore::Open(published, Access::kReadWrite, &error);
    ASSERT_NE(old, nullptr) << error;
    PublishTo(old.get(), "old");
  }
  auto work = OpenWorkingCopy(published, &error);
  ASSERT_NE(work, nullptr) << error;
  EXPECT_EQ(work->List(&error).size(), 1u) << error;
  PublishTo(work.get(), "new");
  ASSERT_TRUE(work->PublishSnapshot(published, &error)) << error;
  work.reset();
  EXPECT_TRUE(IsPublishedSnapshot(published));
  // The working copy lost: it starts again from the snapshot, nothing lost.
  ASSERT_EQ(unlink((published + ".work").c_str()), 0);
  work = OpenWorkingCopy(published, &error);
  ASSERT_NE(work, nullptr) << error;
  EXPECT_EQ(work->List(&error).size(), 2u) << error;
}

TEST(Snapshot, WorkingCopyOfTheSystemDatabaseMayLiveElsewhere) {
  const std::string dir = NewTempDir();
  setenv("MULTILANE_SYSTEM_DB", (dir + "/shared.db").c_str(), 1);
  setenv("MULTILANE_SYSTEM_WORK_DB", (dir + "/local.db").c_str(), 1);
  EXPECT_EQ(WorkingCopyPath(dir + "/shared.db"), dir + "/local.db");
  EXPECT_EQ(WorkingCopyPath(dir + "/other.db"), dir + "/other.db.work");
  unsetenv("MULTILANE_SYSTEM_WORK_DB");
  unsetenv("MULTILANE_SYSTEM_DB");
}

// A writer process publishes kRounds profiles, one snapshot each, while a
// reader process opens the published file again and again: every open must
// succeed on a whole, healthy database whose profile count never goes down,
// and the reader ends on the last snapshot.
TEST(Snapshot, AReaderAndAWriterProcessOnTheSameFile) {
  constexpr int kRounds = 40;
  const std::string dir = NewTempDir();
  const std::string published = dir + "/profiles.db";
  const std::string done = dir + "/writer-done";
  const std::string ready = dir + "/reader-ready";
  std::string error;
  {
    auto work = OpenWorkingCopy(published, &error);
    ASSERT_NE(work, nullptr) << error;
    PublishTo(work.get(), "first");
    ASSERT_TRUE(work->PublishSnapshot(published, &error)) << error;
  }
  const pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    std::string e;
    auto work = OpenWorkingCopy(published, &e);
    if (!work) _exit(2);
    // Start only once the reader has opened the file once, so that its opens
    // overlap the writes however the two processes are scheduled.
    for (int waited = 0; !Exists(ready); ++waited) {
      if (waited > 30000) _exit(4);
      usleep(1000);
    }
    for (int i = 1; i < kRounds; ++i) {
      ProfileRecord r = TestProfile("w" + std::to_string(i));
      if (!work->Publish(TestFingerprint(), &r, {}, &e) || !work->PublishSnapshot(published, &e)) _exit(3);
    }
    testing_util::WriteFile(done, "done");
    _exit(0);
  }
  const pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    size_t last = 0;
    int opens = 0;
    for (bool finished = false; !finished;) {
      finished = Exists(done);  // one more pass after the writer is done
      std::string e;
      auto store = ProfileStore::Open(published, Access::kReadOnly, &e);
      if (!store) _exit(10);
      const auto profiles = store->List(&e);
      if (!e.empty() || !store->Check().ok) _exit(11);
      for (const auto& p : profiles)
        if (p.entries.size() != 3) _exit(12);  // never half a profile
      if (profiles.size() < last) _exit(13);   // never an older snapshot after a newer one
      last = profiles.size();
      if (++opens == 1) testing_util::WriteFile(ready, "ready");
    }
    _exit(last == static_cast<size_t>(kRounds) && opens > 1 ? 0 : 14);
  }
  int status = 0;
  ASSERT_EQ(waitpid(writer, &status, 0), writer);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "writer status " << status << " (2 open, 3 publish, 4 no reader)";
  ASSERT_EQ(waitpid(reader, &status, 0), reader);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "reader exit " << WEXITSTATUS(status) << " (10 open, 11 list/check, 12 half, 13 older, 14 end)";
  for (const char* suffix : {"-journal", "-wal", "-shm"}) EXPECT_FALSE(Exists(published + suffix)) << suffix;
}

}  // namespace
}  // namespace mldb
