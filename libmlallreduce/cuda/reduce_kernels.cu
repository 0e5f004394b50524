// reduce_kernels.cu: the device reductions behind LaunchReduce.
#include <cstdint>

#include "libmlallreduce/cuda/reduce_kernels.h"
#include "libmlallreduce/cuda/reduce_ops.cuh"

namespace mla::lib {
namespace cuda {
namespace {

constexpr int kThreads = 512;
constexpr int kUnroll = 2;  // 16-byte vectors in flight per source per thread

template <typename T>
union Vec {
  uint4 raw;
  T v[sizeof(uint4) / sizeof(T)];
};

// One pass over n elements: aligned 16-byte vectors first, then a scalar tail.
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads) ReduceKernel(BufferSet b, size_t n, bool vectorize) {
  constexpr int kLanes = sizeof(uint4) / sizeof(T);
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t nvec = vectorize ? n / kLanes : 0;

  for (size_t base = tid; base < nvec; base += stride * kUnroll) {
    Vec<T> acc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t i = base + u * stride;
      if (i < nvec) acc[u].raw = static_cast<const uint4*>(b.src[0])[i];
    }
    for (int s = 1; s < b.nsrc; ++s) {
      Vec<T> in[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const size_t i = base + u * stride;
        if (i < nvec) in[u].raw = static_cast<const uint4*>(b.src[s])[i];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int k = 0; k < kLanes; ++k) acc[u].v[k] = Op::Apply(acc[u].v[k], in[u].v[k]);
    }
    for (int d = 0; d < b.ndst; ++d)
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const size_t i = base + u * stride;
        if (i < nvec) static_cast<uint4*>(b.dst[d])[i] = acc[u].raw;
      }
  }

  for (size_t i = nvec * kLanes + tid; i < n; i += stride) {
    T acc = static_cast<const T*>(b.src[0])[i];
    for (int s = 1; s < b.nsrc; ++s) acc = Op::Apply(acc, static_cast<const T*>(b.src[s])[i]);
    for (int d = 0; d < b.ndst; ++d) static_cast<T*>(b.dst[d])[i] = acc;
  }
}

int SmCount() {
  static int count = [] {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) sms = 80;
    return sms;
  }();
  return count;
}

template <typename T, typename Op>
struct Launch {
  static cudaError_t Run(const BufferSet& b, size_t n, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    bool aligned = true;
    for (int s = 0; s < b.nsrc; ++s) aligned &= reinterpret_cast<uintptr_t>(b.src[s]) % sizeof(uint4) == 0;
    for (int d = 0; d < b.ndst; ++d) aligned &= reinterpret_cast<uintptr_t>(b.dst[d]) % sizeof(uint4) == 0;
    constexpr size_t kLanes = sizeof(uint4) / sizeof(T);
    const size_t work = aligned ? (n / kLanes + kUnroll - 1) / kUnroll + n % kLanes : n;
    size_t blocks = (work + kThreads - 1) / kThreads;
    const size_t max_blocks = static_cast<size_t>(SmCount()) * 4;
    if (blocks > max_blocks) blocks = max_blocks;
    if (blocks < 1) blocks = 1;
    ReduceKernel<T, Op><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(b, n, aligned);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t LaunchReduce(DType type, DOp op, const BufferSet& b, size_t n, cudaStream_t stream) {
  return DispatchReduction<Launch>(type, op, b, n, stream);
}

}  // namespace cuda
}  // namespace mla::lib
