/* loop_job.c: the MPI program of the Slurm cases of the closed loop (issue
 * 29, docs/history.md): a job whose computation and allreduce share make
 * different layouts win.
 *
 *   loop_job STEPS BYTES COMPUTE_MS split|shared
 *
 * Each of STEPS steps computes, then allreduces BYTES of doubles (MPI_SUM)
 * and checks the sum.  The computation stands for GPU work (a sleep, so that
 * the test machine's few cores stay free for the allreduce): COMPUTE_MS per
 * step for the whole job at 2 ranks, divided among the ranks (split: the work
 * is shared out, more ranks per GPU pay) or repeated by each rank (shared: the
 * ranks contend for one GPU and every rank's step takes longer the more there
 * are, so more ranks per GPU cannot pay).  Rank 0 prints, once the first
 * step's allreduce has returned (every rank runs and their connections are
 * made: a fault may now meet the job; flushed at once),
 *
 *   loop started
 *
 * and at the end
 *
 *   loop size=N ok=0|1 wall_s=W
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void compute(double ms) {
  struct timespec t;
  t.tv_sec = (time_t)(ms / 1000);
  t.tv_nsec = (long)((ms - 1000.0 * (double)t.tv_sec) * 1e6);
  nanosleep(&t, NULL);
}

int main(int argc, char** argv) {
  if (argc != 5 || (strcmp(argv[4], "split") != 0 && strcmp(argv[4], "shared") != 0)) {
    fprintf(stderr, "usage: loop_job STEPS BYTES COMPUTE_MS split|shared\n");
    return 2;
  }
  const int steps = atoi(argv[1]);
  const size_t count = (size_t)atol(argv[2]) / sizeof(double);
  const double compute_ms = atof(argv[3]);
  const int split = strcmp(argv[4], "split") == 0;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double per_step_ms = split ? compute_ms * 2.0 / size : compute_ms * size / 2.0;
  double *in = malloc(sizeof(double) * count), *out = malloc(sizeof(double) * count);
  int ok = in != NULL && out != NULL;
  const double start = MPI_Wtime();
  for (size_t i = 0; ok && i < count; ++i) in[i] = (double)(rank + 1) + (double)(i % 5);
  for (int s = 0; s < steps && ok; ++s) {
    compute(per_step_ms);
    memset(out, 0xff, sizeof(double) * count); /* NaN: a sum not written is wrong */
    MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    /* Every element on the last step, a spread sample before: the check must
     * not be the computation the layouts are compared on. */
    const size_t stride = s == steps - 1 ? 1 : 997;
    for (size_t i = 0; i < count; i += stride)
      if (out[i] != (double)size * (size + 1) / 2.0 + (double)size * (double)(i % 5)) ok = 0;
    if (s == 0 && rank == 0) {
      printf("loop started\n");
      fflush(stdout);
    }
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("loop size=%d ok=%d wall_s=%.3f\n", size, all_ok, MPI_Wtime() - start);
  free(in);
  free(out);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
