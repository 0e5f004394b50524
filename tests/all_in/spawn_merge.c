/* spawn_merge.c: a job whose processes come from two MPI worlds, for the rule
 * that a communicator reaching another world is served only where every one
 * of its processes is known to carry multilane alike (comm_scope.h).
 *
 *   spawn_merge N ENV_ARG... : the parents (this world) spawn N children as
 *                              `/usr/bin/env ENV_ARG... THIS_PROGRAM --child`
 *                              (e.g. `-u LD_PRELOAD`, or `LD_PRELOAD=...`),
 *                              so that the children's library may differ.
 *
 * Parents and children merge the intercommunicator (parents first) and, ITER
 * times for each of two sizes, sum rank+1+i%5 over: the merged communicator,
 * a MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) of it, and the communicator of
 * their own world made from it by MPI_Comm_split.  Every element is checked;
 * prints "spawn_merge ok parent|child rank R" or exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ITER = 3 };

/* Sums over comm and counts wrong elements. */
static int check_sum(MPI_Comm comm, const char* what) {
  const int counts[2] = {8192, 131072};
  int rank = 0, size = 0, bad = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int c = 0; c < 2; ++c) {
    const int n = counts[c];
    double* in = malloc(sizeof(double) * (size_t)n);
    double* out = malloc(sizeof(double) * (size_t)n);
    for (int it = 0; it < ITER; ++it) {
      for (int i = 0; i < n; ++i) in[i] = rank + 1 + i % 5 + it;
      if (MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) ++bad;
      for (int i = 0; i < n; ++i) {
        const double want = size * (size + 1) / 2.0 + (double)size * (i % 5 + it);
        if (out[i] != want) {
          if (bad++ == 0) fprintf(stderr, "spawn_merge: %s: element %d: got %g want %g\n", what, i, out[i], want);
        }
      }
    }
    free(in);
    free(out);
  }
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  MPI_Comm_get_parent(&parent);
  const int child = parent != MPI_COMM_NULL;
  if (child) {
    inter = parent;
  } else {
    if (argc < 2) {
      fprintf(stderr, "usage: spawn_merge N ENV_ARG...\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) MPI_Abort(MPI_COMM_WORLD, 2);
    self[len] = '\0';
    char** args = calloc((size_t)argc + 2, sizeof(char*));
    int k = 0;
    for (int i = 2; i < argc; ++i) args[k++] = argv[i];
    args[k++] = self;
    args[k++] = "--child";
    MPI_Comm_spawn("/usr/bin/env", args, atoi(argv[1]), MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    free(args);
  }
  MPI_Comm merged = MPI_COMM_NULL, shared = MPI_COMM_NULL, side = MPI_COMM_NULL;
  MPI_Intercomm_merge(inter, child, &merged);
  int rank = 0, bad = 0;
  MPI_Comm_rank(merged, &rank);
  bad += check_sum(merged, "merged");
  MPI_Comm_split_type(merged, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  bad += check_sum(shared, "shared");
  MPI_Comm_split(merged, child, rank, &side);
  bad += check_sum(side, "own world");
  MPI_Comm_free(&side);
  MPI_Comm_free(&shared);
  MPI_Comm_free(&merged);
  MPI_Comm_disconnect(&inter);
  if (bad != 0) {
    fprintf(stderr, "spawn_merge: %s rank %d: %d wrong elements\n", child ? "child" : "parent", rank, bad);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  printf("spawn_merge ok %s rank %d\n", child ? "child" : "parent", rank);
  MPI_Finalize();
  return 0;
}
