/*
 * mla_hello.c: a program that calls libmlallreduce directly (mlallreduce.h).
 *
 * Build against an installed multilane with CMake (CMakeLists.txt here:
 * find_package(multilane), target multilane::mlallreduce) or with pkg-config:
 *   mpicc mla_hello.c $(pkg-config --cflags --libs multilane) -o mla_hello
 * and run it under MPI: mpirun -np 4 ./mla_hello
 *
 * Each rank adds its rank number with mla_allreduce_with (the lane algorithm
 * forced), checks the sum, and rank 0 prints the library's version, the
 * layout it sees and its counters.  Exit status 0 when every sum is right.
 */
#include <mlallreduce.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  enum { kCount = 1024 };
  static double send[kCount], recv[kCount];
  for (int i = 0; i < kCount; ++i) send[i] = rank + i;

  mla_choice lane = {MLA_ALGO_LANE, 0, 0, MLA_TRANSPORT_AUTO};
  int wrong = 0;
  if (mla_allreduce_with(send, recv, kCount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &lane) != MPI_SUCCESS) wrong = 1;
  mla_stats stats; /* the counters now: the MPI_Allreduce below goes through the library too */
  mla_get_stats(&stats);
  const double ranks_sum = size * (size - 1) / 2.0;
  for (int i = 0; i < kCount && !wrong; ++i)
    if (recv[i] != ranks_sum + (double)size * i) wrong = 1;

  int wrong_anywhere = 0;
  MPI_Allreduce(&wrong, &wrong_anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  mla_layout layout;
  mla_comm_layout(MPI_COMM_WORLD, &layout);
  if (rank == 0) {
    printf("mla_hello: libmlallreduce %s (header %s), %d rank(s) on %d node(s), enabled=%d\n", mla_version(),
           MLA_VERSION_STRING, layout.size, layout.nodes, mla_enabled());
    printf("mla_hello: calls=%llu lane=%llu sums %s\n", (unsigned long long)stats.calls,
           (unsigned long long)stats.calls_by_algo[MLA_ALGO_LANE], wrong_anywhere ? "WRONG" : "right");
  }
  MPI_Finalize();
  return wrong_anywhere ? 1 : 0;
}
