// A data race on purpose, in code that MPI calls back (a user op run by
// MPI_Reduce_local from two threads): under the tsan preset ThreadSanitizer
// must report it, through tests/tsan.supp.  A suppression that matches any
// frame of libmpi in the stack hid every race of multilane's own code that
// MPI calls (attribute callbacks, user ops, error handlers): issue 23 N16.
#include <mpi.h>

#include <cstdio>
#include <thread>

namespace {

long g_unguarded = 0;  // written by both threads without a lock: the race

void CountingSum(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
  ++g_unguarded;
}

void Reduce(MPI_Op op) {
  int in[4] = {1, 2, 3, 4}, inout[4] = {0, 0, 0, 0};
  for (int k = 0; k < 100; ++k) MPI_Reduce_local(in, inout, 4, MPI_INT, op);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Op op;
  MPI_Op_create(CountingSum, 1, &op);
  std::thread a(Reduce, op), b(Reduce, op);
  a.join();
  b.join();
  MPI_Op_free(&op);
  std::printf("race_in_mpi_callback: %ld calls (no report means the race was hidden)\n", g_unguarded);
  MPI_Finalize();
  return 0;
}
