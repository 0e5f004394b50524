/* entry_points.c: an MPI program that knows nothing of multilane and calls
 * the allreduce entry points beside MPI_Allreduce: MPI_Iallreduce (MPI-3)
 * and, where its mpi.h is MPI-4 (MPICH 4), MPI_Allreduce_c and
 * MPI_Allreduce_init with two MPI_Start rounds.  Each sums 100000 doubles of
 * small integers and checks every element.  Prints "entry_points ok rank R
 * mpi4=0|1" or exits 1.  The tests inject the front and count the entry
 * points in the stats line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kCount = 100000 };

static int Check(const double* out, int size, int round) {
  int bad = 0;
  for (int i = 0; i < kCount; ++i) {
    const double want = size * (size - 1) / 2.0 + (double)size * (i % 5 + round);
    if (out[i] != want) ++bad;
  }
  return bad;
}

static void Fill(double* in, int rank, int round) {
  for (int i = 0; i < kCount; ++i) in[i] = rank + i % 5 + round;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, bad = 0, mpi4 = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double* in = malloc(sizeof(double) * kCount);
  double* out = malloc(sizeof(double) * kCount);
  MPI_Request req;

  Fill(in, rank, 0);
  MPI_Allreduce(in, out, kCount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  bad += Check(out, size, 0);

  Fill(in, rank, 1);
  MPI_Iallreduce(in, out, kCount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  bad += Check(out, size, 1);

#if MPI_VERSION >= 4
  mpi4 = 1;
  Fill(in, rank, 2);
  MPI_Allreduce_c(in, out, (MPI_Count)kCount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  bad += Check(out, size, 2);

  MPI_Allreduce_init(in, out, kCount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
  for (int round = 3; round < 5; ++round) {
    Fill(in, rank, round);
    MPI_Start(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    bad += Check(out, size, round);
  }
  MPI_Request_free(&req);
#endif

  free(in);
  free(out);
  if (bad != 0) {
    printf("entry_points WRONG rank %d: %d elements\n", rank, bad);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  printf("entry_points ok rank %d mpi4=%d\n", rank, mpi4);
  MPI_Finalize();
  return 0;
}
