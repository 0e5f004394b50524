/* finalize_without_init.c: a program that calls MPI_Finalize without
 * MPI_Init (erroneous: the MPI reports it).  With multilane preloaded and
 * MULTILANE_STATS=1 the library must add nothing of its own. */
#include <mpi.h>
#include <stdio.h>

int main(void) {
  int rc = MPI_Finalize();
  printf("finalize_without_init: MPI_Finalize returned %d\n", rc);
  return 0;
}
