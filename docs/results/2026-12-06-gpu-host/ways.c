// ways.c: PMPI_Allreduce on MPI_COMM_SELF against the same call through a noinline wrapper, through
// mla_allreduce_with(passthrough) and through the library's MPI_Allreduce (auto), interleaved call by
// call (each round starts with another way), median of the per-round differences.  Built against
// the family library: mpicc -O2 -I include/multilane ways.c -L BUILD/libmlallreduce -l:libmlallreduce-openmpi.so
// Run: mpirun -np 1 --bind-to core ./ways BYTES
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mlallreduce.h"
static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
__attribute__((noinline)) int wrapped(const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m) {
  __asm__ volatile("" ::: "memory");
  return PMPI_Allreduce(s, r, c, t, o, m);
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = atoi(argv[1]), count = n / 4, R = 2001;
  float* s = aligned_alloc(4096, n);
  float* r = aligned_alloc(4096, n);
  memset(s, 1, n);
  memset(r, 0, n);
  mla_choice pass = {MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  double* t[4];
  for (int w = 0; w < 4; ++w) t[w] = malloc(sizeof(double) * R);
  for (int i = 0; i < R; ++i) {
    for (int k = 0; k < 4; ++k) {
      int w = (i + k) % 4;
      double t0 = MPI_Wtime();
      if (w == 0)
        PMPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
      else if (w == 1)
        wrapped(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
      else if (w == 2)
        mla_allreduce_with(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF, &pass);
      else
        MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
      t[w][i] = (MPI_Wtime() - t0) * 1e9;
    }
  }
  const char* names[4] = {"pmpi", "wrapped", "mla_with_pass", "MPI_Allreduce(lib)"};
  for (int w = 1; w < 4; ++w) {
    double* d = malloc(sizeof(double) * R);
    for (int i = 0; i < R; ++i) d[i] = t[w][i] - t[0][i];
    qsort(d, R, sizeof(double), cmp);
    printf("bytes %8d %-20s median extra %6.0f ns\n", n, names[w], d[R / 2]);
  }
  MPI_Finalize();
}
