#include "db/profile_store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "db/job_history.h"
#include "db/profile_json.h"
#include "db/resolve.h"
#include "db/test_util.h"
#include "vocab/price.h"
#include "vocab/profile.h"

namespace mldb {
namespace {

using testing_util::NewTempDir;
using testing_util::ReadFile;
using testing_util::TestFingerprint;
using testing_util::TestProfile;
using testing_util::WriteFile;
using Access = ProfileStore::Access;

std::unique_ptr<ProfileStore> OpenOrDie(const std::string& path, Access access = Access::kReadWrite) {
  std::string error;
  auto store = ProfileStore::Open(path, access, &error);
  EXPECT_NE(store, nullptr) << error;
  EXPECT_EQ(error, "");
  return store;
}

// Publishes TestProfile(tag, ...) for TestFingerprint(variant); returns its id.
int64_t PublishOne(ProfileStore* store, const std::string& tag, const std::string& tuned_at = "",
                   const std::string& partition = "", int variant = 0) {
  ProfileRecord r = TestProfile(tag, partition);
  r.tuned_at = tuned_at;
  std::string error;
  EXPECT_TRUE(store->Publish(TestFingerprint(variant), &r, {{"host", 1 << 20, "lane lanes=2", 4, 812.0, 20}}, &error))
      << error;
  EXPECT_GT(r.id, 0);
  return r.id;
}

// Runs SQL on the file with a plain SQLite connection.
void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

// A failure message names the file and ends with a fix after "; ".
void ExpectClearError(const std::string& error, const std::string& path) {
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("; "), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(ProfileStoreTest, CreatesFoldersAndSchemaAndReopens) {
  const std::string path = NewTempDir() + "/a/b/profiles.db";
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    ProfileStore::Health h = store->Check();
    EXPECT_TRUE(h.ok) << (h.problems.empty() ? "" : h.problems[0]);
    EXPECT_EQ(h.schema_version, kSchemaVersion);
    EXPECT_EQ(h.profiles, 0);
    PublishOne(store.get(), "one");
  }
  struct stat st;
  ASSERT_EQ(stat((path.substr(0, path.rfind('/'))).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  for (Access access : {Access::kReadWrite, Access::kReadOnly}) {
    auto store = OpenOrDie(path, access);
    ASSERT_NE(store, nullptr);
    ProfileStore::Health h = store->Check();
    EXPECT_TRUE(h.ok);
    EXPECT_EQ(h.schema_version, kSchemaVersion);
    EXPECT_EQ(h.profiles, 1);
  }
}

TEST(ProfileStoreTest, PublishFindList) {
  auto store = OpenOrDie(NewTempDir() + "/p.db");
  ASSERT_NE(store, nullptr);
  const int64_t old_id = PublishOne(store.get(), "old", "2026-01-01T00:00:00Z");
  ProfileRecord r = TestProfile("new");
  r.tuned_at = "2026-02-01T00:00:00Z";
  std::string error;
  ASSERT_TRUE(store->Publish(TestFingerprint(), &r, {}, &error)) << error;
  EXPECT_NE(r.id, old_id);
  EXPECT_EQ(r.node_type_key, TestFingerprint().Key());
  EXPECT_EQ(r.node_type_description, TestFingerprint().Description());

  auto found = store->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error);
  ASSERT_TRUE(found.has_value()) << error;
  EXPECT_EQ(found->id, r.id);
  EXPECT_EQ(found->tuned_by, "tester-new");
  EXPECT_EQ(found->profile_text, r.profile_text);
  EXPECT_EQ(found->node_type_description, TestFingerprint().Description());
  EXPECT_EQ(found->nodes, 2);
  EXPECT_EQ(found->ranks_per_gpu, 4);
  EXPECT_DOUBLE_EQ(found->duration_s, 12.5);
  ASSERT_EQ(found->entries.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(found->entries[i] == r.entries[i]) << i;

  std::vector<ProfileRecord> all = store->List(&error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, r.id);
  EXPECT_EQ(all[1].id, old_id);
  EXPECT_EQ(all[1].entries.size(), 3u);

  std::vector<NodeTypeRow> types = store->NodeTypes(&error);
  ASSERT_EQ(types.size(), 1u);
  EXPECT_EQ(types[0].key, TestFingerprint().Key());
  NodeFingerprint back;
  ASSERT_TRUE(NodeFingerprint::FromJson(nlohmann::json::parse(types[0].fingerprint_json), &back, &error));
  EXPECT_EQ(back, TestFingerprint());
}

TEST(ProfileStoreTest, LookupMissesAndPartitionFallback) {
  auto store = OpenOrDie(NewTempDir() + "/p.db");
  ASSERT_NE(store, nullptr);
  const std::string key = TestFingerprint().Key();
  std::string error = "stale";
  // Only a partition profile: a partition-less lookup misses.
  const int64_t gpu_id = PublishOne(store.get(), "gpu", "", "gpu");
  EXPECT_FALSE(store->Find(key, "", "0.1.0", "Open MPI 4.1.5", &error));
  EXPECT_EQ(error, "");
  const int64_t plain_id = PublishOne(store.get(), "plain", "", "");

  EXPECT_EQ(store->Find(key, "gpu", "0.1.0", "Open MPI 4.1.5", &error)->id, gpu_id);
  EXPECT_EQ(store->Find(key, "", "0.1.0", "Open MPI 4.1.5", &error)->id, plain_id);
  EXPECT_EQ(store->Find(key, "other", "0.1.0", "Open MPI 4.1.5", &error)->id, plain_id);

  error = "stale";
  EXPECT_FALSE(store->Find(key, "", "0.2.0", "Open MPI 4.1.5", &error));
  EXPECT_EQ(error, "");
  EXPECT_FALSE(store->Find(key, "gpu", "0.1.0", "MPICH 4.1", &error));
  EXPECT_EQ(error, "");
  EXPECT_FALSE(store->Find(TestFingerprint(1).Key(), "", "0.1.0", "Open MPI 4.1.5", &error));
  EXPECT_EQ(error, "");
}

// Issue 47: a bad tune published over a good one is withdrawn; the lookup
// then finds the good one again, and nothing of the bad one stays.
TEST(ProfileStoreTest, WithdrawnProfileIsNoLongerFound) {
  const std::string path = NewTempDir() + "/p.db";
  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  const std::string key = TestFingerprint().Key();
  const int64_t good = PublishOne(store.get(), "good", "2026-12-01T10:00:00Z", "cpu");
  const int64_t bad = PublishOne(store.get(), "bad", "2026-12-02T10:00:00Z", "cpu");
  std::string error;
  ASSERT_EQ(store->Find(key, "cpu", "0.1.0", "Open MPI 4.1.5", &error)->id, bad);

  EXPECT_TRUE(store->Withdraw(bad, &error)) << error;
  EXPECT_EQ(error, "");
  EXPECT_EQ(store->Find(key, "cpu", "0.1.0", "Open MPI 4.1.5", &error)->id, good);
  EXPECT_EQ(store->List(&error).size(), 1u);
  EXPECT_TRUE(store->Measurements(bad, &error).empty());
  EXPECT_EQ(store->NodeTypes(&error).size(), 1u);

  // Again, or an id that never was: a clear error, nothing changes.
  EXPECT_FALSE(store->Withdraw(bad, &error));
  ExpectClearError(error, path);
  EXPECT_NE(error.find("multilane show --db"), std::string::npos) << error;
  EXPECT_EQ(store->List(&error).size(), 1u);
  store.reset();
  auto reader = OpenOrDie(path, Access::kReadOnly);
  EXPECT_FALSE(reader->Withdraw(good, &error));
  EXPECT_NE(error.find("read-only"), std::string::npos) << error;
  EXPECT_EQ(reader->Find(key, "cpu", "0.1.0", "Open MPI 4.1.5", &error)->id, good);
}

TEST(ProfileStoreTest, RejectsInvalidProfilesAndReadOnlyWrites) {
  const std::string path = NewTempDir() + "/p.db";
  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  ProfileRecord r = TestProfile();
  r.entries[1].mem_kind = "gpu";
  std::string error;
  EXPECT_FALSE(store->Publish(TestFingerprint(), &r, {}, &error));
  EXPECT_NE(error.find("entries[1].mem_kind"), std::string::npos) << error;
  r = TestProfile();
  r.entries[0].max_bytes = 0;
  EXPECT_FALSE(store->Publish(TestFingerprint(), &r, {}, &error));
  EXPECT_NE(error.find("entries[0].max_bytes"), std::string::npos) << error;
  EXPECT_TRUE(store->List(&error).empty());
  EXPECT_TRUE(store->NodeTypes(&error).empty());

  auto reader = OpenOrDie(path, Access::kReadOnly);
  ASSERT_NE(reader, nullptr);
  r = TestProfile();
  EXPECT_FALSE(reader->Publish(TestFingerprint(), &r, {}, &error));
  ExpectClearError(error, path);
}

TEST(ProfileStoreTest, TwoThreadsPublishAtOnce) {
  const std::string path = NewTempDir() + "/p.db";
  OpenOrDie(path);  // create the schema first, like `multilane tune` does
  auto publish = [&](int thread) {
    std::string error;
    auto store = ProfileStore::Open(path, Access::kReadWrite, &error);
    ASSERT_NE(store, nullptr) << error;
    for (int i = 0; i < 20; ++i) {
      ProfileRecord r = TestProfile("t" + std::to_string(thread) + "-" + std::to_string(i));
      EXPECT_TRUE(store->Publish(TestFingerprint(thread), &r, {}, &error)) << error;
    }
  };
  std::thread a(publish, 0), b(publish, 1);
  a.join();
  b.join();
  std::string error;
  auto store = OpenOrDie(path, Access::kReadOnly);
  EXPECT_EQ(store->List(&error).size(), 40u) << error;
  EXPECT_EQ(store->NodeTypes(&error).size(), 2u);
}

TEST(ProfileStoreTest, WritersCreatingTheSameNewDatabaseAtOnceAllSucceed) {
  // Two `multilane tune` runs into a database that does not exist yet: both
  // create it at the same moment (the journal-mode switch does not wait in
  // SQLite's busy handler; Open must).
  for (int round = 0; round < 10; ++round) {
    const std::string path = NewTempDir() + "/fresh.db";
    std::vector<std::thread> threads;
    std::vector<std::string> errors(6);
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&, t] {
        auto store = ProfileStore::Open(path, Access::kReadWrite, &errors[t]);
        if (store != nullptr)
          errors[t].clear();
        else if (errors[t].empty())
          errors[t] = "Open returned nullptr without an error";
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 6; ++t) EXPECT_EQ(errors[t], "") << "round " << round << " thread " << t;
  }
}

TEST(ProfileStoreTest, ThreadsMayShareOneStore) {
  auto store = OpenOrDie(NewTempDir() + "/p.db");
  ASSERT_NE(store, nullptr);
  auto publish = [&](int thread) {
    for (int i = 0; i < 20; ++i) {
      ProfileRecord r = TestProfile("s" + std::to_string(thread) + "-" + std::to_string(i));
      std::string error;
      EXPECT_TRUE(store->Publish(TestFingerprint(), &r, {}, &error)) << error;
      store->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error);
      EXPECT_EQ(error, "");
    }
  };
  std::thread a(publish, 0), b(publish, 1);
  a.join();
  b.join();
  std::string error;
  EXPECT_EQ(store->List(&error).size(), 40u) << error;
}

TEST(ProfileStoreTest, TwoProcessesPublishAtOnce) {
  const std::string path = NewTempDir() + "/p.db";
  // No connection is open in this process across fork().
  std::vector<pid_t> children;
  for (int c = 0; c < 2; ++c) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string error;
      auto store = ProfileStore::Open(path, Access::kReadWrite, &error);
      bool ok = store != nullptr;
      for (int i = 0; ok && i < 15; ++i) {
        ProfileRecord r = TestProfile("p" + std::to_string(c) + "-" + std::to_string(i));
        ok = store->Publish(TestFingerprint(c), &r, {{"device", 4096, "hier", 2, 10.0, 5}}, &error);
      }
      if (!ok) std::fprintf(stderr, "child %d: %s\n", c, error.c_str());
      store.reset();
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  std::string error;
  auto store = OpenOrDie(path, Access::kReadOnly);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->List(&error).size(), 30u) << error;
  EXPECT_TRUE(store->Check().ok);
}

TEST(ProfileStoreTest, WriterDyingMidTransactionLosesNothing) {
  const std::string path = NewTempDir() + "/p.db";
  int64_t good_id = 0;
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    good_id = PublishOne(store.get(), "good", "2026-01-01T00:00:00Z");
  }
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) _exit(2);
    int rc = sqlite3_exec(db,
                          "BEGIN IMMEDIATE;"
                          "INSERT INTO profiles(node_type_key, partition, nodes, ranks_per_gpu, library_version,"
                          " mpi_version, tuned_by, tuned_at, duration_s, profile_text, complete)"
                          " SELECT key, '', 2, 4, '0.1.0', 'Open MPI 4.1.5', 'dying', '2027-01-01T00:00:00Z', 1,"
                          " 'multilane-profile 1', 1 FROM node_types;"
                          "INSERT INTO profile_entries(profile_id, mem_kind, min_bytes, algo)"
                          " VALUES(last_insert_rowid(), 'host', 0, 'lane');",
                          nullptr, nullptr, nullptr);
    _exit(rc == SQLITE_OK ? 0 : 3);  // no COMMIT
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  std::string error;
  auto found = store->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error);
  ASSERT_TRUE(found.has_value()) << error;
  EXPECT_EQ(found->id, good_id);
  EXPECT_EQ(found->tuned_by, "tester-good");
  ProfileStore::Health h = store->Check();
  EXPECT_TRUE(h.ok) << (h.problems.empty() ? "" : h.problems[0]);
  EXPECT_EQ(h.profiles, 1);
  PublishOne(store.get(), "after");  // the dead writer's lock is gone
}

