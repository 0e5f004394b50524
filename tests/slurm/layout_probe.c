/* layout_probe.c: the MPI program of the Slurm end-to-end tests.  Each rank
 * allreduces ITERATIONS messages of 256 KiB (floats, MPI_SUM), checks the
 * result, and prints one line with what the job gave it:
 *
 *   rank=R size=N gpu=CUDA_VISIBLE_DEVICES cpus=Cpus_allowed_list preload=0|1
 *       off=0|1 ok=0|1 calls=C passthrough=P lane=L hier=H split=S
 *
 * preload: LD_PRELOAD names libmlallreduce; off: MULTILANE_OFF is set (the
 * plugin's "no usable profile on this node"), whose value follows on a line
 * of its own: "rank R MULTILANE_OFF=VALUE".
 *
 * The counters come from libmlallreduce's own mla_get_stats, found with
 * dlsym, so that the program runs (with zeros) without the library. */
#include <dlfcn.h>
#include <unistd.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlallreduce.h"

static void cpus_allowed(char* out, size_t size) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[4096];
  snprintf(out, size, "?");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
      char* v = line + 18;
      while (*v == ' ' || *v == '\t') ++v;
      v[strcspn(v, "\n")] = 0;
      snprintf(out, size, "%s", v);
    }
  }
  fclose(f);
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? atoi(argv[1]) : 10;
  const int count = 64 * 1024;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  float *in = malloc(sizeof(float) * count), *out = malloc(sizeof(float) * count);
  int ok = 1;
  for (int it = 0; it < iterations; ++it) {
    for (int i = 0; i < count; ++i) in[i] = (float)(rank + 1) + (float)(i % 7);
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < count; ++i) {
      const float want = (float)size * (float)(size + 1) / 2.0f + (float)size * (float)(i % 7);
      if (out[i] != want) ok = 0;
    }
  }
  mla_stats stats;
  memset(&stats, 0, sizeof stats);
  void (*get_stats)(mla_stats*) = (void (*)(mla_stats*))dlsym(RTLD_DEFAULT, "mla_get_stats");
  if (get_stats) get_stats(&stats);
  char cpus[4096];
  cpus_allowed(cpus, sizeof cpus);
  const char* gpu = getenv("CUDA_VISIBLE_DEVICES");
  const char* preload = getenv("LD_PRELOAD");
  const char* off = getenv("MULTILANE_OFF");
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  mla_layout layout;
  memset(&layout, 0, sizeof layout);
  int (*get_layout)(MPI_Comm, mla_layout*) = (int (*)(MPI_Comm, mla_layout*))dlsym(RTLD_DEFAULT, "mla_comm_layout");
  if (get_layout) get_layout(MPI_COMM_WORLD, &layout);
  printf(
      "rank=%d size=%d host=%s nodes=%d gpu=%s cpus=%s preload=%d off=%d ok=%d calls=%llu passthrough=%llu "
      "lane=%llu hier=%llu split=%llu\n",
      rank, size, host, layout.nodes, gpu ? gpu : "none", cpus, preload && strstr(preload, "libmlallreduce") ? 1 : 0,
      off ? 1 : 0, ok, (unsigned long long)stats.calls, (unsigned long long)stats.calls_by_algo[MLA_ALGO_PASSTHROUGH],
      (unsigned long long)stats.calls_by_algo[MLA_ALGO_LANE], (unsigned long long)stats.calls_by_algo[MLA_ALGO_HIER],
      (unsigned long long)stats.calls_by_algo[MLA_ALGO_SPLIT]);
  if (off) printf("rank %d MULTILANE_OFF=%s\n", rank, off);
  fflush(stdout);
  free(in);
  free(out);
  MPI_Finalize();
  return ok ? 0 : 1;
}
