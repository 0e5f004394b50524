// allreduce_cases.h: the data and the calls the suites of allreduce_mpi_test
// share: element kinds (generators and comparisons by value) for every
// predefined type, the ways a call is made (forced algorithm, intercepted
// MPI_Allreduce, mla_allreduce), the counter checks, and RunCase, which runs
// one (type, op, count) through every variant against PMPI_Allreduce.
#ifndef MLA_TESTS_MPI_ALLREDUCE_CASES_H_
#define MLA_TESTS_MPI_ALLREDUCE_CASES_H_

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "allreduce_support.h"
#include "mlallreduce.h"

namespace mlatest {

// ---------------------------------------------------------------------------
// Data generators and element comparisons by value.

template <class T>
std::string ShowNum(const T& v) {
  std::ostringstream o;
  if constexpr (std::is_same_v<T, bool>) {
    o << (v ? "true" : "false");
  } else if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>)
      o << static_cast<long long>(v);
    else
      o << static_cast<unsigned long long>(v);
  } else {
    o.precision(std::numeric_limits<T>::max_digits10);
    o << v;
  }
  return o.str();
}

template <class T>
T Load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
void Store(void* p, const T& v) {
  std::memcpy(p, &v, sizeof(T));
}

template <class T>
struct IntKind {
  using type = T;
  static T Gen(MPI_Op op, Rng& rng) {
    constexpr bool sgn = std::is_signed_v<T>;
    if (op == MPI_SUM) return static_cast<T>(sgn ? Uni(rng, -3, 3) : Uni(rng, 0, 5));
    if (op == MPI_PROD) return static_cast<T>(sgn ? (Uni(rng, 0, 1) ? 1 : -1) : Uni(rng, 1, 2));
    if (op == MPI_MIN || op == MPI_MAX) {
      if (sgn) return static_cast<T>(Uni(rng, -60, 60));
      // Unsigned: half the values with the top bit set, so that comparing
      // them as signed picks other elements (issue 27).
      const T low = static_cast<T>(Uni(rng, 0, 120));
      return Uni(rng, 0, 1) ? low : static_cast<T>(std::numeric_limits<T>::max() / 2 + 1 + low);
    }
    if (op == MPI_LAND) return static_cast<T>(Uni(rng, 0, 9) ? Uni(rng, 1, 3) : 0);
    if (op == MPI_LOR) return static_cast<T>(Uni(rng, 0, 9) ? 0 : Uni(rng, 1, 3));
    if (op == MPI_LXOR) return static_cast<T>(Uni(rng, 0, 2));
    uint64_t r;
    if (op == MPI_BAND)
      r = rng() | rng() | rng();  // bits mostly 1
    else if (op == MPI_BOR)
      r = rng() & rng() & rng();  // bits mostly 0
    else
      r = rng();
    T v;
    std::memcpy(&v, &r, sizeof(T));
    return v;
  }
  static void Fill(MPI_Op op, Rng& rng, void* buf, int n) {
    for (int i = 0; i < n; ++i) Store(static_cast<char*>(buf) + i * sizeof(T), Gen(op, rng));
  }
  static bool Equal(const void* a, const void* b) { return Load<T>(a) == Load<T>(b); }
  static std::string Show(const void* a) { return ShowNum(Load<T>(a)); }
};

struct BoolKind {
  using type = bool;
  static void Fill(MPI_Op op, Rng& rng, void* buf, int n) {
    for (int i = 0; i < n; ++i) {
      bool v;
      if (op == MPI_LAND)
        v = Uni(rng, 0, 9) != 0;
      else if (op == MPI_LOR)
        v = Uni(rng, 0, 9) == 0;
      else
        v = Uni(rng, 0, 1) != 0;
      Store(static_cast<char*>(buf) + i * sizeof(bool), v);
    }
  }
  static bool Equal(const void* a, const void* b) {
    // compare the truth value; both must be canonical 0/1 bytes
    unsigned char x = Load<unsigned char>(a), y = Load<unsigned char>(b);
    return x == y && x <= 1;
  }
  static std::string Show(const void* a) { return ShowNum(int(Load<unsigned char>(a))); }
};