// --- damaged and foreign files ---------------------------------------------

void ExpectOpenFails(const std::string& path, Access access, const std::string& expect_word) {
  std::string error;
  auto store = ProfileStore::Open(path, access, &error);
  if (store != nullptr) {
    // Damage that SQLite only notices on the first query must show there.
    store->List(&error);
  }
  ASSERT_FALSE(error.empty()) << path;
  ExpectClearError(error, path);
  EXPECT_NE(error.find(expect_word), std::string::npos) << error;
}

TEST(ProfileStoreTest, GarbageFileIsAClearError) {
  const std::string path = NewTempDir() + "/garbage.db";
  std::string bytes(8192, '\0');
  uint32_t x = 12345;
  for (char& c : bytes) {
    x = x * 1103515245 + 12345;
    c = static_cast<char>(x >> 16);
  }
  WriteFile(path, bytes);
  ExpectOpenFails(path, Access::kReadOnly, "not a SQLite database");
  ExpectOpenFails(path, Access::kReadWrite, "not a SQLite database");
  EXPECT_EQ(ReadFile(path), bytes);
}

TEST(ProfileStoreTest, TruncatedDatabaseIsAClearError) {
  const std::string dir = NewTempDir();
  {
    auto store = OpenOrDie(dir + "/good.db");
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 60; ++i) {
      ProfileRecord r = TestProfile("big" + std::to_string(i));
      r.profile_text += std::string(2000, '#');
      std::string error;
      ASSERT_TRUE(store->Publish(TestFingerprint(), &r, {}, &error)) << error;
    }
  }
  std::string bytes = ReadFile(dir + "/good.db");
  ASSERT_GT(bytes.size(), 100000u);
  WriteFile(dir + "/cut.db", bytes.substr(0, bytes.size() / 2));
  ExpectOpenFails(dir + "/cut.db", Access::kReadOnly, "damaged");
  ExpectOpenFails(dir + "/cut.db", Access::kReadWrite, "damaged");
}

