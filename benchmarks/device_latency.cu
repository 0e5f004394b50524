// device_latency: what the CUDA primitives that a device allreduce call is
// made of cost on this host, per rank, with every rank of the job doing the
// same at once (run it as the job would run: same ranks per GPU, with or
// without MPS).  Median and 90th percentile over many repetitions, in µs:
//   launch+sync     an empty kernel, then cudaStreamSynchronize
//   launch+spin     an empty kernel that writes a host-mapped word, the host
//                   spinning on it (what the flag path waits with)
//   device-sync     cudaDeviceSynchronize with nothing queued
//   event-wait      cudaEventRecord on the legacy stream + cudaStreamWaitEvent
//   pointer-attr    cudaPointerGetAttributes of a device pointer
//   mpi-barrier     PMPI_Barrier over all ranks (host shared memory)
//   device_latency [REPS]     (default 2000)
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "vocab/ranks_per_gpu.h"

namespace {

__global__ void Empty() {}

__global__ void Touch(volatile unsigned int* word, unsigned int value) {
  __threadfence_system();
  *word = value;
}

void Die(const char* what, cudaError_t e) {
  std::fprintf(stderr, "device_latency: %s: %s\n", what, cudaGetErrorString(e));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// Runs `op` reps times, all ranks starting together; prints rank 0's median
// and p90 and the largest median over ranks.
void Measure(const char* name, int reps, const std::function<void()>& op) {
  std::vector<double> t(static_cast<size_t>(reps));
  for (int i = 0; i < 20; ++i) op();
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < reps; ++i) {
    const double t0 = MPI_Wtime();
    op();
    t[static_cast<size_t>(i)] = (MPI_Wtime() - t0) * 1e6;
  }
  std::sort(t.begin(), t.end());
  double med = t[t.size() / 2], p90 = t[t.size() * 9 / 10], worst = 0;
  MPI_Reduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("%-14s %10.2f %10.2f %14.2f\n", name, med, p90, worst);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int reps = argc > 1 ? std::max(10, std::atoi(argv[1])) : 2000;
  int rank = 0, size = 0, gpus = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    if (rank == 0) std::printf("device_latency: no GPU\n");
    MPI_Finalize();
    return 77;
  }
  // The GPU of this rank as the library and the benchmark choose it
  // (vocab/ranks_per_gpu.h), from MULTILANE_RANKS_PER_GPU and the host's ranks.
  MPI_Comm host;
  int local_rank = 0, local_size = 1, per_gpu = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
  MPI_Comm_rank(host, &local_rank);
  MPI_Comm_size(host, &local_size);
  MPI_Comm_free(&host);
  const char* variable = std::getenv("MULTILANE_RANKS_PER_GPU");
  std::string why;
  if (!mla::ParseRanksPerGpuVariable(variable ? variable : "", &per_gpu, &why)) {
    if (rank == 0) std::fprintf(stderr, "device_latency: %s\n", why.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int device = mla::GpuOfRank(local_rank, local_size, per_gpu, gpus);
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) Die("cudaSetDevice", e);
  int mps = 0;
  cudaDeviceGetAttribute(&mps, cudaDevAttrMpsEnabled, device);
  cudaStream_t stream;
  if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) Die("stream", e);
  cudaEvent_t event;
  if ((e = cudaEventCreateWithFlags(&event, cudaEventDisableTiming)) != cudaSuccess) Die("event", e);
  unsigned int* host_word = nullptr;
  unsigned int* dev_word = nullptr;
  if ((e = cudaHostAlloc(&host_word, sizeof(unsigned int), cudaHostAllocMapped)) != cudaSuccess) Die("host", e);
  if ((e = cudaHostGetDevicePointer(&dev_word, host_word, 0)) != cudaSuccess) Die("mapped", e);
  *host_word = 0;
  void* buf = nullptr;
  if ((e = cudaMalloc(&buf, 4096)) != cudaSuccess) Die("cudaMalloc", e);
  if (rank == 0)
    std::printf("# %d ranks, %d GPU(s), MPS %s, %d repetitions; microseconds\n%-14s %10s %10s %14s\n", size, gpus,
                mps ? "on" : "off", reps, "# primitive", "median", "p90", "max median");

  Measure("launch+sync", reps, [&] {
    Empty<<<1, 32, 0, stream>>>();
    cudaStreamSynchronize(stream);
  });
  unsigned int value = 0;
  Measure("launch+spin", reps, [&] {
    ++value;
    Touch<<<1, 1, 0, stream>>>(dev_word, value);
    while (*static_cast<volatile unsigned int*>(host_word) != value) {
    }
  });
  cudaStreamSynchronize(stream);
  Measure("device-sync", reps, [&] { cudaDeviceSynchronize(); });
  Measure("event-wait", reps, [&] {
    cudaEventRecord(event, cudaStreamLegacy);
    cudaStreamWaitEvent(stream, event, 0);
  });
  cudaStreamSynchronize(stream);
  Measure("pointer-attr", reps, [&] {
    cudaPointerAttributes a;
    cudaPointerGetAttributes(&a, buf);
  });
  Measure("mpi-barrier", reps, [&] { MPI_Barrier(MPI_COMM_WORLD); });

  cudaFree(buf);
  cudaFreeHost(host_word);
  MPI_Finalize();
  return 0;
}
