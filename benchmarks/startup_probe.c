/* startup_probe.c: what a job's start costs each rank, for
 * benchmarks/startup_scale.py: MPI_Init, the first MPI_Allreduce on
 * MPI_COMM_WORLD, the first and the second on a new communicator (the first
 * builds multilane's layout of it), and K communicators created, used once
 * and freed in a loop.  Run it with and without the library injected; rank 0
 * prints one line of the mean and the slowest rank of each, in ms:
 *   startup_probe ranks=N init=MEAN/MAX first=... comm_first=... comm_second=... loop_per_comm=...
 * Usage: startup_probe [K] (default 100). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kInit, kFirst, kCommFirst, kCommSecond, kLoop, kMeasures };

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static void OneAllreduce(MPI_Comm comm) {
  double x = 1.0, sum = 0.0;
  MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
}

/* The measures after MPI_Init, each in ms, into ms[kFirst..kLoop]. */
static void Measure(int loops, double ms[kMeasures]) {
  double t = Now();
  OneAllreduce(MPI_COMM_WORLD);
  ms[kFirst] = Now() - t;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  t = Now();
  OneAllreduce(comm);
  ms[kCommFirst] = Now() - t;
  t = Now();
  OneAllreduce(comm);
  ms[kCommSecond] = Now() - t;
  MPI_Comm_free(&comm);
  t = Now();
  for (int i = 0; i < loops; ++i) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    OneAllreduce(comm);
    MPI_Comm_free(&comm);
  }
  ms[kLoop] = loops > 0 ? (Now() - t) / loops : 0.0;
}

int main(int argc, char** argv) {
  const int loops = argc > 1 ? atoi(argv[1]) : 100;
  double ms[kMeasures];
  const double before = Now();
  MPI_Init(&argc, &argv);
  ms[kInit] = Now() - before;
  Measure(loops, ms);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double sum[kMeasures], max[kMeasures];
  MPI_Reduce(ms, sum, kMeasures, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(ms, max, kMeasures, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const char* names[kMeasures] = {"init", "first", "comm_first", "comm_second", "loop_per_comm"};
    printf("startup_probe ranks=%d", size);
    for (int i = 0; i < kMeasures; ++i) printf(" %s=%.3f/%.3f", names[i], sum[i] / size, max[i]);
    printf("\n");
  }
  MPI_Finalize();
  return 0;
}