TEST(ProfileStoreTest, EmptyFile) {
  const std::string path = NewTempDir() + "/empty.db";
  WriteFile(path, "");
  ExpectOpenFails(path, Access::kReadOnly, "empty");
  EXPECT_EQ(ReadFile(path), "");
  // Read-write initialises an empty file (an admin may create it to set its owner).
  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Check().schema_version, kSchemaVersion);
}

TEST(ProfileStoreTest, ForeignSchemaIsAClearError) {
  const std::string path = NewTempDir() + "/foreign.db";
  RawExec(path, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES('soup');");
  const std::string before = ReadFile(path);
  ExpectOpenFails(path, Access::kReadOnly, "recipes");
  ExpectOpenFails(path, Access::kReadWrite, "not a multilane profile database");
  EXPECT_EQ(ReadFile(path), before);
}

TEST(ProfileStoreTest, NewerSchemaIsAClearError) {
  const std::string path = NewTempDir() + "/newer.db";
  { OpenOrDie(path); }
  RawExec(path, "PRAGMA user_version=999");
  const std::string before = ReadFile(path);
  ExpectOpenFails(path, Access::kReadOnly, "newer multilane");
  ExpectOpenFails(path, Access::kReadWrite, "999");
  EXPECT_EQ(ReadFile(path), before);
}

TEST(ProfileStoreTest, MissingTableIsAClearError) {
  const std::string path = NewTempDir() + "/p.db";
  { OpenOrDie(path); }
  RawExec(path, "DROP TABLE measurements");
  ExpectOpenFails(path, Access::kReadOnly, "measurements");
}

TEST(ProfileStoreTest, BadPathsAreClearErrors) {
  const std::string dir = NewTempDir();
  WriteFile(dir + "/file", "x");
  ExpectOpenFails(dir + "/file/sub/p.db", Access::kReadWrite, "is a file, not a folder");
  ExpectOpenFails(dir + "/file/p.db", Access::kReadWrite, "is a file, not a folder");
  ExpectOpenFails(dir + "/missing.db", Access::kReadOnly, "no such file");
  struct stat st;
  EXPECT_NE(stat((dir + "/missing.db").c_str(), &st), 0);  // read-only creates nothing
  ExpectOpenFails(dir, Access::kReadWrite, "is a folder");
  std::string error;
  EXPECT_EQ(ProfileStore::Open("", Access::kReadOnly, &error), nullptr);
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(ProfileStore::Open(dir + "/missing.db", Access::kReadOnly, nullptr), nullptr);
}

// Runs `body` in a child process as user nobody (65534); returns its exit code.
// Root ignores file permissions, so permission tests drop root this way.
int RunAsNobody(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      _exit(90);
    }
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

TEST(ProfileStoreTest, UnreadableFileIsAClearError) {
  const std::string path = NewTempDir() + "/p.db";
  { OpenOrDie(path); }
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  if (geteuid() != 0) {
    ASSERT_EQ(chmod(path.c_str(), 0), 0);  // not root: drop our own read access
  }
  int rc = RunAsNobody([&] {
    std::string error;
    auto store = ProfileStore::Open(path, Access::kReadOnly, &error);
    if (store != nullptr) store->List(&error);
    if (error.find(path) == std::string::npos || error.find("ermission denied") == std::string::npos) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 1;
    }
    return 0;
  });
  if (rc == 90) GTEST_SKIP() << "cannot drop root to user nobody";
  EXPECT_EQ(rc, 0);
  chmod(path.c_str(), 0644);
}

