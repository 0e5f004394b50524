// ballot_reader.cc: every rank's ballot within one bound (ballot_reader.h).
#include "libmlallreduce/startup/ballot_reader.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>

namespace mla::lib {
namespace {

constexpr size_t kMaxText = 64 * 1024;

// A PMIX_TIMEOUT entry: the operation gives up after `seconds`.
pmix::Info Timeout(int seconds) {
  pmix::Info info{};
  std::strncpy(info.key, pmix::kTimeout, pmix::kMaxKeyLen);
  info.value.type = pmix::kTypeInt;
  info.value.data.integer = seconds;
  return info;
}

// A boolean entry `key` set to true (PMIX_OPTIONAL).
pmix::Info Flag(const char* key) {
  pmix::Info info{};
  std::strncpy(info.key, key, pmix::kMaxKeyLen);
  info.value.type = pmix::kTypeBool;
  info.value.data.flag = true;
  return info;
}

std::optional<std::string> TextOf(const pmix::Value* value) {
  if (value == nullptr || value->type != pmix::kTypeString || value->data.string == nullptr) return std::nullopt;
  const size_t n = strnlen(value->data.string, kMaxText + 1);
  if (n > kMaxText) return std::nullopt;
  return std::string(value->data.string, n);
}

pmix::Proc Peer(const pmix::Proc& self, int rank) {
  pmix::Proc peer{};
  std::memcpy(peer.nspace, self.nspace, sizeof peer.nspace);
  peer.rank = static_cast<uint32_t>(rank);
  return peer;
}

// One blocking PMIx_Get of a text, counted.
std::optional<std::string> Get(const BallotReads& pmix, const pmix::Proc& proc, const char* key, const pmix::Info* info,
                               size_t ninfo) {
  if (pmix.reads != nullptr) ++*pmix.reads;
  pmix::Value* value = nullptr;
  if (pmix.get(&proc, key, info, ninfo, &value) != pmix::kSuccess || value == nullptr) return std::nullopt;
  std::optional<std::string> text = TextOf(value);
  if (value->type == pmix::kTypeString) std::free(value->data.string);  // what PMIX_VALUE_RELEASE does
  std::free(value);
  return text;
}

// One rank's ballot from the local store only (PMIX_OPTIONAL: no request to
// another node).
std::optional<std::string> ReadLocal(const BallotReads& pmix, const char* key, int rank) {
  const pmix::Proc peer = Peer(pmix.self, rank);
  const pmix::Info local_only[] = {Timeout(kBallotReadSeconds), Flag(pmix::kOptional)};
  return Get(pmix, peer, key, local_only, std::size(local_only));
}

// The direct reads in flight, shared with PMIx's progress thread, which
// answers each through Arrived; kept alive by the requests until the last
// answer, even when the reader stopped waiting.
struct Pending {
  std::mutex mutex;
  std::condition_variable done;
  size_t outstanding = 0;
  std::vector<std::optional<std::string>> texts;
};

struct Request {
  std::shared_ptr<Pending> pending;
  size_t index;
};

void Arrived(int status, pmix::Value* value, void* cbdata) {
  std::unique_ptr<Request> request(static_cast<Request*>(cbdata));
  Pending& p = *request->pending;
  std::lock_guard<std::mutex> lock(p.mutex);
  if (status == pmix::kSuccess) p.texts[request->index] = TextOf(value);
  if (--p.outstanding == 0) p.done.notify_all();
}

}  // namespace

std::vector<std::optional<std::string>> ReadBallots(const BallotReads& pmix, const char* key, int first, int count,
                                                    bool* complete) {
  *complete = true;
  std::vector<std::optional<std::string>> ballots(static_cast<size_t>(count > 0 ? count : 0));
  std::vector<int> missing;
  for (int i = 0; i < count; ++i) {
    ballots[static_cast<size_t>(i)] = ReadLocal(pmix, key, first + i);
    if (!ballots[static_cast<size_t>(i)]) missing.push_back(i);
  }
  if (missing.empty() || pmix.get_nb == nullptr) return ballots;
  auto pending = std::make_shared<Pending>();
  pending->texts.resize(missing.size());
  pending->outstanding = missing.size();
  const pmix::Info direct[] = {Timeout(kBallotReadSeconds)};
  for (size_t i = 0; i < missing.size(); ++i) {
    const pmix::Proc peer = Peer(pmix.self, first + missing[i]);
    auto* request = new Request{pending, i};  // the same value asked of its node: not counted again
    if (pmix.get_nb(&peer, key, direct, std::size(direct), Arrived, request) != pmix::kSuccess) {
      delete request;  // refused at once: no answer will come
      std::lock_guard<std::mutex> lock(pending->mutex);
      --pending->outstanding;
    }
  }
  // Each read gives up after kBallotReadSeconds; a little more for the
  // answers to travel back.
  std::unique_lock<std::mutex> lock(pending->mutex);
  *complete = pending->done.wait_for(lock, std::chrono::seconds(kBallotReadSeconds + 3),
                                     [&] { return pending->outstanding == 0; });
  for (size_t i = 0; i < missing.size(); ++i) ballots[static_cast<size_t>(missing[i])] = pending->texts[i];
  return ballots;
}

std::optional<std::string> ReadPublished(const BallotReads& pmix, const char* key, int rank, int seconds) {
  // PMIx answers a waiting read at the rank's next commit of anything, with
  // "not found" when this key is not yet among it: asked again until the
  // bound, one value read.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  if (pmix.reads != nullptr) ++*pmix.reads;
  const BallotReads uncounted{pmix.get, pmix.get_nb, pmix.self, nullptr};
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::seconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return std::nullopt;
    const pmix::Info wait[] = {Timeout(static_cast<int>(left))};
    if (auto text = Get(uncounted, Peer(pmix.self, rank), key, wait, std::size(wait))) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int ReadNodeCount(const BallotReads& pmix) {
  if (pmix.reads != nullptr) ++*pmix.reads;
  const pmix::Proc job = Peer(pmix.self, static_cast<int>(pmix::kRankWildcard));
  pmix::Value* value = nullptr;
  if (pmix.get(&job, pmix::kNumNodes, nullptr, 0, &value) != pmix::kSuccess || value == nullptr) return 0;
  const int nodes = value->type == pmix::kTypeUint32 ? static_cast<int>(value->data.uint32) : 0;
  if (value->type == pmix::kTypeString) std::free(value->data.string);
  std::free(value);
  return nodes > 0 ? nodes : 0;
}

}  // namespace mla::lib
