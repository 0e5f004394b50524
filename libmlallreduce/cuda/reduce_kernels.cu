// reduce_kernels.cu: the device reductions behind LaunchReduce.
#include <cstdint>

#include "reduce_kernels.h"

namespace mla {
namespace cuda {
namespace {

struct Sum { template <typename T> __device__ static T Apply(T a, T b) { return a + b; } };
struct Prod { template <typename T> __device__ static T Apply(T a, T b) { return a * b; } };
struct Min { template <typename T> __device__ static T Apply(T a, T b) { return b < a ? b : a; } };
struct Max { template <typename T> __device__ static T Apply(T a, T b) { return a < b ? b : a; } };
struct Land { template <typename T> __device__ static T Apply(T a, T b) { return static_cast<T>(a && b); } };
struct Lor { template <typename T> __device__ static T Apply(T a, T b) { return static_cast<T>(a || b); } };
struct Lxor { template <typename T> __device__ static T Apply(T a, T b) { return static_cast<T>(!a != !b); } };
struct Band { template <typename T> __device__ static T Apply(T a, T b) { return a & b; } };
struct Bor { template <typename T> __device__ static T Apply(T a, T b) { return a | b; } };
struct Bxor { template <typename T> __device__ static T Apply(T a, T b) { return a ^ b; } };

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
cudaError_t Launch(const BufferSet& b, size_t n, cudaStream_t stream) {
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

template <typename T>
cudaError_t LaunchArith(DOp op, const BufferSet& b, size_t n, cudaStream_t s) {
  switch (op) {
    case DOp::kSum: return Launch<T, Sum>(b, n, s);
    case DOp::kProd: return Launch<T, Prod>(b, n, s);
    case DOp::kMin: return Launch<T, Min>(b, n, s);
    case DOp::kMax: return Launch<T, Max>(b, n, s);
    default: return cudaErrorInvalidValue;
  }
}

template <typename T>
cudaError_t LaunchInteger(DOp op, const BufferSet& b, size_t n, cudaStream_t s) {
  switch (op) {
    case DOp::kLand: return Launch<T, Land>(b, n, s);
    case DOp::kLor: return Launch<T, Lor>(b, n, s);
    case DOp::kLxor: return Launch<T, Lxor>(b, n, s);
    case DOp::kBand: return Launch<T, Band>(b, n, s);
    case DOp::kBor: return Launch<T, Bor>(b, n, s);
    case DOp::kBxor: return Launch<T, Bxor>(b, n, s);
    default: return LaunchArith<T>(op, b, n, s);
  }
}

}  // namespace

size_t DTypeSize(DType type) {
  switch (type) {
    case DType::kI8: case DType::kU8: return 1;
    case DType::kI16: case DType::kU16: return 2;
    case DType::kI32: case DType::kU32: case DType::kF32: return 4;
    default: return 8;
  }
}

cudaError_t LaunchReduce(DType type, DOp op, const BufferSet& b, size_t n, cudaStream_t stream) {
  switch (type) {
    case DType::kI8: return LaunchInteger<int8_t>(op, b, n, stream);
    case DType::kU8: return LaunchInteger<uint8_t>(op, b, n, stream);
    case DType::kI16: return LaunchInteger<int16_t>(op, b, n, stream);
    case DType::kU16: return LaunchInteger<uint16_t>(op, b, n, stream);
    case DType::kI32: return LaunchInteger<int32_t>(op, b, n, stream);
    case DType::kU32: return LaunchInteger<uint32_t>(op, b, n, stream);
    case DType::kI64: return LaunchInteger<int64_t>(op, b, n, stream);
    case DType::kU64: return LaunchInteger<uint64_t>(op, b, n, stream);
    case DType::kF32: return LaunchArith<float>(op, b, n, stream);
    case DType::kF64: return LaunchArith<double>(op, b, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cuda
}  // namespace mla