// A reader who may not write the folder (a user reading the system database)
// can read it, with or without the -wal and -shm files left by the writer.
TEST(ProfileStoreTest, ReaderWithoutWriteAccessToTheFolder) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create a folder that another user cannot write";
  const std::string path = NewTempDir() + "/p.db";
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    PublishOne(store.get(), "admin");
  }
  auto read = [&] {
    std::string error;
    auto store = ProfileStore::Open(path, Access::kReadOnly, &error);
    if (store == nullptr || store->List(&error).size() != 1) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 1;
    }
    return 0;
  };
  EXPECT_EQ(RunAsNobody(read), 0);
  unlink((path + "-wal").c_str());
  unlink((path + "-shm").c_str());
  EXPECT_EQ(RunAsNobody(read), 0);
}

TEST(ProfileStoreTest, ReadOnlyUseDoesNotChangeTheFile) {
  const std::string path = NewTempDir() + "/p.db";
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    PublishOne(store.get(), "a");
    PublishOne(store.get(), "b", "", "gpu");
  }
  const std::string before = ReadFile(path);
  {
    auto store = OpenOrDie(path, Access::kReadOnly);
    ASSERT_NE(store, nullptr);
    std::string error;
    EXPECT_TRUE(store->Find(TestFingerprint().Key(), "gpu", "0.1.0", "Open MPI 4.1.5", &error));
    EXPECT_EQ(store->List(&error).size(), 2u);
    EXPECT_EQ(store->NodeTypes(&error).size(), 1u);
    EXPECT_FALSE(ExportProfiles(*store, &error).is_null());
    EXPECT_TRUE(store->Check().ok);
    ProfileRecord r = TestProfile();
    EXPECT_FALSE(store->Publish(TestFingerprint(), &r, {}, &error));
    int imported = 0;
    EXPECT_FALSE(ImportProfiles(*store, ExportProfiles(*store, nullptr), &imported, &error));
  }
  EXPECT_EQ(ReadFile(path), before);
}

TEST(ProfileStoreTest, ExportImportRoundTrips) {
  const std::string dir = NewTempDir();
  auto source = OpenOrDie(dir + "/a.db");
  ASSERT_NE(source, nullptr);
  PublishOne(source.get(), "x", "2026-01-01T00:00:00Z");
  PublishOne(source.get(), "y", "2026-01-02T00:00:00Z", "gpu", 3);
  std::string error;
  nlohmann::json doc = ExportProfiles(*source, &error);
  ASSERT_FALSE(doc.is_null()) << error;
  EXPECT_EQ(doc["format"], "multilane-profiles");
  EXPECT_EQ(doc["version"], 1);

  auto target = OpenOrDie(dir + "/b.db");
  ASSERT_NE(target, nullptr);
  int imported = -1;
  // Through text, as `multilane export > f; multilane import f` does.
  ASSERT_TRUE(ImportProfiles(*target, nlohmann::json::parse(doc.dump()), &imported, &error)) << error;
  EXPECT_EQ(imported, 2);
  nlohmann::json again = ExportProfiles(*target, &error);
  doc.erase("exported_at");
  again.erase("exported_at");
  EXPECT_EQ(doc, again);
  ASSERT_TRUE(ImportProfiles(*target, doc, &imported, &error)) << error;
  EXPECT_EQ(imported, 0);  // already there
  auto found = target->Find(TestFingerprint(3).Key(), "gpu", "0.1.0", "Open MPI 4.1.5", &error);
  ASSERT_TRUE(found.has_value()) << error;
  EXPECT_EQ(found->tuned_by, "tester-y");
  EXPECT_EQ(found->entries.size(), 3u);
}

