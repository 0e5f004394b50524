#include "db/profile_check.h"

#include <gtest/gtest.h>

#include <tuple>

#include "db/profile_json.h"
#include "db/test_util.h"

namespace mldb {
namespace {

std::string Check(const std::string& text, const std::vector<ProfileEntryRow>& entries) {
  std::string error;
  return CheckProfileText(text, entries, &error) ? "" : error;
}

// A host entry of `algo` from `from` to `to` bytes, the rest default.
ProfileEntryRow Row(const std::string& algo, int64_t from, std::optional<int64_t> to) {
  ProfileEntryRow e;
  std::tie(e.algo, e.min_bytes, e.max_bytes) = std::make_tuple(algo, from, to);
  return e;
}

TEST(ProfileCheck, TextAndEntriesThatAgreePass) {
  const ProfileRecord r = testing_util::TestProfile();
  EXPECT_EQ(Check(r.profile_text, r.entries), "");
  // Order does not matter, nor "auto" against "" for the transport.
  std::vector<ProfileEntryRow> reversed(r.entries.rbegin(), r.entries.rend());
  EXPECT_EQ(Check(r.profile_text, reversed), "");
  ProfileEntryRow a = Row("hier", 0, std::nullopt);
  a.transport = "auto";
  a.time_us = 12.345678;
  EXPECT_EQ(Check("multilane-profile 1\nhost 0 inf hier time_us=12.3457\n", {a}), "");
}

// Issue 15 item 5: import accepted profiles the library rejects (algorithm
// `ring`, overlapping ranges), and text that said something else than the
// entries `show` lists.
TEST(ProfileCheck, TextTheLibraryRejectsFails) {
  const std::string ring = Check("multilane-profile 1\nhost 0 inf ring\n", {Row("ring", 0, std::nullopt)});
  EXPECT_NE(ring.find("profile_text: the library rejects it: entry 2: unknown algorithm 'ring'"), std::string::npos)
      << ring;
  const std::string overlap = Check("multilane-profile 1\nhost 0 2M lane\nhost 1M inf hier\n",
                                    {Row("lane", 0, 2 << 20), Row("hier", 1 << 20, std::nullopt)});
  EXPECT_NE(overlap.find("size range overlaps entry 2"), std::string::npos) << overlap;
}

TEST(ProfileCheck, DisagreementIsNamed) {
  const std::string text = "multilane-profile 1\nhost 0 1M lane lanes=2\nhost 1M inf hier\n";
  ProfileEntryRow lane = Row("lane", 0, 1 << 20);
  lane.lanes = 2;
  const ProfileEntryRow hier = Row("hier", 1 << 20, std::nullopt);
  EXPECT_EQ(Check(text, {lane, hier}), "");
  ProfileEntryRow three = lane;
  three.lanes = 3;
  const std::string e1 = Check(text, {three, hier});
  EXPECT_NE(e1.find("the text and the entries disagree"), std::string::npos) << e1;
  EXPECT_NE(e1.find("'host 0 1M lane lanes="), std::string::npos) << e1;
  const std::string e2 = Check(text, {lane});
  EXPECT_NE(e2.find("profile_text has 'host 1M inf hier', which no entry has"), std::string::npos) << e2;
  const std::string e3 = Check(text, {lane, hier, Row("split", 0, std::nullopt)});
  EXPECT_NE(e3.find("an entry says"), std::string::npos) << e3;
  ProfileEntryRow slow = hier;
  slow.time_us = 99;
  EXPECT_EQ(Check(text, {lane, slow}), "") << "a time known on one side only is not compared";
  EXPECT_NE(
      Check("multilane-profile 1\nhost 0 1M lane lanes=2\nhost 1M inf hier time_us=5\n", {lane, slow}).find("times"),
      std::string::npos);
}

// Publish and Import run the check (the store keeps no profile whose text
// and entries disagree).
TEST(ProfileCheck, PublishAndImportRefuseADisagreement) {
  const std::string dir = testing_util::NewTempDir();
  std::string error;
  auto store = ProfileStore::Open(dir + "/p.db", ProfileStore::Access::kReadWrite, &error);
  ASSERT_TRUE(store) << error;
  ProfileRecord r = testing_util::TestProfile();
  r.entries[1].lanes = 3;
  EXPECT_FALSE(store->Publish(testing_util::TestFingerprint(), &r, {}, &error));
  EXPECT_NE(error.find("cannot publish an invalid profile: profile.profile_text has 'host 256K inf lane lanes=2', "
                       "which no entry has"),
            std::string::npos)
      << error;
  ProfileRecord good = testing_util::TestProfile();
  ASSERT_TRUE(store->Publish(testing_util::TestFingerprint(), &good, {}, &error)) << error;
  nlohmann::json doc = ExportProfiles(*store, &error);
  ASSERT_FALSE(doc.is_null()) << error;
  doc["profiles"][0]["profile_text"] = "multilane-profile 1\nhost 0 inf ring\n";
  doc["profiles"][0]["tuned_at"] = "2099-01-01T00:00:00Z";
  int imported = -1;
  EXPECT_FALSE(ImportProfiles(*store, doc, &imported, &error));
  EXPECT_NE(error.find("profiles[0].profile_text: the library rejects it: entry 2: unknown algorithm 'ring'"),
            std::string::npos)
      << error;
  EXPECT_EQ(imported, 0);
}

}  // namespace
}  // namespace mldb
