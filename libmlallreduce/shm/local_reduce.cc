#include "libmlallreduce/shm/local_reduce.h"

#include <cstdint>
#include <type_traits>

namespace mla::lib {
namespace {

enum class Kind { kNone, kSum, kProd, kBand, kBor, kBxor };

template <class T, class F>
void Loop(const void* in, void* inout, int count, F f) {
  const T* __restrict a = static_cast<const T*>(in);
  T* __restrict b = static_cast<T*>(inout);
  for (int i = 0; i < count; ++i) b[i] = f(a[i], b[i]);
}

// Signed integers wrap as unsigned ones do (no undefined overflow).
template <class T, bool = std::is_integral_v<T>>
struct WrapOf {
  using type = T;
};
template <class T>
struct WrapOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using Wrap = typename WrapOf<T>::type;

template <class T>
bool Typed(Kind kind, const void* in, void* inout, int count) {
  switch (kind) {
    case Kind::kSum:
      Loop<T>(in, inout, count,
              [](T x, T y) { return static_cast<T>(static_cast<Wrap<T>>(x) + static_cast<Wrap<T>>(y)); });
      return true;
    case Kind::kProd:
      Loop<T>(in, inout, count,
              [](T x, T y) { return static_cast<T>(static_cast<Wrap<T>>(x) * static_cast<Wrap<T>>(y)); });
      return true;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (kind) {
      case Kind::kBand:
        Loop<T>(in, inout, count, [](T x, T y) { return static_cast<T>(x & y); });
        return true;
      case Kind::kBor:
        Loop<T>(in, inout, count, [](T x, T y) { return static_cast<T>(x | y); });
        return true;
      case Kind::kBxor:
        Loop<T>(in, inout, count, [](T x, T y) { return static_cast<T>(x ^ y); });
        return true;
      default:
        break;
    }
  }
  // MIN and MAX: the MPI's own rule (Open MPI 4.1 compares MPI_UNSIGNED_LONG
  // as signed, and floats have NaNs and signed zeros).
  return false;
}

Kind KindOf(MPI_Op op) {
  if (op == MPI_SUM) return Kind::kSum;
  if (op == MPI_PROD) return Kind::kProd;
  if (op == MPI_BAND) return Kind::kBand;
  if (op == MPI_BOR) return Kind::kBor;
  if (op == MPI_BXOR) return Kind::kBxor;
  return Kind::kNone;
}

// Runs the typed loop of (datatype, kind) when there is one; `in` null: only asks.
bool Dispatch(MPI_Datatype t, Kind k, const void* in, void* inout, int count) {
  if (k == Kind::kNone) return false;
  const bool run = in != nullptr;
  auto go = [&](auto tag) {
    using T = decltype(tag);
    if (!run) return k == Kind::kSum || k == Kind::kProd || std::is_integral_v<T>;
    return Typed<T>(k, in, inout, count);
  };
  if (t == MPI_INT || t == MPI_INT32_T) return go(int32_t{});
  if (t == MPI_UNSIGNED || t == MPI_UINT32_T) return go(uint32_t{});
  if (t == MPI_LONG) return go(long{});
  if (t == MPI_UNSIGNED_LONG) return go(static_cast<unsigned long>(0));
  if (t == MPI_LONG_LONG || t == MPI_INT64_T) return go(int64_t{});
  if (t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T) return go(uint64_t{});
  if (t == MPI_SHORT || t == MPI_INT16_T) return go(int16_t{});
  if (t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T) return go(uint16_t{});
  if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T) return go(int8_t{});
  if (t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T) return go(uint8_t{});
  if (t == MPI_FLOAT) return go(float{});
  if (t == MPI_DOUBLE) return go(double{});
  return false;
}

}  // namespace

bool HasTypedLoop(MPI_Datatype datatype, MPI_Op op) { return Dispatch(datatype, KindOf(op), nullptr, nullptr, 0); }

int LocalReduce(const void* in, void* inout, int count, MPI_Datatype datatype, MPI_Op op) {
  if (count <= 0) return MPI_SUCCESS;
  if (Dispatch(datatype, KindOf(op), in, inout, count)) return MPI_SUCCESS;
  return PMPI_Reduce_local(in, inout, count, datatype, op);
}

}  // namespace mla::lib