// A profile whose entries carry pts= (issue 30): its text as `tune` writes it,
// with one entry without points, and the rows that go with it.
ProfileRecord ProfileWithPoints() {
  ProfileRecord r = TestProfile("pts");
  r.profile_text =
      "multilane-profile 1 tag=pts\n"
      "host 0 8K passthrough time_us=9.5 mpi_time_us=9.5 at=4K pts=1K:6.25/6.25/0.02,4K:9.5/9.5/0.015\n"
      "host 8K 2M hier time_us=372.7 mpi_time_us=429.1 at=1M "
      "pts=16K:37/45/0.06,64K:61/70/0.05,256K:140/170/0.04,1M:372.7/429.1/0.03\n"
      "host 2M inf lane lanes=2 time_us=4000 mpi_time_us=5000\n";
  ProfileEntryRow a;
  a.max_bytes = 8 << 10;
  a.algo = "passthrough";
  a.time_us = a.mpi_time_us = 9.5;
  ProfileEntryRow b;
  b.min_bytes = 8 << 10;
  b.max_bytes = 2 << 20;
  b.algo = "hier";
  b.time_us = 372.7;
  b.mpi_time_us = 429.1;
  ProfileEntryRow c;
  c.min_bytes = 2 << 20;
  c.algo = "lane";
  c.lanes = 2;
  c.time_us = 4000;
  c.mpi_time_us = 5000;
  r.entries = {a, b, c};
  return r;
}

// The points a profile text carries, per entry, as the report reads them.
std::vector<std::vector<mla::ProfilePoint>> PointsOf(const std::string& text) {
  mla::Profile p;
  std::string why;
  EXPECT_TRUE(p.Parse(text, &why)) << why;
  std::vector<std::vector<mla::ProfilePoint>> out;
  for (const mla::ProfileEntry& e : p.entries()) out.push_back(e.points);
  return out;
}

void ExpectSamePoints(const std::vector<std::vector<mla::ProfilePoint>>& a,
                      const std::vector<std::vector<mla::ProfilePoint>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size()) << "entry " << i;
    for (size_t j = 0; j < a[i].size(); ++j) {
      EXPECT_EQ(a[i][j].bytes, b[i][j].bytes) << i << "." << j;
      EXPECT_EQ(a[i][j].time_us, b[i][j].time_us) << i << "." << j;
      EXPECT_EQ(a[i][j].mpi_time_us, b[i][j].mpi_time_us) << i << "." << j;
      EXPECT_EQ(a[i][j].noise, b[i][j].noise) << i << "." << j;
    }
  }
}

// Issue 30: the points survive the store, `export` and `import` (through
// JSON text) and `resolve` byte for byte, and price the bin as
// before; a profile without points, stored beside it, still reads and prices
// by its one time.
TEST(ProfileStoreTest, PointsRoundTripThroughStoreExportImportAndResolve) {
  const std::string dir = NewTempDir();
  const ProfileRecord original = ProfileWithPoints();
  const auto points = PointsOf(original.profile_text);
  ASSERT_EQ(points.size(), 3u);
  ASSERT_EQ(points[1].size(), 4u);
  EXPECT_TRUE(points[2].empty());
  std::string error;
  {
    auto source = OpenOrDie(dir + "/a.db");
    ASSERT_NE(source, nullptr);
    ProfileRecord r = original;
    r.tuned_at = "2026-12-02T00:00:00Z";
    ASSERT_TRUE(source->Publish(TestFingerprint(), &r, {}, &error)) << error;
    PublishOne(source.get(), "old", "2026-01-01T00:00:00Z", "", 1);  // no pts=, another node type
    auto found = source->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error);
    ASSERT_TRUE(found.has_value()) << error;
    EXPECT_EQ(found->profile_text, original.profile_text);
    const nlohmann::json doc = ExportProfiles(*source, &error);
    ASSERT_FALSE(doc.is_null()) << error;
    auto target = OpenOrDie(dir + "/b.db");
    ASSERT_NE(target, nullptr);
    int imported = -1;
    ASSERT_TRUE(ImportProfiles(*target, nlohmann::json::parse(doc.dump(2)), &imported, &error)) << error;
    EXPECT_EQ(imported, 2);
  }
  std::vector<std::string> notes;
  auto resolved = ResolveProfile({dir + "/b.db"}, TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &notes);
  ASSERT_TRUE(resolved.has_value());
  EXPECT_EQ(resolved->profile_text, original.profile_text);
  ExpectSamePoints(PointsOf(resolved->profile_text), points);
  mla::Profile p;
  ASSERT_TRUE(p.Parse(resolved->profile_text, &error)) << error;
  const mla::ProfileEntry* e = p.Lookup(mla::MemKind::kHost, 16 << 10, 0);
  ASSERT_NE(e, nullptr);
  const mla::Price price = mla::PriceEntry(*e, 24576);
  EXPECT_EQ(price.basis, mla::PriceBasis::kInterpolated);
  EXPECT_EQ(price.lo_bytes, 16u << 10);
  EXPECT_EQ(price.hi_bytes, 64u << 10);

  // The profile without points, from the imported database.
  auto old = ResolveProfile({dir + "/b.db"}, TestFingerprint(1).Key(), "", "0.1.0", "Open MPI 4.1.5", &notes);
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->profile_text, TestProfile("old").profile_text);
  ASSERT_TRUE(p.Parse(old->profile_text, &error)) << error;
  const mla::ProfileEntry* lane = p.Lookup(mla::MemKind::kHost, 1 << 20, 0);
  ASSERT_NE(lane, nullptr);
  EXPECT_TRUE(lane->points.empty());
  EXPECT_EQ(mla::PriceEntry(*lane, 1 << 20).basis, mla::PriceBasis::kEntry);
  EXPECT_DOUBLE_EQ(mla::PriceEntry(*lane, 1 << 20).time_us, 812);
}

