#include "libmlallreduce/base/thread_counts.h"

#include <gtest/gtest.h>

#include <thread>

namespace mla::lib {
namespace {

uint64_t Calls() {
  return SumOverThreads([](ThreadCounts & t) -> auto& { return t.calls; });
}

int Sets() {
  int n = 0;
  for (ThreadCounts* t = FirstThreadCounts(); t != nullptr; t = t->next) ++n;
  return n;
}

TEST(ThreadCounts, EndedThreadsCountsStayAndTheirSetsAreTakenOver) {
  ZeroThreadCounts();
  AddOwn(MyCounts().calls, 1);
  std::thread([] { AddOwn(MyCounts().calls, 10); }).join();
  EXPECT_EQ(Calls(), 11u) << "an ended thread's counts are part of the sums";
  const int sets = Sets();
  std::thread([] { AddOwn(MyCounts().calls, 100); }).join();
  EXPECT_EQ(Calls(), 111u);
  EXPECT_EQ(Sets(), sets) << "a new thread takes the ended thread's set";
  std::thread a([] { AddOwn(MyCounts().calls, 1000); });
  a.join();
  ZeroThreadCounts();
  EXPECT_EQ(Calls(), 0u);
}

}  // namespace
}  // namespace mla::lib
