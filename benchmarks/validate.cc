// validate.cc: exact-result send data and result checks (see validate.h).
#include "benchmarks/validate.h"

#include <algorithm>
#include <cstring>

namespace mlabench {
namespace {

// The class of element i: the top 7 bits of a multiplicative (Fibonacci) hash.
inline unsigned element_class(uint64_t i) { return static_cast<unsigned>((i * 0x9E3779B97F4A7C15ull) >> 57); }

int64_t value_of(RedOp op, int64_t rank, int64_t c) {
  if (op == RedOp::kProd) {
    if (rank == c) return 2;
    if (((7 * rank + c) & 127) == 0) return -1;
    return 1;
  }
  return ((7 * rank + c) & 127) - 64;
}

int64_t combine(RedOp op, int64_t a, int64_t b) {
  if (op == RedOp::kSum) return a + b;
  if (op == RedOp::kProd) return a * b;
  return op == RedOp::kMin ? std::min(a, b) : std::max(a, b);
}

template <typename T>
void fill_t(T* p, size_t count, const int64_t* table) {
  for (size_t i = 0; i < count; ++i) p[i] = static_cast<T>(table[element_class(i)]);
}

template <typename T>
uint64_t count_t(const T* p, const T* rank0, size_t count, const int64_t* table) {
  uint64_t wrong = 0;
  for (size_t i = 0; i < count; ++i)
    wrong += !(p[i] == static_cast<T>(table[element_class(i)])) || (rank0 && memcmp(&p[i], &rank0[i], sizeof(T)) != 0);
  return wrong;
}

// f(T()) with T the C type of t.
template <typename F>
auto dispatch(DataType t, F f) {
  if (t == DataType::kFloat) return f(float());
  if (t == DataType::kDouble) return f(double());
  return t == DataType::kInt32 ? f(int32_t()) : f(int64_t());
}

}  // namespace

Reference::Reference(DataType type, RedOp op, int nranks, int rank) : type_(type) {
  for (int c = 0; c < kClasses; ++c) {
    mine_[c] = value_of(op, rank, c);
    int64_t acc = value_of(op, 0, c);
    for (int r = 1; r < nranks; ++r) acc = combine(op, acc, value_of(op, r, c));
    expected_[c] = acc;
  }
}

void Reference::fill(void* host, size_t count) const {
  dispatch(type_, [&](auto tag) { return fill_t(static_cast<decltype(tag)*>(host), count, mine_); });
}

uint64_t Reference::count_wrong(const void* host, const void* rank0, size_t count) const {
  return dispatch(type_, [&](auto tag) {
    using T = const decltype(tag)*;
    return count_t(static_cast<T>(host), static_cast<T>(rank0), count, expected_);
  });
}

uint64_t Reference::count_send_changed(const void* host, size_t count) const {
  return dispatch(type_, [&](auto tag) {
    return count_t(static_cast<const decltype(tag)*>(host), static_cast<const decltype(tag)*>(nullptr), count, mine_);
  });
}

uint64_t hash_bytes(const void* p, size_t bytes) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  uint64_t h = 0xcbf29ce484222325ull ^ bytes;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < bytes; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

bool same_on_all_ranks(uint64_t v, MPI_Comm comm) {
  uint64_t in[2] = {v, ~v}, out[2];
  PMPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, comm);
  return out[0] == ~out[1];  // max == min
}

}  // namespace mlabench
