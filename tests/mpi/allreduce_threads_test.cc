// allreduce_threads_test.cc: part of allreduce_mpi_test.  Concurrency:
// threads calling at once on their own duplicated communicators under
// MPI_THREAD_MULTIPLE; results exact and counters thread-safe.

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <thread>
#include <vector>

#include "allreduce_cases.h"
#include "allreduce_support.h"
#include "mlallreduce.h"

namespace mlatest {
namespace {

TEST(Concurrency, ThreadsOnDupComms) {
  if (g_provided < MPI_THREAD_MULTIPLE)
    GTEST_SKIP() << "MPI provides thread level " << g_provided << ", below MPI_THREAD_MULTIPLE";
  constexpr int kThreads = 3;
  constexpr int kIters = 30;
  std::vector<MPI_Comm> comms(kThreads);
  for (int t = 0; t < kThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  std::vector<Local> locals(kThreads);
  std::vector<long> made(kThreads, 0);
  mla_stats before, after;
  mla_get_stats(&before);
  auto body = [&](int t) {
    static const int counts[] = {1, 13, 257, 1001, 5};
    MPI_Comm comm = comms[t];
    for (int it = 0; it < kIters; ++it) {
      const int count = counts[(it + t) % 5];
      std::vector<long> send(count), recv(count, -1);
      for (int i = 0; i < count; ++i) send[i] = static_cast<long>(g_rank + 1) * (i % 7 + 1) + t + it;
      const int which = (it + t) % 4;
      int rc;
      std::string name;
      if (which == 3) {
        rc = MPI_Allreduce(send.data(), recv.data(), count, MPI_LONG, MPI_SUM, comm);
        name = "MPI_Allreduce";
      } else {
        mla_choice ch = MakeChoice(static_cast<mla_algo>(1 + which), 0, (it % 2) ? 0u : 512u);
        rc = mla_allreduce_with(send.data(), recv.data(), count, MPI_LONG, MPI_SUM, comm, &ch);
        name = ChoiceName(ch);
      }
      ++made[t];
      for (int i = 0; i < count; ++i) {
        long want = static_cast<long>(i % 7 + 1) * g_size * (g_size + 1) / 2 + static_cast<long>(g_size) * (t + it);
        if (rc != MPI_SUCCESS || recv[i] != want) {
          locals[t].Fail("thread " + std::to_string(t) + " iteration " + std::to_string(it) + " " + name +
                         " count=" + std::to_string(count) + ": element " + std::to_string(i) + " is " +
                         std::to_string(recv[i]) + ", want " + std::to_string(want));
          break;
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(body, t);
  for (auto& th : threads) th.join();
  mla_get_stats(&after);
  Local local;
  for (auto& l : locals)
    if (!l.ok()) local.Fail(l.first());
  long total = 0;
  for (long m : made) total += m;
  if (mla_enabled() && static_cast<long>(after.calls - before.calls) != total)
    local.Fail("calls moved by " + std::to_string(after.calls - before.calls) + " for " + std::to_string(total) +
               " concurrent calls (counters not thread-safe?)");
  for (auto& c : comms) MPI_Comm_free(&c);
  EXPECT_ALL_RANKS_OK(local);
}

}  // namespace
}  // namespace mlatest
