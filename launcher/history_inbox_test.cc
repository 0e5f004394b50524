// history_inbox_test.cc: what the history inbox does with entries that are
// not job report files of the user's (history_inbox.h).
#include "launcher/history_inbox.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace multilane {
namespace {

bool IsA(const std::string& path, mode_t kind) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

// A private inbox holding a FIFO and a link under a report's name (the link
// points to a file outside, which must stay untouched and unread).
std::string PlantedInbox(std::string* outside) {
  std::string dir = testing::TempDir() + "/mla_inbox_XXXXXX";
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  const std::string inbox = dir + "/history";
  EXPECT_EQ(MakeInbox(inbox), "");
  *outside = dir + "/secret.json";
  std::ofstream(*outside) << "{}";
  EXPECT_EQ(mkfifo((inbox + "/multilane-report-fifo.json").c_str(), 0600), 0);
  EXPECT_EQ(symlink(outside->c_str(), (inbox + "/multilane-report-link.json").c_str()), 0);
  std::ofstream(inbox + "/multilane-report-bad.json") << "{";
  return inbox;
}

// Issue 41 item 10: a planted FIFO or link was named again by every
// `multilane run`, `history` and `report`.  It is moved aside once (never
// followed, never opened: a FIFO would block) and named in that run only.
TEST(HistoryInbox, PlantedFifoAndLinkAreNamedOnceAndMovedAside) {
  std::string outside;
  const std::string inbox = PlantedInbox(&outside);
  std::vector<std::string> notes;
  EXPECT_TRUE(PendingRuns(inbox, &notes).empty());  // what `report` and `resolve` read
  ASSERT_EQ(notes.size(), 3u);
  // The link and the FIFO first (PendingReports), then the file it could not read.
  EXPECT_NE(notes[2].find("multilane-report-bad.json: not a complete JSON file (truncated?)"), std::string::npos)
      << notes[2];
  EXPECT_NE(notes[2].find("left out of the history (renamed to multilane-report-bad.json.ignored)"), std::string::npos)
      << notes[2];
  EXPECT_NE(notes[0].find("multilane-report-fifo.json: a FIFO (named pipe), not a job report file of yours; left "
                          "out of the history (renamed to multilane-report-fifo.json.ignored"),
            std::string::npos)
      << notes[0];
  EXPECT_NE(notes[1].find("multilane-report-link.json: a link, not a job report file of yours"), std::string::npos)
      << notes[1];
  EXPECT_TRUE(IsA(inbox + "/multilane-report-fifo.json.ignored", S_IFIFO));
  EXPECT_TRUE(IsA(inbox + "/multilane-report-link.json.ignored", S_IFLNK));
  EXPECT_TRUE(IsA(inbox + "/multilane-report-bad.json.ignored", S_IFREG));
  EXPECT_TRUE(IsA(outside, S_IFREG)) << "the link's target stays where it was";

  notes.clear();
  EXPECT_TRUE(PendingRuns(inbox, &notes).empty());
  EXPECT_TRUE(notes.empty()) << "named again: " << notes[0];
  EXPECT_TRUE(PendingReports(inbox, &notes).empty());
  EXPECT_TRUE(notes.empty()) << "named again: " << notes[0];
}

// `multilane history` (RecordInbox) on a real database: the same, once.
TEST(HistoryInbox, RecordInboxNamesAPlantedEntryOnce) {
  std::string outside;
  const std::string inbox = PlantedInbox(&outside);
  std::string error;
  auto store = mldb::ProfileStore::Open(inbox + "/../user.db", mldb::ProfileStore::Access::kReadWrite, &error);
  ASSERT_TRUE(store) << error;
  InboxResult first, second;
  ASSERT_TRUE(RecordInbox(inbox, store.get(), &first, &error)) << error;
  EXPECT_EQ(first.notes.size(), 3u);
  EXPECT_EQ(first.recorded, 0);
  ASSERT_TRUE(RecordInbox(inbox, store.get(), &second, &error)) << error;
  EXPECT_TRUE(second.notes.empty()) << "named again: " << second.notes[0];
}

}  // namespace
}  // namespace multilane