template <class T>
struct FloatKind {
  using type = T;
  static void Fill(MPI_Op op, Rng& rng, void* buf, int n) {
    static const int prod_vals[] = {-2, -1, 1, 2};
    for (int i = 0; i < n; ++i) {
      T v;
      if (op == MPI_SUM)
        v = static_cast<T>(Uni(rng, -8, 8));
      else if (op == MPI_PROD)
        v = static_cast<T>(prod_vals[Uni(rng, 0, 3)]);
      else
        v = static_cast<T>(Uni(rng, -100, 100));
      Store(static_cast<char*>(buf) + i * sizeof(T), v);
    }
  }
  static bool Equal(const void* a, const void* b) { return Load<T>(a) == Load<T>(b); }
  static std::string Show(const void* a) { return ShowNum(Load<T>(a)); }
};

template <class T>
struct ComplexKind {
  using type = std::complex<T>;
  static void Fill(MPI_Op op, Rng& rng, void* buf, int n) {
    static const int prod_vals[][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}};
    for (int i = 0; i < n; ++i) {
      T re, im;
      if (op == MPI_SUM) {
        re = static_cast<T>(Uni(rng, -8, 8));
        im = static_cast<T>(Uni(rng, -8, 8));
      } else {
        auto& p = prod_vals[Uni(rng, 0, 5)];
        re = static_cast<T>(p[0]);
        im = static_cast<T>(p[1]);
      }
      char* e = static_cast<char*>(buf) + i * sizeof(type);
      Store(e, re);  // C _Complex layout: real, then imaginary
      Store(e + sizeof(T), im);
    }
  }
  static bool Equal(const void* a, const void* b) {
    const char* x = static_cast<const char*>(a);
    const char* y = static_cast<const char*>(b);
    return Load<T>(x) == Load<T>(y) && Load<T>(x + sizeof(T)) == Load<T>(y + sizeof(T));
  }
  static std::string Show(const void* a) {
    const char* x = static_cast<const char*>(a);
    return "(" + ShowNum(Load<T>(x)) + "," + ShowNum(Load<T>(x + sizeof(T))) + ")";
  }
};

template <class V>
struct PairOf {
  V v;
  int i;
};

template <class V>
struct PairKind {
  using type = PairOf<V>;
  static constexpr size_t kIdx = offsetof(PairOf<V>, i);
  static void Fill(MPI_Op, Rng& rng, void* buf, int n) {
    for (int k = 0; k < n; ++k) {
      char* e = static_cast<char*>(buf) + k * sizeof(type);
      Store(e, static_cast<V>(Uni(rng, -2, 2)));  // many ties
      Store(e + kIdx, static_cast<int>(Uni(rng, 0, 5)));
    }
  }
  static bool Equal(const void* a, const void* b) {
    const char* x = static_cast<const char*>(a);
    const char* y = static_cast<const char*>(b);
    return Load<V>(x) == Load<V>(y) && Load<int>(x + kIdx) == Load<int>(y + kIdx);
  }
  static std::string Show(const void* a) {
    const char* x = static_cast<const char*>(a);
    return "{" + ShowNum(Load<V>(x)) + "," + ShowNum(Load<int>(x + kIdx)) + "}";
  }
};

struct TypeCase {
  std::string name;
  MPI_Datatype type;
  size_t extent;  // sizeof the C type; checked against the MPI extent
  void (*fill)(MPI_Op, Rng&, void*, int);
  bool (*equal)(const void*, const void*);
  std::string (*show)(const void*);
  std::vector<MPI_Op> ops;
};

template <class K>
TypeCase Make(const char* name, MPI_Datatype dt, std::vector<MPI_Op> ops) {
  return TypeCase{name, dt, sizeof(typename K::type), &K::Fill, &K::Equal, &K::Show, std::move(ops)};
}

