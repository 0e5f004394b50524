/* plain_allreduce.c: an MPI program that knows nothing of multilane (built
 * against one MPI family, not linked with the library): the tests inject the
 * front libmlallreduce.so or a family build into it.  It sums 64 KiB and
 * 1 MiB of doubles 10 times each and checks every element; prints
 * "plain_allreduce ok rank R" or exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int counts[2] = {8192, 131072};
  int bad = 0;
  for (int c = 0; c < 2; ++c) {
    const int n = counts[c];
    double* in = malloc(sizeof(double) * (size_t)n);
    double* out = malloc(sizeof(double) * (size_t)n);
    for (int it = 0; it < 10; ++it) {
      for (int i = 0; i < n; ++i) in[i] = rank + i % 7 + it;
      MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      for (int i = 0; i < n; ++i) {
        const double want = size * (size - 1) / 2.0 + (double)size * (i % 7 + it);
        if (out[i] != want) ++bad;
      }
    }
    free(in);
    free(out);
  }
  if (bad != 0) {
    fprintf(stderr, "plain_allreduce: rank %d: %d wrong elements\n", rank, bad);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  printf("plain_allreduce ok rank %d\n", rank);
  MPI_Finalize();
  return 0;
}
