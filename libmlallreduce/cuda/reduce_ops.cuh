// reduce_ops.cuh: the element operations of the predefined MPI ops, shared by
// the device kernels (reduce_kernels.cu, flag_kernels.cu).
#ifndef MLA_CUDA_REDUCE_OPS_CUH_
#define MLA_CUDA_REDUCE_OPS_CUH_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "libmlallreduce/cuda/reduce_kernels.h"

namespace mla::lib {
namespace cuda {

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

// Calls Launcher<T, Op>::Run(args...) for the element type and op of
// (type, op); cudaErrorInvalidValue for an op the type does not take (the
// bitwise and logical ops exist for integer types only).
template <template <typename, typename> class Launcher, typename T, typename... Args>
cudaError_t DispatchArith(DOp op, Args&&... args) {
  switch (op) {
    case DOp::kSum: return Launcher<T, Sum>::Run(args...);
    case DOp::kProd: return Launcher<T, Prod>::Run(args...);
    case DOp::kMin: return Launcher<T, Min>::Run(args...);
    case DOp::kMax: return Launcher<T, Max>::Run(args...);
    default: return cudaErrorInvalidValue;
  }
}

template <template <typename, typename> class Launcher, typename T, typename... Args>
cudaError_t DispatchInteger(DOp op, Args&&... args) {
  switch (op) {
    case DOp::kLand: return Launcher<T, Land>::Run(args...);
    case DOp::kLor: return Launcher<T, Lor>::Run(args...);
    case DOp::kLxor: return Launcher<T, Lxor>::Run(args...);
    case DOp::kBand: return Launcher<T, Band>::Run(args...);
    case DOp::kBor: return Launcher<T, Bor>::Run(args...);
    case DOp::kBxor: return Launcher<T, Bxor>::Run(args...);
    default: return DispatchArith<Launcher, T>(op, args...);
  }
}

template <template <typename, typename> class Launcher, typename... Args>
cudaError_t DispatchReduction(DType type, DOp op, Args&&... args) {
  switch (type) {
    case DType::kI8: return DispatchInteger<Launcher, int8_t>(op, args...);
    case DType::kU8: return DispatchInteger<Launcher, uint8_t>(op, args...);
    case DType::kI16: return DispatchInteger<Launcher, int16_t>(op, args...);
    case DType::kU16: return DispatchInteger<Launcher, uint16_t>(op, args...);
    case DType::kI32: return DispatchInteger<Launcher, int32_t>(op, args...);
    case DType::kU32: return DispatchInteger<Launcher, uint32_t>(op, args...);
    case DType::kI64: return DispatchInteger<Launcher, int64_t>(op, args...);
    case DType::kU64: return DispatchInteger<Launcher, uint64_t>(op, args...);
    case DType::kF32: return DispatchArith<Launcher, float>(op, args...);
    case DType::kF64: return DispatchArith<Launcher, double>(op, args...);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_REDUCE_OPS_CUH_
