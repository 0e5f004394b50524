/* coll_base_counter.c: an LD_PRELOAD shim for the test of the system's own
 * allreduce algorithms (system_algorithms_observed.py).  Open MPI's
 * coll/tuned component calls its allreduce algorithms in libmpi through the
 * dynamic linker (ompi_coll_base_allreduce_intra_*), so a preloaded
 * definition sees each call: it counts them and hands them on.  At exit one
 * line per process in COLL_BASE_COUNTS_DIR/counts.PID (stderr after
 * MPI_Finalize may no longer reach mpirun): "coll-base-counts: ring=N ...", the calls on
 * communicators other than MPI_COMM_WORLD (the benchmark's own bookkeeping
 * runs on that one; mpi:NAME rows run on duplicates).  It observes which
 * algorithm ran, so that the test need not trust the choice it made. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Up to 8 pointer-sized arguments, handed on unchanged (x86-64 and aarch64
 * pass the 7th and 8th the same way to the callee as they came). */
typedef int (*coll_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

static const char* const kNames[] = {"basic_linear", "nonoverlapping", "recursivedoubling",
                                     "ring",         "ring_segmented", "redscat_allgather"};
static unsigned long counts[6];
static void* world; /* &ompi_mpi_comm_world, Open MPI's MPI_COMM_WORLD */

#define COUNTED(i, fn)                                                                                             \
  int fn(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e, uintptr_t f, uintptr_t g, uintptr_t h) { \
    static coll_fn real;                                                                                           \
    if (!real) real = (coll_fn)dlsym(RTLD_NEXT, #fn);                                                              \
    if (!world) world = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");                                                \
    if ((void*)f != world) counts[i]++; /* f: the communicator */                                                  \
    return real(a, b, c, d, e, f, g, h);                                                                           \
  }

COUNTED(0, ompi_coll_base_allreduce_intra_basic_linear)
COUNTED(1, ompi_coll_base_allreduce_intra_nonoverlapping)
COUNTED(2, ompi_coll_base_allreduce_intra_recursivedoubling)
COUNTED(3, ompi_coll_base_allreduce_intra_ring)
COUNTED(4, ompi_coll_base_allreduce_intra_ring_segmented)
COUNTED(5, ompi_coll_base_allreduce_intra_redscat_allgather)

__attribute__((destructor)) static void report(void) {
  const char* dir = getenv("COLL_BASE_COUNTS_DIR");
  char path[4096];
  if (!dir) return;
  snprintf(path, sizeof path, "%s/counts.%ld", dir, (long)getpid());
  FILE* f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "coll-base-counts:");
  for (int i = 0; i < 6; ++i) fprintf(f, " %s=%lu", kNames[i], counts[i]);
  fprintf(f, "\n");
  fclose(f);
}
