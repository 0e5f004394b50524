// thread_counts.h: the counters every allreduce call adds to, kept per thread
// so that a call adds without a locked instruction.
#ifndef MLA_THREAD_COUNTS_H_
#define MLA_THREAD_COUNTS_H_

#include <atomic>
#include <cstdint>

#include "mlallreduce.h"

namespace mla::lib {

// One thread's counts.  Only its thread adds to them (a load and a store, no
// lock); any thread may read them.  Aligned to a pair of cache lines, which
// the processor fetches together: a call's adds read one block.
struct alignas(128) ThreadCounts {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> calls_by_algo[MLA_ALGO_COUNT]{};
  std::atomic<uint64_t> bytes_by_algo[MLA_ALGO_COUNT]{};
  std::atomic<uint64_t> entry_calls[MLA_ENTRY_COUNT]{};
  std::atomic<bool> in_use{true};  // false once its thread ended: the next new thread takes it
  ThreadCounts* next = nullptr;    // the list of every set ever made
};

namespace thread_counts_internal {
// The calling thread's set: a plain pointer (__thread: no initialisation
// wrapper to call from other files), null until its first call.
extern __thread ThreadCounts* t_mine;
// The thread's first call: takes a set and hands it back at the end.
ThreadCounts* TakeForThisThread();
}  // namespace thread_counts_internal

// Returns the calling thread's counts, made (or taken over from a thread that
// ended, counts kept) at its first call.  Sets are never freed, so the sums
// keep every ended thread's counts; there are as many as threads that ran
// at once.  A call made while its thread ends, after the set was handed
// back (from another thread-local object's destructor), still adds to it
// and may lose a count to the thread that took it over.
inline ThreadCounts& MyCounts() {
  ThreadCounts* mine = thread_counts_internal::t_mine;
  return __builtin_expect(mine != nullptr, 1) ? *mine : *thread_counts_internal::TakeForThisThread();
}

// Adds n to a counter of the calling thread's own set.
inline void AddOwn(std::atomic<uint64_t>& counter, uint64_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// The head of the list of every set (newest first).
ThreadCounts* FirstThreadCounts();

// Returns the sum over every thread's set of the counter `get` picks.
template <typename Get>
uint64_t SumOverThreads(Get get) {
  uint64_t sum = 0;
  for (ThreadCounts* t = FirstThreadCounts(); t != nullptr; t = t->next) sum += get(*t).load(std::memory_order_relaxed);
  return sum;
}

// Sets every thread's counts to zero.  An add that runs at the same time on
// another thread may undo the zero for its counter.
void ZeroThreadCounts();

}  // namespace mla::lib

#endif  // MLA_THREAD_COUNTS_H_
