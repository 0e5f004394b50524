// thread_counts.cc: the per-thread counters (thread_counts.h).
#include "libmlallreduce/base/thread_counts.h"

namespace mla::lib {
namespace {

std::atomic<ThreadCounts*> g_first{nullptr};

// Hands a thread's set back when the thread ends.
struct Owner {
  ThreadCounts* counts = nullptr;
  ~Owner() {
    if (counts != nullptr) counts->in_use.store(false, std::memory_order_release);
  }
};

ThreadCounts* TakeOrMake() {
  for (ThreadCounts* t = g_first.load(std::memory_order_acquire); t != nullptr; t = t->next) {
    bool free = false;
    if (t->in_use.compare_exchange_strong(free, true, std::memory_order_acquire)) return t;
  }
  auto* made = new ThreadCounts;  // never freed (thread_counts.h)
  made->next = g_first.load(std::memory_order_relaxed);
  while (!g_first.compare_exchange_weak(made->next, made, std::memory_order_release, std::memory_order_relaxed)) {
  }
  return made;
}

}  // namespace

namespace thread_counts_internal {

__thread ThreadCounts* t_mine = nullptr;

ThreadCounts* TakeForThisThread() {
  static thread_local Owner owner;
  owner.counts = TakeOrMake();
  t_mine = owner.counts;
  return t_mine;
}

}  // namespace thread_counts_internal

ThreadCounts* FirstThreadCounts() { return g_first.load(std::memory_order_acquire); }

void ZeroThreadCounts() {
  for (ThreadCounts* t = FirstThreadCounts(); t != nullptr; t = t->next) {
    t->calls.store(0);
    for (auto& n : t->calls_by_algo) n.store(0);
    for (auto& n : t->bytes_by_algo) n.store(0);
    for (auto& n : t->entry_calls) n.store(0);
  }
}

}  // namespace mla::lib
