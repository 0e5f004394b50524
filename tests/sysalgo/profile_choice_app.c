/* profile_choice_app.c: MPI_Allreduce calls for the test of a profile's
 * mpi=NAME (profile_choice_observed.py): SUM_CALLS sums of 2 MiB of doubles
 * (MPI_SUM, commutative) and ORDER_CALLS of a non-commutative op ("the left
 * operand": the result is rank 0's value, in rank order, as the standard
 * requires), each checked exactly, then one MPI_OP_NULL call that must return
 * MPI_ERR_OP.  Prints "profile-choice-app: ok" on every
 * rank, or exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { SUM_CALLS = 5, ORDER_CALLS = 3, COUNT = 262144 };

/* inout = in (op) inout with `in` from the lower ranks: keep the left one. */
static void keep_left(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] = ((int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double *a = malloc(sizeof(double) * COUNT), *b = malloc(sizeof(double) * COUNT);
  int *x = malloc(sizeof(int) * COUNT), *y = malloc(sizeof(int) * COUNT);
  for (int call = 0; call < SUM_CALLS; ++call) {
    for (int i = 0; i < COUNT; ++i) a[i] = rank + 1 + (i % 7) + call;
    MPI_Allreduce(a, b, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < COUNT; ++i)
      if (b[i] != size * (size + 1) / 2.0 + size * ((i % 7) + call)) bad++;
  }
  MPI_Op left;
  MPI_Op_create(keep_left, 0, &left);
  for (int call = 0; call < ORDER_CALLS; ++call) {
    for (int i = 0; i < COUNT; ++i) x[i] = rank + 1;
    MPI_Allreduce(x, y, COUNT, MPI_INT, left, MPI_COMM_WORLD);
    for (int i = 0; i < COUNT; ++i)
      if (y[i] != 1) bad++;
  }
  MPI_Op_free(&left);
  /* MPI_OP_NULL on a communicator that returns errors (MPI_COMM_WORLD's stay fatal): the MPI's own
   * MPI_ERR_OP comes back, whatever the profile names (issue 41 item 4). */
  MPI_Comm returns;
  MPI_Comm_dup(MPI_COMM_WORLD, &returns);
  MPI_Comm_set_errhandler(returns, MPI_ERRORS_RETURN);
  int rc = MPI_Allreduce(a, b, COUNT, MPI_DOUBLE, MPI_OP_NULL, returns), cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_OP) {
    fprintf(stderr, "profile-choice-app: rank %d: MPI_OP_NULL returned class %d, not MPI_ERR_OP\n", rank, cls);
    bad++;
  }
  MPI_Comm_free(&returns);
  if (bad)
    fprintf(stderr, "profile-choice-app: rank %d: %d wrong elements\n", rank, bad);
  else
    printf("profile-choice-app: ok\n");
  free(a), free(b), free(x), free(y);
  MPI_Finalize();
  return bad ? 1 : 0;
}