TEST(ProfileStoreTest, MalformedImportWritesNothing) {
  const std::string dir = NewTempDir();
  auto source = OpenOrDie(dir + "/a.db");
  ASSERT_NE(source, nullptr);
  PublishOne(source.get(), "x");
  std::string error;
  const nlohmann::json good = ExportProfiles(*source, &error);
  auto target = OpenOrDie(dir + "/b.db");
  ASSERT_NE(target, nullptr);

  struct Case {
    std::function<void(nlohmann::json*)> damage;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](nlohmann::json* d) { *d = nlohmann::json::array(); }, "not a JSON object"},
      {[](nlohmann::json* d) { (*d)["format"] = "something-else"; }, "format"},
      {[](nlohmann::json* d) { (*d)["version"] = 2; }, "version"},
      {[](nlohmann::json* d) { d->erase("profiles"); }, "profiles"},
      {[](nlohmann::json* d) { (*d)["node_types"][0]["key"] = "0000000000000000"; }, "node_types[0].key"},
      {[](nlohmann::json* d) { (*d)["node_types"][0]["fingerprint"]["cores"] = -1; },
       "node_types[0].fingerprint.cores"},
      {[](nlohmann::json* d) { (*d)["profiles"][0]["entries"][2]["mem_kind"] = "gpu"; },
       "profiles[0].entries[2].mem_kind"},
      {[](nlohmann::json* d) { (*d)["profiles"][0]["entries"][0]["max_bytes"] = "big"; },
       "profiles[0].entries[0].max_bytes"},
      {[](nlohmann::json* d) { (*d)["profiles"][0].erase("tuned_at"); }, "profiles[0].tuned_at"},
      // A valid profile first, then one whose node type is unknown: neither is written.
      {[](nlohmann::json* d) {
         nlohmann::json extra = (*d)["profiles"][0];
         extra["node_type_key"] = "ffffffffffffffff";
         (*d)["profiles"].push_back(extra);
       },
       "profiles[1].node_type_key"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    nlohmann::json doc = good;
    cases[i].damage(&doc);
    int imported = -1;
    EXPECT_FALSE(ImportProfiles(*target, doc, &imported, &error)) << i;
    EXPECT_NE(error.find(cases[i].field), std::string::npos) << i << ": " << error;
    EXPECT_EQ(imported, 0);
    EXPECT_TRUE(target->List(&error).empty()) << i;
    EXPECT_TRUE(target->NodeTypes(&error).empty()) << i;
  }
}

// passthrough mpi=NAME (schema 2): the row keeps the system's algorithm
// through the store, export and import; the text and the rows must agree on
// it; a bad name or one on another algorithm is refused on import.
ProfileRecord WithSystemAlgorithm() {
  ProfileRecord r = TestProfile("sys");
  r.profile_text =
      "multilane-profile 1 tag=sys\nhost 0 256K passthrough mpi=ring\n"
      "host 256K inf lane lanes=2 time_us=812 mpi_time_us=1304\n"
      "device 1M inf split chunk=4M transport=nccl ppg=4\n";
  r.entries[0].system_algorithm = "ring";
  return r;
}

TEST(ProfileStoreTest, SystemAlgorithmRoundTripsAndIsChecked) {
  const std::string dir = NewTempDir();
  std::string error;
  auto source = OpenOrDie(dir + "/a.db");
  ASSERT_NE(source, nullptr);
  ProfileRecord r = WithSystemAlgorithm();
  r.tuned_at = "2026-12-03T00:00:00Z";
  ASSERT_TRUE(source->Publish(TestFingerprint(), &r, {}, &error)) << error;
  auto found = source->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error);
  ASSERT_TRUE(found.has_value()) << error;
  ASSERT_EQ(found->entries.size(), 3u);
  EXPECT_EQ(found->entries[0].system_algorithm, "ring");
  EXPECT_EQ(found->entries[0].ChoiceWords(), "passthrough mpi=ring");
  nlohmann::json doc = ExportProfiles(*source, &error);
  ASSERT_FALSE(doc.is_null()) << error;
  auto target = OpenOrDie(dir + "/b.db");
  ASSERT_NE(target, nullptr);
  int imported = -1;
  ASSERT_TRUE(ImportProfiles(*target, nlohmann::json::parse(doc.dump()), &imported, &error)) << error;
  auto back = target->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(back->entries, found->entries);

  // The text says mpi=ring, the row does not: they disagree.
  ProfileRecord bad = WithSystemAlgorithm();
  bad.entries[0].system_algorithm.clear();
  bad.tuned_at = "2026-12-03T00:00:01Z";
  EXPECT_FALSE(source->Publish(TestFingerprint(), &bad, {}, &error));
  EXPECT_NE(error.find("host 0 256K passthrough', which profile_text does not"), std::string::npos) << error;
  for (const char* mpi : {"Ring", "ring;drop"}) {
    nlohmann::json wrong = doc;
    wrong["profiles"][0]["entries"][0]["mpi"] = mpi;
    EXPECT_FALSE(ImportProfiles(*target, wrong, &imported, &error)) << mpi;
    EXPECT_NE(error.find("mpi:"), std::string::npos) << error;
  }
  nlohmann::json on_lane = doc;
  on_lane["profiles"][0]["entries"][1]["mpi"] = "ring";
  EXPECT_FALSE(ImportProfiles(*target, on_lane, &imported, &error));
  EXPECT_NE(error.find("only with algo"), std::string::npos) << error;
}