// Every predefined type with the predefined ops valid on it, by family.
std::vector<TypeCase> IntegerCases();
std::vector<TypeCase> ByteBoolCases();
std::vector<TypeCase> FloatCases();
std::vector<TypeCase> ComplexCases();
std::vector<TypeCase> PairCases();

// Whether the system MPI accepts (type, op): a one-element PMPI_Allreduce on
// a private copy of MPI_COMM_SELF with MPI_ERRORS_RETURN.  Same on all ranks.
bool MpiAccepts(MPI_Datatype dt, MPI_Op op);

// Commutative user op summing the ints of MPI_Type_vector(2, 1, 2, MPI_INT)
// elements (ints 0 and 2 of every 3), leaving the holes alone.
void UserVectorSum(void* in, void* inout, int* len, MPI_Datatype*);

// ---------------------------------------------------------------------------
// Variants: how a call is made.

struct Variant {
  enum Kind { kWith, kIntercepted, kMlaAllreduce } kind;
  mla_choice choice;
  std::string name;
};

// "lane(lanes=L,chunk=C)".
std::string ChoiceName(const mla_choice& c);
// A choice with every other field (transport, ...) zero: the defaults.
mla_choice MakeChoice(mla_algo algo, int lanes, uint64_t chunk);
// The variant forcing (algo, lanes, chunk) through mla_allreduce_with.
Variant With(mla_algo algo, int lanes, uint64_t chunk);

// All the variants for comm: each algorithm with lanes 0/smaller and chunk
// 0/small, the intercepted MPI_Allreduce and mla_allreduce.  tiny_chunk adds
// lane and split with a 1-byte chunk (smaller than any element).
std::vector<Variant> AllVariants(MPI_Comm comm, bool tiny_chunk = false);
// Only the multilane algorithms with default parameters.
std::vector<Variant> MultilaneVariants();
// Makes the call the way the variant says; returns its MPI error code.
int Call(const Variant& v, const void* s, void* r, int n, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
// The algorithm the variant asks for, or -1 when unpredictable.
int VariantAlgo(const Variant& v);

// Checks the counters moved as one call of (dt, count) by algo should move
// them.  can_run: AlgoCanRun for the call.  Returns "" or what is wrong.
std::string CheckStatsDelta(const mla_stats& b, const mla_stats& a, int algo, bool can_run, MPI_Datatype dt, int count);
// Checks a call that must run multilane (or, on an irregular layout or a
// one-rank communicator, go to PMPI counted as unsupported).
void ExpectRanMultilane(const mla_stats& b, const mla_stats& a, mla_algo algo, MPI_Comm comm, MPI_Datatype dt,
                        MPI_Op op, const std::string& what, Local& local);
// Checks a call that must go to PMPI_Allreduce counted as unsupported.
void ExpectUnsupported(const mla_stats& b, const mla_stats& a, mla_algo algo, const std::string& what, Local& local);

// ---------------------------------------------------------------------------
// Running one (type, op, count) case through all variants.

struct CaseOptions {
  bool in_place = true;
  bool check_stats = true;
  uint64_t salt = 0;
};

// Runs (tc, op, count) on comm through every variant (and in place, unless
// opt says not), comparing each result with PMPI_Allreduce's bit by bit and
// the counters with CheckStatsDelta.  Collective over comm.
void RunCase(MPI_Comm comm, const TypeCase& tc, MPI_Op op, int count, const std::vector<Variant>& variants,
             const CaseOptions& opt, Local& local);
// RunCase for every case and every op the system MPI accepts, after checking
// the MPI extent and that the library supports predefined (type, op).
void RunTypeMatrix(const std::vector<TypeCase>& cases, MPI_Comm comm, int count, Local& local);

}  // namespace mlatest

#endif  // MLA_TESTS_MPI_ALLREDUCE_CASES_H_
