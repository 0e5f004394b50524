// shm_killed_rank: a job that dies while lane runs its node steps on shared
// memory (shm_cleanup_test.py).  `loop`: every rank allreduces 1 Mi doubles
// again and again with lane, and rank 1 kills itself (SIGKILL) from a second
// thread a moment after its third call began, so it dies inside a call.
// `once`: one such call, then a clean exit.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "mlallreduce.h"

int main(int argc, char** argv) {
  const bool loop = argc > 1 && std::strcmp(argv[1], "loop") == 0;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> send(1 << 20, 1.0), recv(1 << 20);
  mla_choice lane;
  std::memset(&lane, 0, sizeof lane);
  lane.algo = MLA_ALGO_LANE;
  for (int call = 0; loop || call < 1; ++call) {
    if (loop && rank == 1 && call == 2) {
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        kill(getpid(), SIGKILL);
      }).detach();
    }
    mla_allreduce_with(send.data(), recv.data(), 1 << 20, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &lane);
  }
  mla_stats stats;
  mla_get_stats(&stats);
  std::printf("rank %d: lane calls %llu\n", rank, static_cast<unsigned long long>(stats.calls_by_algo[MLA_ALGO_LANE]));
  MPI_Finalize();
  return 0;
}