// The store is the one place that checks a profile's text against its rows:
// every record read back says whether they disagree, so that `show` and
// `doctor` only report it.
TEST(ProfileStoreTest, ReadBackSaysWhetherTextAndEntriesDisagree) {
  const std::string path = NewTempDir() + "/edited.db";
  std::string error;
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    PublishOne(store.get(), "edited");
    const std::vector<ProfileRecord> listed = store->List(&error);
    ASSERT_EQ(listed.size(), 1u) << error;
    EXPECT_EQ(listed[0].disagreement, "");
  }
  RawExec(path, "UPDATE profile_entries SET algo = 'hier' WHERE algo = 'lane'");
  auto store = OpenOrDie(path, Access::kReadOnly);
  ASSERT_NE(store, nullptr);
  const std::vector<ProfileRecord> listed = store->List(&error);
  ASSERT_EQ(listed.size(), 1u) << error;
  EXPECT_NE(listed[0].disagreement.find("the text and the entries disagree"), std::string::npos)
      << listed[0].disagreement;
  auto found = store->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error);
  ASSERT_TRUE(found.has_value()) << error;
  EXPECT_EQ(found->disagreement, listed[0].disagreement);
}

// A database of schema 1 (before mpi=NAME), as an older multilane left it:
// read-only it still serves its profiles (a user's job never migrates the
// system database); read-write it is brought to the current schema.
TEST(ProfileStoreTest, SchemaOneIsReadAndMigrated) {
  const std::string path = NewTempDir() + "/old.db";
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    PublishOne(store.get(), "old");
  }
  RawExec(path,
          "DROP TABLE job_history; ALTER TABLE profile_entries DROP COLUMN system_algorithm; PRAGMA user_version=1;");
  std::string error;
  {
    auto ro = OpenOrDie(path, Access::kReadOnly);
    ASSERT_NE(ro, nullptr);
    EXPECT_EQ(ro->Check().schema_version, 1);
    auto found = ro->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error);
    ASSERT_TRUE(found.has_value()) << error;
    EXPECT_EQ(found->entries, TestProfile("old").entries);
  }
  auto rw = OpenOrDie(path);
  ASSERT_NE(rw, nullptr);
  EXPECT_EQ(rw->Check().schema_version, kSchemaVersion);
  ProfileRecord r = WithSystemAlgorithm();
  r.tuned_at = "2027-01-01T00:00:00Z";
  ASSERT_TRUE(rw->Publish(TestFingerprint(), &r, {}, &error)) << error;
  auto found = rw->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error);
  ASSERT_TRUE(found.has_value()) << error;
  EXPECT_EQ(found->entries[0].system_algorithm, "ring");
}

mla::JobRun MakeRun(const std::string& key, const std::string& started, double wall = 10) {
  mla::JobRun r;
  r.job_key = key;
  r.run_id = "multilane-report-local-" + started;
  r.job_name = "train";
  r.job_id = "local";
  r.started_utc = started;
  r.nodes = 2;
  r.ranks = 8;
  r.gpus = 4;
  r.ranks_per_gpu = 2;
  r.algorithms = "host 4M lane";
  r.wall_s = wall;
  r.compute_s = wall * 0.6;
  r.allreduce_s = wall * 0.3;
  r.wait_s = wall * 0.1;
  r.energy_j = 1234.5;
  r.histogram_json = "[[\"host\",4194304,100,419430400,3.0]]";
  return r;
}

// The job history (issue 29): a run is kept whole, once, and read back as it
// was; the oldest beyond the bound per key go; forgetting takes a key or all.
TEST(ProfileStoreTest, JobHistoryRecordsListsBoundsAndForgets) {
  auto store = OpenOrDie(NewTempDir() + "/h.db");
  std::string error;
  bool added = false;
  mla::JobRun a = MakeRun("train:0123456789ab", "2026-12-01T10:00:00Z", 100);
  a.energy_j.reset();
  ASSERT_TRUE(store->RecordJobRun(a, &added, &error)) << error;
  EXPECT_TRUE(added);
  ASSERT_TRUE(store->RecordJobRun(a, &added, &error)) << error;
  EXPECT_FALSE(added);  // the same run again: nothing new
  std::vector<mla::JobRun> runs = store->JobRuns("", &error);
  ASSERT_EQ(runs.size(), 1u) << error;
  EXPECT_EQ(runs[0].job_key, a.job_key);
  EXPECT_EQ(runs[0].histogram_json, a.histogram_json);
  EXPECT_DOUBLE_EQ(runs[0].wall_s, 100);
  EXPECT_FALSE(runs[0].energy_j.has_value());
  EXPECT_FALSE(runs[0].recorded_utc.empty());
  for (int i = 0; i < kHistoryRunsPerKey + 5; ++i) {
    char started[32];
    std::snprintf(started, sizeof started, "2026-12-02T10:%02d:00Z", i);
    ASSERT_TRUE(store->RecordJobRun(MakeRun("other", started, i + 1), &added, &error)) << error;
  }
  // A run older than the kept ones goes at once, and is not counted as added.
  ASSERT_TRUE(store->RecordJobRun(MakeRun("other", "2026-12-02T09:00:00Z"), &added, &error)) << error;
  EXPECT_FALSE(added);
  runs = store->JobRuns("other", &error);
  ASSERT_EQ(runs.size(), static_cast<size_t>(kHistoryRunsPerKey));
  EXPECT_EQ(runs.front().started_utc, "2026-12-02T10:05:00Z");  // the 5 oldest went
  EXPECT_EQ(runs.back().started_utc, "2026-12-02T10:24:00Z");
  ASSERT_TRUE(*store->JobRuns("other", &error).back().energy_j == 1234.5);
  EXPECT_EQ(store->JobRuns("", &error).size(), static_cast<size_t>(kHistoryRunsPerKey) + 1);
  int forgotten = 0;
  ASSERT_TRUE(store->ForgetJobRuns("train:0123456789ab", &forgotten, &error)) << error;
  EXPECT_EQ(forgotten, 1);
  EXPECT_TRUE(store->JobRuns("train:0123456789ab", &error).empty());
  ASSERT_TRUE(store->ForgetJobRuns("", &forgotten, &error)) << error;
  EXPECT_EQ(forgotten, kHistoryRunsPerKey);
  EXPECT_TRUE(store->JobRuns("", &error).empty());
}

