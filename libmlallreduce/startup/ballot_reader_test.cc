// ballot_reader_test.cc: the whole read of the ballots within one bound
// (ballot_reader.h), with PMIx calls of the test's own: the ranks whose
// ballot the local store lacks are read all at once, never one after another.
#include "libmlallreduce/startup/ballot_reader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace mla::lib {
namespace {

// The fake PMIx: ranks below kLocal have their ballot in the local store;
// of the others, the even ones published one (found by the direct read), the
// odd ones none (the direct read times out).  The direct reads are answered
// from another thread, only once all expected are in flight (or after 5 s,
// so that a reader that waits for each answer in turn is not stuck forever).
constexpr int kSize = 12, kLocal = 4;
constexpr size_t kExpected = kSize - kLocal;

struct Fake {
  std::mutex mutex;
  std::condition_variable cv;
  struct Asked {
    uint32_t rank;
    bool has_timeout;
    pmix::ValueCbFn cb;
    void* cbdata;
  };
  std::vector<Asked> asked;
  size_t most_in_flight = 0, in_flight = 0;
  int blocking_direct = 0;
};
Fake* g_fake = nullptr;

std::string TextFor(uint32_t rank) { return "ballot of " + std::to_string(rank); }

pmix::Value* NewValue(const std::string& text) {
  auto* v = static_cast<pmix::Value*>(std::calloc(1, sizeof(pmix::Value)));
  v->type = pmix::kTypeString;
  v->data.string = strdup(text.c_str());
  return v;
}

bool Optional(const pmix::Info info[], size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (std::strcmp(info[i].key, pmix::kOptional) == 0) return true;
  return false;
}

int FakeGet(const pmix::Proc* proc, const char*, const pmix::Info info[], size_t n, pmix::Value** value) {
  if (!Optional(info, n)) ++g_fake->blocking_direct;  // a direct read that blocks: not allowed
  if (proc->rank >= static_cast<uint32_t>(kLocal)) return pmix::kErrNotFound;
  *value = NewValue(TextFor(proc->rank));
  return pmix::kSuccess;
}

int FakeGetNb(const pmix::Proc* proc, const char*, const pmix::Info info[], size_t n, pmix::ValueCbFn cb,
              void* cbdata) {
  bool timeout = false;
  for (size_t i = 0; i < n; ++i) timeout |= std::strcmp(info[i].key, pmix::kTimeout) == 0;
  std::lock_guard<std::mutex> lock(g_fake->mutex);
  g_fake->asked.push_back({proc->rank, timeout, cb, cbdata});
  g_fake->most_in_flight = std::max(g_fake->most_in_flight, ++g_fake->in_flight);
  g_fake->cv.notify_all();
  return pmix::kSuccess;
}

// Answers the direct reads once kExpected are in flight (or after 5 s, so
// that a reader that waits for each answer in turn is not stuck forever:
// then one at a time), from this thread, as PMIx's progress thread does.
void Answer() {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (size_t answered = 0; answered < kExpected && std::chrono::steady_clock::now() < give_up;) {
    std::vector<Fake::Asked> batch;
    {
      std::unique_lock<std::mutex> lock(g_fake->mutex);
      g_fake->cv.wait_for(lock, std::chrono::seconds(5), [] { return g_fake->asked.size() == kExpected; });
      batch.assign(g_fake->asked.begin() + static_cast<long>(answered), g_fake->asked.end());
      answered += batch.size();
      g_fake->in_flight -= batch.size();
    }
    for (const Fake::Asked& a : batch) {
      pmix::Value value{};
      value.type = pmix::kTypeString;
      std::string text = TextFor(a.rank);
      value.data.string = text.data();
      if (a.rank % 2 == 0)
        a.cb(pmix::kSuccess, &value, a.cbdata);
      else
        a.cb(pmix::kErrNotFound, nullptr, a.cbdata);
    }
  }
}

TEST(BallotReader, ReadsTheMissingBallotsAllAtOnceEachBounded) {
  Fake fake;
  g_fake = &fake;
  std::thread answering(Answer);
  int counted = 0;
  BallotReads reads{FakeGet, FakeGetNb, {}, &counted};
  bool complete = false;
  const auto ballots = ReadBallots(reads, "key", 0, kSize, &complete);
  answering.join();
  EXPECT_TRUE(complete);
  EXPECT_EQ(counted, kSize) << "each ballot is one value read, from its node or not";
  EXPECT_EQ(fake.blocking_direct, 0) << "a ballot was read by a blocking direct PMIx_Get";
  EXPECT_EQ(fake.most_in_flight, kExpected) << "the direct reads were not all in flight at once";
  ASSERT_EQ(fake.asked.size(), kExpected);
  for (const auto& a : fake.asked) EXPECT_TRUE(a.has_timeout) << "rank " << a.rank << " read without PMIX_TIMEOUT";
  ASSERT_EQ(ballots.size(), static_cast<size_t>(kSize));
  for (uint32_t r = 0; r < static_cast<uint32_t>(kSize); ++r) {
    if (r < static_cast<uint32_t>(kLocal) || r % 2 == 0) {
      EXPECT_EQ(ballots[r], TextFor(r)) << "rank " << r;
    } else {
      EXPECT_FALSE(ballots[r].has_value()) << "rank " << r;
    }
  }
  g_fake = nullptr;
}

// A waiting read that PMIx answers "not found" early (the rank committed
// something else first) is asked again until the value comes: one value read.
int g_early_answers = 0;
int EarlyThenValue(const pmix::Proc*, const char*, const pmix::Info[], size_t, pmix::Value** value) {
  if (g_early_answers-- > 0) return pmix::kErrNotFound;
  *value = NewValue("summary");
  return pmix::kSuccess;
}

TEST(BallotReader, AWaitEndedEarlyIsAskedAgain) {
  g_early_answers = 3;
  int counted = 0;
  const BallotReads reads{EarlyThenValue, nullptr, {}, &counted};
  EXPECT_EQ(ReadPublished(reads, "key", 1, 5), "summary");
  EXPECT_EQ(counted, 1);
}

}  // namespace
}  // namespace mla::lib
