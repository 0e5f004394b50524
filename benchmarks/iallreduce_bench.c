/* iallreduce_bench.c: is running MPI_Iallreduce through multilane worth it?
 * For each size, the median over rounds of one MPI_Allreduce and of one
 * MPI_Iallreduce + MPI_Wait (nothing to overlap: the pure cost) on
 * MPI_COMM_WORLD, doubles, MPI_SUM, checked.  Run it plainly (both are the
 * system MPI's) and with libmlallreduce.so injected and MULTILANE_ALGO set
 * (MPI_Allreduce runs that algorithm, MPI_Iallreduce stays the system MPI's):
 * the ratio iallreduce / lane allreduce bounds what a lane MPI_Iallreduce
 * could gain.  docs/entry-points.md has the figures and the command.
 * Usage: iallreduce_bench [rounds] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int Compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double Median(double* t, int n) {
  qsort(t, (size_t)n, sizeof(double), Compare);
  return t[n / 2];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rounds = argc > 1 ? atoi(argv[1]) : 20;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) printf("%12s %8s %14s %14s %8s\n", "bytes", "ranks", "allreduce_us", "iallreduce_us", "#wrong");
  double* t1 = malloc(sizeof(double) * (size_t)rounds);
  double* t2 = malloc(sizeof(double) * (size_t)rounds);
  for (long bytes = 64 * 1024; bytes <= 16L * 1024 * 1024; bytes *= 4) {
    const int n = (int)(bytes / sizeof(double));
    double* in = malloc((size_t)bytes);
    double* out = malloc((size_t)bytes);
    for (int i = 0; i < n; ++i) in[i] = rank + i % 3;
    long wrong = 0;
    for (int r = 0; r < rounds; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      t1[r] = MPI_Wtime() - t;
      for (int i = 0; i < n; ++i) wrong += out[i] != size * (size - 1) / 2.0 + size * (i % 3);
      MPI_Request req;
      MPI_Barrier(MPI_COMM_WORLD);
      t = MPI_Wtime();
      MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      t2[r] = MPI_Wtime() - t;
      for (int i = 0; i < n; ++i) wrong += out[i] != size * (size - 1) / 2.0 + size * (i % 3);
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      printf("%12ld %8d %14.1f %14.1f %8ld\n", bytes, size, Median(t1, rounds) * 1e6, Median(t2, rounds) * 1e6, wrong);
    free(in);
    free(out);
  }
  free(t1);
  free(t2);
  MPI_Finalize();
  return 0;
}
