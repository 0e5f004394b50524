/* cvar_seen_app.c: which allreduce algorithm MPICH was told to run, seen
 * from inside the call.  MPICH reads MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM (and,
 * for it to count, MPIR_CVAR_DEVICE_COLLECTIVES) at every call; a user-defined
 * op runs inside the call, so it reads both through the MPI tool interface
 * while MPICH combines the data.  Each rank makes one sum of ints with that
 * op, checks it exactly, reads both variables again after the call, and
 * prints "cvar-seen: rank R inside=A,D after=A,D wrong=W". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static MPI_T_cvar_handle algorithm, device;
static int inside_algorithm = -1, inside_device = -1;

static int Open(const char* name, MPI_T_cvar_handle* handle) {
  int index = -1, count = 0;
  if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) return 0;
  return MPI_T_cvar_handle_alloc(index, NULL, handle, &count) == MPI_SUCCESS;
}

static int Read(MPI_T_cvar_handle handle) {
  int value = -1;
  MPI_T_cvar_read(handle, &value);
  return value;
}

static void sum_ints(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  inside_algorithm = Read(algorithm);
  inside_device = Read(device);
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int provided = 0, rank = 0, size = 1;
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  if (!Open("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", &algorithm) || !Open("MPIR_CVAR_DEVICE_COLLECTIVES", &device)) {
    fprintf(stderr, "cvar-seen: this MPI has no MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int count = 1 << 16;
  int *send = malloc(sizeof(int) * count), *recv = malloc(sizeof(int) * count);
  for (int i = 0; i < count; ++i) send[i] = (i % 1000) * (rank + 1);
  MPI_Op op;
  MPI_Op_create(sum_ints, 1, &op);
  MPI_Allreduce(send, recv, count, MPI_INT, op, MPI_COMM_WORLD);
  int wrong = 0;
  for (int i = 0; i < count; ++i) wrong += recv[i] != (i % 1000) * size * (size + 1) / 2;
  printf("cvar-seen: rank %d inside=%d,%d after=%d,%d wrong=%d\n", rank, inside_algorithm, inside_device,
         Read(algorithm), Read(device), wrong);
  MPI_Op_free(&op);
  MPI_T_cvar_handle_free(&algorithm);
  MPI_T_cvar_handle_free(&device);
  free(send);
  free(recv);
  MPI_Finalize();
  return wrong != 0;
}