// Beyond kHistoryRunsInAll runs in all, the oldest go first, whatever their
// key: 51 keys of 20 runs each keep the newest 1000, and the oldest key's
// runs are the ones gone.
TEST(ProfileStoreTest, JobHistoryKeepsTheNewestRunsInAll) {
  auto store = OpenOrDie(NewTempDir() + "/h.db");
  std::string error;
  bool added = false;
  const int keys = kHistoryRunsInAll / kHistoryRunsPerKey + 1;
  for (int n = 0; n < keys * kHistoryRunsPerKey; ++n) {
    char key[16], started[32];
    std::snprintf(key, sizeof key, "k%02d", n / kHistoryRunsPerKey);
    std::snprintf(started, sizeof started, "2026-12-01T%02d:%02d:%02dZ", n / 3600, n / 60 % 60, n % 60);
    ASSERT_TRUE(store->RecordJobRun(MakeRun(key, started), &added, &error)) << error;
  }
  EXPECT_EQ(store->JobRuns("", &error).size(), static_cast<size_t>(kHistoryRunsInAll)) << error;
  EXPECT_TRUE(store->JobRuns("k00", &error).empty());
  EXPECT_EQ(store->JobRuns("k01", &error).size(), static_cast<size_t>(kHistoryRunsPerKey));
  char last[16];
  std::snprintf(last, sizeof last, "k%02d", keys - 1);
  EXPECT_EQ(store->JobRuns(last, &error).size(), static_cast<size_t>(kHistoryRunsPerKey));
}

TEST(ProfileStoreTest, JobHistoryRefusesBadRunsAndReadOnlyStores) {
  const std::string path = NewTempDir() + "/h.db";
  auto store = OpenOrDie(path);
  std::string error;
  bool added = true;
  mla::JobRun bad = MakeRun("two words", "2026-12-01T10:00:00Z");
  EXPECT_FALSE(store->RecordJobRun(bad, &added, &error));
  EXPECT_NE(error.find("job_key must be"), std::string::npos) << error;
  EXPECT_FALSE(added);
  bad = MakeRun("k", "2026-12-01T10:00:00Z", -1);
  EXPECT_FALSE(store->RecordJobRun(bad, &added, &error));
  EXPECT_NE(error.find("finite and not negative"), std::string::npos) << error;
  bad = MakeRun("k", "");
  EXPECT_FALSE(store->RecordJobRun(bad, &added, &error));
  EXPECT_NE(error.find("started_utc is empty"), std::string::npos) << error;
  store.reset();
  auto ro = OpenOrDie(path, Access::kReadOnly);
  EXPECT_FALSE(ro->RecordJobRun(MakeRun("k", "2026-12-01T10:00:00Z"), &added, &error));
  EXPECT_NE(error.find("read-only"), std::string::npos) << error;
  int forgotten = 0;
  EXPECT_FALSE(ro->ForgetJobRuns("", &forgotten, &error));
}

// A schema-2 database (before the history) still opens read-only; read-write
// it gains the history table.
TEST(ProfileStoreTest, SchemaTwoGainsTheHistory) {
  const std::string path = NewTempDir() + "/two.db";
  {
    auto store = OpenOrDie(path);
    PublishOne(store.get(), "two");
  }
  RawExec(path, "DROP TABLE job_history; PRAGMA user_version=2;");
  std::string error;
  {
    auto ro = OpenOrDie(path, Access::kReadOnly);
    ASSERT_NE(ro, nullptr);
    EXPECT_EQ(ro->Check().schema_version, 2);
    EXPECT_TRUE(ro->Find(TestFingerprint().Key(), "", "0.1.0", "Open MPI 4.1.5", &error).has_value()) << error;
    EXPECT_TRUE(ro->JobRuns("", &error).empty());  // no history yet: empty, not an error
    EXPECT_TRUE(error.empty()) << error;
  }
  auto rw = OpenOrDie(path);
  EXPECT_EQ(rw->Check().schema_version, kSchemaVersion);
  bool added = false;
  ASSERT_TRUE(rw->RecordJobRun(MakeRun("k", "2026-12-01T10:00:00Z"), &added, &error)) << error;
  EXPECT_TRUE(added);
}

}  // namespace
}  // namespace mldb
