// flag_kernels.cu: the flag path's kernel (flag_kernels.h).
//
// Work split: the message is cut into `chunks` equal chunks of units (one
// chunk for one-shot, one per rank for two-shot; a unit is one element, or 16
// bytes of elements when every buffer is 16-byte aligned).  Inside every
// chunk, unit j belongs to block (j / blockDim) % gridDim on every rank, for
// the copy into the input area, the reduction and the gather alike.  So a
// block only ever reads what the same-numbered block of each peer wrote, and
// a barrier between the same-numbered blocks of all ranks is enough: no
// grid-wide synchronisation.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "libmlallreduce/cuda/flag_kernels.h"
#include "libmlallreduce/cuda/reduce_ops.cuh"

namespace mla::lib {
namespace cuda {
namespace {

constexpr int kFlagThreads = 256;

template <typename T, int L>
struct alignas(sizeof(T) * L) Pack {
  T v[L];
};

// The unsigned type of B bytes (uint4 for 16), which __ldcg loads.
template <int B>
using RawOf =
    std::conditional_t<B == 1, unsigned char,
                       std::conditional_t<B == 2, unsigned short,
                                          std::conditional_t<B == 4, unsigned int,
                                                             std::conditional_t<B == 8, unsigned long long, uint4>>>>;

// A load that bypasses L1 (which is not coherent with other processes' or
// GPUs' writes): peers' areas are read only after the barrier, from L2 or
// over NVLink.
template <typename P>
__device__ __forceinline__ P LoadShared(const P* p) {
  using R = RawOf<sizeof(P)>;
  const R raw = __ldcg(reinterpret_cast<const R*>(p));
  P out;
  memcpy(&out, &raw, sizeof(P));
  return out;
}

__device__ __forceinline__ void StoreRelease(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ uint32_t LoadAcquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Every block b of every rank reaches `value`: thread p tells rank p that
// this block arrived (rank p's signal[b][our rank]) and waits until rank p's
// block b told us the same.  The writes of the whole block before the call
// are visible to every rank's block b after it (bar.sync, then a system-scope
// fence and a release store; an acquire load, then bar.sync).  Flags only
// grow, so a peer already past this barrier (or the next) passes the test.
__device__ __forceinline__ void Barrier(const FlagArgs& a, uint32_t value) {
  __syncthreads();
  if (threadIdx.x < a.nranks) {
    uint32_t* theirs = reinterpret_cast<uint32_t*>(a.base[threadIdx.x]) + blockIdx.x * kFlagMaxRanks + a.rank;
    __threadfence_system();
    StoreRelease(theirs, value);
    const uint32_t* ours = reinterpret_cast<const uint32_t*>(a.base[a.rank]) + blockIdx.x * kFlagMaxRanks + threadIdx.x;
    while (static_cast<int32_t>(LoadAcquire(ours) - value) < 0) {
    }
  }
  __syncthreads();
}

template <typename T, typename Op, int L>
__global__ void __launch_bounds__(kFlagThreads)
    FlagKernel(FlagArgs a, const Pack<T, L>* send, Pack<T, L>* recv, size_t units, uint32_t call, bool two_shot) {
  using P = Pack<T, L>;
  const size_t area = kFlagSignalBytes + (call & 1u) * 2 * a.area_bytes;  // this call's parity
  auto input = [&](int r) { return reinterpret_cast<P*>(a.base[r] + area); };
  auto result = [&](int r) { return reinterpret_cast<P*>(a.base[r] + area + a.area_bytes); };
  const int chunks = two_shot ? a.nranks : 1;
  const size_t chunk = (units + chunks - 1) / chunks;
  const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;

  // 1. Our input into our input area.
  P* own = input(a.rank);
  for (int q = 0; q < chunks; ++q) {
    const size_t lo = q * chunk;
    const size_t hi = lo + chunk < units ? lo + chunk : units;
    for (size_t j = lo + first; j < hi; j += stride) own[j] = send[j];
  }
  Barrier(a, 2 * call - 1);

  // 2. Reduce, in rank order: every unit (one-shot) into recv, or our chunk
  //    (two-shot) into our result area.
  const size_t lo = two_shot ? a.rank * chunk : 0;
  const size_t hi = lo + chunk < units ? lo + chunk : units;
  P* out = two_shot ? result(a.rank) : recv;
  for (size_t j = lo + first; j < hi; j += stride) {
    P acc = LoadShared(input(0) + j);
    for (int r = 1; r < a.nranks; ++r) {
      const P in = LoadShared(input(r) + j);
#pragma unroll
      for (int k = 0; k < L; ++k) acc.v[k] = Op::Apply(acc.v[k], in.v[k]);
    }
    out[j] = acc;
  }

  // 3. Gather every rank's reduced chunk into recv.
  if (two_shot) {
    Barrier(a, 2 * call);
    for (int i = 0; i < a.nranks; ++i) {
      const int q = (a.rank + i) % a.nranks;
      const size_t qlo = q * chunk;
      const size_t qhi = qlo + chunk < units ? qlo + chunk : units;
      const P* from = result(q);
      for (size_t j = qlo + first; j < qhi; j += stride) recv[j] = LoadShared(from + j);
    }
  }

  // 4. Tell the host this block is done (its writes visible first).
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    *static_cast<volatile unsigned int*>(a.done + blockIdx.x) = call;
  }
}

template <typename T, typename Op>
struct FlagLaunch {
  static cudaError_t Run(const FlagArgs& a, const void* send, void* recv, size_t n, uint32_t call, bool two_shot,
                         cudaStream_t stream, int* launched) {
    constexpr int kLanes = 16 / sizeof(T);
    const bool wide =
        reinterpret_cast<uintptr_t>(send) % 16 == 0 && reinterpret_cast<uintptr_t>(recv) % 16 == 0 && n % kLanes == 0;
    const size_t units = wide ? n / kLanes : n;
    const int chunks = two_shot ? a.nranks : 1;
    const size_t chunk = (units + chunks - 1) / chunks;
    // The same grid on every rank (it depends on n and the group only).  All
    // blocks of all ranks must be resident at once when the ranks share a
    // GPU: at most 128 blocks of the group in all.
    size_t blocks = (chunk + kFlagThreads - 1) / kFlagThreads;
    size_t cap = static_cast<size_t>(128 / a.nranks);
    if (cap > static_cast<size_t>(kFlagMaxBlocks)) cap = kFlagMaxBlocks;
    if (cap < 1) cap = 1;
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    *launched = static_cast<int>(blocks);
    const dim3 grid(static_cast<unsigned>(blocks));
    if (wide) {
      using P = Pack<T, kLanes>;
      FlagKernel<T, Op, kLanes><<<grid, kFlagThreads, 0, stream>>>(a, static_cast<const P*>(send),
                                                                   static_cast<P*>(recv), units, call, two_shot);
    } else {
      using P = Pack<T, 1>;
      FlagKernel<T, Op, 1><<<grid, kFlagThreads, 0, stream>>>(a, static_cast<const P*>(send), static_cast<P*>(recv),
                                                              units, call, two_shot);
    }
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t LaunchFlagAllreduce(DType type, DOp op, const FlagArgs& args, const void* send, void* recv, size_t n,
                                uint32_t call_number, bool two_shot, cudaStream_t stream, int* blocks) {
  *blocks = 0;
  return DispatchReduction<FlagLaunch>(type, op, args, send, recv, n, call_number, two_shot, stream, blocks);
}

}  // namespace cuda
}  // namespace mla::lib
