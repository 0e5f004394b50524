// End-to-end MPI tests of libmlallreduce.
//
// Runs under mpirun with any number of ranks (tests/CMakeLists.txt registers
// 1..8 ranks, virtual multi-node layouts and an irregular one).  Every test
// compares the library's algorithms (forced through mla_allreduce_with, and
// the intercepted MPI_Allreduce) with PMPI_Allreduce on the same data.
//
// Rules every test follows so that all ranks agree and nothing hangs:
//  - every rank runs the same sequence of collective calls (no early ASSERT);
//  - checks are local; at the end the local verdict is reduced over
//    MPI_COMM_WORLD with PMPI_Allreduce(MIN) and only then asserted, so all
//    ranks pass or fail together; each failing rank prints its first mismatch
//    to stderr as "[rank R] ...".
//  - only world rank 0 keeps gtest's printer; the exit code is reduced (MAX).
//
// Environment read by the tests themselves (set by the CTest registration):
//   MLA_TEST_EXPECT_DISABLED=1  the library must report mla_enabled()==0.

#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "../gtest_filter_check.h"
#include "mlallreduce.h"

namespace {

constexpr uint64_t kSeed = 0x6d756c74696c616eULL;  // fixed: "multilan"

int g_rank = 0;
int g_size = 1;
int g_provided = MPI_THREAD_SINGLE;

using Rng = std::mt19937_64;

Rng MakeRng(uint64_t salt, int rank) {
  std::seed_seq seq{static_cast<uint32_t>(kSeed), static_cast<uint32_t>(kSeed >> 32),
                    static_cast<uint32_t>(salt), static_cast<uint32_t>(salt >> 32),
                    static_cast<uint32_t>(rank)};
  return Rng(seq);
}

long long Uni(Rng& rng, long long lo, long long hi) {
  return std::uniform_int_distribution<long long>(lo, hi)(rng);
}

uint64_t HashString(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

uint64_t HashBytes(const void* p, size_t n, uint64_t h = 1469598103934665603ULL) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

// ---------------------------------------------------------------------------
// Agreement across ranks.

// Collects this rank's failures; remembers the first one in detail.
class Local {
 public:
  void Fail(const std::string& what) {
    if (failures_ == 0) first_ = what;
    ++failures_;
  }
  bool ok() const { return failures_ == 0; }
  long failures() const { return failures_; }
  const std::string& first() const { return first_; }

 private:
  long failures_ = 0;
  std::string first_;
};

bool AllRanksTrue(bool local) {
  int v = local ? 1 : 0, all = 0;
  PMPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// Reduces the verdict over all ranks, prints the local detail, asserts.
#define EXPECT_ALL_RANKS_OK(local)                                                     \
  do {                                                                                 \
    const Local& l_ = (local);                                                         \
    if (!l_.ok()) {                                                                    \
      std::fprintf(stderr, "[rank %d] %ld failure(s); first: %s\n", g_rank,           \
                   l_.failures(), l_.first().c_str());                                 \
      std::fflush(stderr);                                                             \
    }                                                                                  \
    bool all_ok_ = AllRanksTrue(l_.ok());                                              \
    EXPECT_TRUE(all_ok_) << "some rank failed (see the [rank N] lines); this rank: "   \
                         << (l_.ok() ? std::string("ok") : l_.first());                \
  } while (0)

// ---------------------------------------------------------------------------
// Environment helpers.

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

int EnvInt(const char* name, int dflt) {
  const char* v = Env(name);
  return v ? std::atoi(v) : dflt;
}

bool ExpectDisabled() { return EnvInt("MLA_TEST_EXPECT_DISABLED", 0) != 0; }

// The algorithm the intercepted MPI_Allreduce is expected to choose, or -1
// when it cannot be predicted (a profile is set).
int InterceptedAlgo() {
  if (!mla_enabled()) return -1;
  const char* a = Env("MULTILANE_ALGO");
  if (a) {
    mla_algo algo;
    if (mla_algo_from_name(a, &algo)) return algo;
    return -1;
  }
  if (Env("MULTILANE_PROFILE") || Env("MULTILANE_PROFILE_FILE")) return -1;
  return MLA_ALGO_PASSTHROUGH;  // no algorithm and no profile: system MPI
}

// ---------------------------------------------------------------------------
// Aligned buffers of exact size (ASan catches overruns past n bytes).

class Buf {
 public:
  Buf() = default;
  explicit Buf(size_t n) : n_(n) {
    p_ = static_cast<unsigned char*>(::operator new(n ? n : 1, std::align_val_t(64)));
  }
  Buf(const Buf& o) : Buf(o.n_) { if (n_) std::memcpy(p_, o.p_, n_); }
  Buf& operator=(const Buf& o) {
    Buf t(o);
    std::swap(p_, t.p_);
    std::swap(n_, t.n_);
    return *this;
  }
  ~Buf() {
    if (p_) ::operator delete(p_, std::align_val_t(64));
  }
  unsigned char* data() { return p_; }
  const unsigned char* data() const { return p_; }
  size_t size() const { return n_; }
  void FillRandom(Rng& rng) {
    for (size_t i = 0; i < n_; ++i) p_[i] = static_cast<unsigned char>(rng());
  }
  void Fill(unsigned char b) { std::memset(p_, b, n_); }
  bool SameBytes(const Buf& o) const {
    return n_ == o.n_ && (n_ == 0 || std::memcmp(p_, o.p_, n_) == 0);
  }

 private:
  unsigned char* p_ = nullptr;
  size_t n_ = 0;
};

// ---------------------------------------------------------------------------
// Names.

std::string OpName(MPI_Op op) {
  struct { MPI_Op op; const char* name; } names[] = {
      {MPI_SUM, "MPI_SUM"},   {MPI_PROD, "MPI_PROD"}, {MPI_MIN, "MPI_MIN"},
      {MPI_MAX, "MPI_MAX"},   {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},
      {MPI_LXOR, "MPI_LXOR"}, {MPI_BAND, "MPI_BAND"}, {MPI_BOR, "MPI_BOR"},
      {MPI_BXOR, "MPI_BXOR"}, {MPI_MINLOC, "MPI_MINLOC"}, {MPI_MAXLOC, "MPI_MAXLOC"}};
  for (auto& n : names)
    if (n.op == op) return n.name;
  return "user-op";
}

std::string CommName(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return "world";
  if (comm == MPI_COMM_SELF) return "self";
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  MPI_Comm_get_name(comm, name, &len);
  return len ? std::string(name) : std::string("comm");
}

// ---------------------------------------------------------------------------
// Data generators and element comparisons by value.

template <class T>
std::string ShowNum(const T& v) {
  std::ostringstream o;
  if constexpr (std::is_same_v<T, bool>) {
    o << (v ? "true" : "false");
  } else if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) o << static_cast<long long>(v);
    else o << static_cast<unsigned long long>(v);
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
    if (op == MPI_BAND) r = rng() | rng() | rng();       // bits mostly 1
    else if (op == MPI_BOR) r = rng() & rng() & rng();   // bits mostly 0
    else r = rng();
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
      if (op == MPI_LAND) v = Uni(rng, 0, 9) != 0;
      else if (op == MPI_LOR) v = Uni(rng, 0, 9) == 0;
      else v = Uni(rng, 0, 1) != 0;
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
      if (op == MPI_SUM) v = static_cast<T>(Uni(rng, -8, 8));
      else if (op == MPI_PROD) v = static_cast<T>(prod_vals[Uni(rng, 0, 3)]);
      else v = static_cast<T>(Uni(rng, -100, 100));
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
      Store(e, re);               // C _Complex layout: real, then imaginary
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
  return TypeCase{name, dt, sizeof(typename K::type), &K::Fill, &K::Equal, &K::Show,
                  std::move(ops)};
}

const std::vector<MPI_Op> kIntOps = {MPI_SUM,  MPI_PROD, MPI_MIN,  MPI_MAX,  MPI_LAND,
                                     MPI_LOR,  MPI_LXOR, MPI_BAND, MPI_BOR,  MPI_BXOR};
const std::vector<MPI_Op> kMultiLangOps = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX,
                                           MPI_BAND, MPI_BOR, MPI_BXOR};
const std::vector<MPI_Op> kFloatOps = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
const std::vector<MPI_Op> kComplexOps = {MPI_SUM, MPI_PROD};
const std::vector<MPI_Op> kLocOps = {MPI_MINLOC, MPI_MAXLOC};

std::vector<TypeCase> IntegerCases() {
  return {
      Make<IntKind<signed char>>("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, kIntOps),
      Make<IntKind<unsigned char>>("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, kIntOps),
      Make<IntKind<short>>("MPI_SHORT", MPI_SHORT, kIntOps),
      Make<IntKind<unsigned short>>("MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, kIntOps),
      Make<IntKind<int>>("MPI_INT", MPI_INT, kIntOps),
      Make<IntKind<unsigned>>("MPI_UNSIGNED", MPI_UNSIGNED, kIntOps),
      Make<IntKind<long>>("MPI_LONG", MPI_LONG, kIntOps),
      Make<IntKind<unsigned long>>("MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, kIntOps),
      Make<IntKind<long long>>("MPI_LONG_LONG", MPI_LONG_LONG, kIntOps),
      Make<IntKind<unsigned long long>>("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG,
                                        kIntOps),
      Make<IntKind<int8_t>>("MPI_INT8_T", MPI_INT8_T, kIntOps),
      Make<IntKind<int16_t>>("MPI_INT16_T", MPI_INT16_T, kIntOps),
      Make<IntKind<int32_t>>("MPI_INT32_T", MPI_INT32_T, kIntOps),
      Make<IntKind<int64_t>>("MPI_INT64_T", MPI_INT64_T, kIntOps),
      Make<IntKind<uint8_t>>("MPI_UINT8_T", MPI_UINT8_T, kIntOps),
      Make<IntKind<uint16_t>>("MPI_UINT16_T", MPI_UINT16_T, kIntOps),
      Make<IntKind<uint32_t>>("MPI_UINT32_T", MPI_UINT32_T, kIntOps),
      Make<IntKind<uint64_t>>("MPI_UINT64_T", MPI_UINT64_T, kIntOps),
      Make<IntKind<MPI_Aint>>("MPI_AINT", MPI_AINT, kMultiLangOps),
      Make<IntKind<MPI_Offset>>("MPI_OFFSET", MPI_OFFSET, kMultiLangOps),
      Make<IntKind<MPI_Count>>("MPI_COUNT", MPI_COUNT, kMultiLangOps),
  };
}

std::vector<TypeCase> ByteBoolCases() {
  return {
      Make<IntKind<unsigned char>>("MPI_BYTE", MPI_BYTE, {MPI_BAND, MPI_BOR, MPI_BXOR}),
      Make<BoolKind>("MPI_C_BOOL", MPI_C_BOOL, {MPI_LAND, MPI_LOR, MPI_LXOR}),
  };
}

std::vector<TypeCase> FloatCases() {
  return {
      Make<FloatKind<float>>("MPI_FLOAT", MPI_FLOAT, kFloatOps),
      Make<FloatKind<double>>("MPI_DOUBLE", MPI_DOUBLE, kFloatOps),
      Make<FloatKind<long double>>("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, kFloatOps),
  };
}

std::vector<TypeCase> ComplexCases() {
  return {
      Make<ComplexKind<float>>("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, kComplexOps),
      Make<ComplexKind<double>>("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, kComplexOps),
      Make<ComplexKind<long double>>("MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX,
                                     kComplexOps),
  };
}

std::vector<TypeCase> PairCases() {
  return {
      Make<PairKind<int>>("MPI_2INT", MPI_2INT, kLocOps),
      Make<PairKind<float>>("MPI_FLOAT_INT", MPI_FLOAT_INT, kLocOps),
      Make<PairKind<double>>("MPI_DOUBLE_INT", MPI_DOUBLE_INT, kLocOps),
      Make<PairKind<long>>("MPI_LONG_INT", MPI_LONG_INT, kLocOps),
      Make<PairKind<short>>("MPI_SHORT_INT", MPI_SHORT_INT, kLocOps),
      Make<PairKind<long double>>("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, kLocOps),
  };
}

// Whether the system MPI accepts (type, op): a one-element PMPI_Allreduce on
// a private copy of MPI_COMM_SELF with MPI_ERRORS_RETURN.  Same on all ranks.
bool MpiAccepts(MPI_Datatype dt, MPI_Op op) {
  static MPI_Comm probe = MPI_COMM_NULL;
  if (probe == MPI_COMM_NULL) {
    MPI_Comm_dup(MPI_COMM_SELF, &probe);
    MPI_Comm_set_errhandler(probe, MPI_ERRORS_RETURN);
  }
  alignas(64) unsigned char in[64] = {0}, out[64] = {0};
  return PMPI_Allreduce(in, out, 1, dt, op, probe) == MPI_SUCCESS;
}

// ---------------------------------------------------------------------------
// Layout and support oracles.

struct LayoutInfo {
  bool ok = false;
  mla_layout l{};
};

LayoutInfo GetLayout(MPI_Comm comm) {
  LayoutInfo li;
  li.ok = mla_comm_layout(comm, &li.l) == MPI_SUCCESS;
  return li;
}

bool IsInter(MPI_Comm comm) {
  int flag = 0;
  MPI_Comm_test_inter(comm, &flag);
  return flag != 0;
}

int CommSize(MPI_Comm comm) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}
int CommRank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

// Smallest ranks_per_node over the ranks of comm (same on all of them).
int MinRanksPerNode(MPI_Comm comm) {
  if (IsInter(comm)) return 1;
  LayoutInfo li = GetLayout(comm);
  int mine = li.ok ? std::max(1, li.l.ranks_per_node) : 1, all = 1;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all;
}

std::vector<int> NodeIds(MPI_Comm comm);

// The ranks of the smallest node of comm (from NodeIds).
int MinNodeSize(MPI_Comm comm) {
  std::map<int, int> sizes;
  for (int id : NodeIds(comm)) ++sizes[id];
  int m = 0;
  for (const auto& kv : sizes) m = m == 0 ? kv.second : std::min(m, kv.second);
  return m;
}

// True when a call of `algo` (forced) can run on (dt, op, comm); false when
// it must go to PMPI_Allreduce and count as unsupported.  Passthrough always
// "runs".  Mirrors the documented rules: mla_call_supported; a regular layout
// and, for split, ranks per GPU dividing the node; an irregular one is folded
// onto a core of the smallest node's size, where split needs ranks per GPU
// dividing that size.  Collective over comm.
// Whether the GPU groups of the core of an irregular comm (the first
// `smallest` ranks of each node, in comm order) all hold the same number of
// ranks: consecutive ranks of a (virtual) node of the host share a GPU, ppg
// at a time (this host's ranks are MPI_COMM_WORLD's).  Collective over comm.
bool CoreGpuGroupsEqual(MPI_Comm comm, int smallest) {
  const int ppg = std::max(1, EnvInt("MULTILANE_RANKS_PER_GPU", 0));
  const std::vector<int> ids = NodeIds(comm);
  const int n = CommSize(comm);
  std::vector<int> world(n);
  PMPI_Allgather(&g_rank, 1, MPI_INT, world.data(), 1, MPI_INT, comm);
  if (ppg == 1) return true;
  const int rpn_env = EnvInt("MULTILANE_RANKS_PER_NODE", 0);
  std::map<int, int> seen;
  std::map<std::pair<int, int>, int> groups;
  for (int r = 0; r < n; ++r) {
    if (seen[ids[r]]++ >= smallest) continue;  // not in the core
    const int index_on_node = rpn_env > 0 ? world[r] % rpn_env : world[r];
    ++groups[{ids[r], index_on_node / ppg}];
  }
  for (const auto& kv : groups)
    if (kv.second != groups.begin()->second) return false;
  return true;
}

// True when a call of `algo` (forced) can run on (dt, op, comm); false when
// it must go to PMPI_Allreduce and count as unsupported.  Passthrough always
// "runs".  Mirrors the documented rules: mla_call_supported; a regular layout
// and, for split, equal GPU groups; an irregular one is folded onto a core of
// the smallest node's size, where split needs equal GPU groups.  Collective
// over comm.
bool AlgoCanRun(int algo, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  if (algo == MLA_ALGO_PASSTHROUGH) return true;
  const int smallest = MinNodeSize(comm);
  const bool core_split = CoreGpuGroupsEqual(comm, smallest);
  if (!mla_call_supported(dt, op, comm, nullptr)) return false;
  LayoutInfo li = GetLayout(comm);
  if (!li.ok) return false;
  if (li.l.regular) return algo != MLA_ALGO_SPLIT || li.l.gpus_regular;
  return algo != MLA_ALGO_SPLIT || core_split;
}

// ---------------------------------------------------------------------------
// Variants: how a call is made.

struct Variant {
  enum Kind { kWith, kIntercepted, kMlaAllreduce } kind;
  mla_choice choice;
  std::string name;
};

std::string ChoiceName(const mla_choice& c) {
  std::ostringstream o;
  o << mla_algo_name(c.algo) << "(lanes=" << c.lanes << ",chunk=" << c.chunk_bytes << ")";
  return o.str();
}

// A choice with every other field (transport, ...) zero: the defaults.
mla_choice MakeChoice(mla_algo algo, int lanes, uint64_t chunk) {
  mla_choice c;
  std::memset(&c, 0, sizeof c);
  c.algo = algo;
  c.lanes = lanes;
  c.chunk_bytes = chunk;
  return c;
}

Variant With(mla_algo algo, int lanes, uint64_t chunk) {
  Variant v{Variant::kWith, MakeChoice(algo, lanes, chunk), ""};
  v.name = "mla_allreduce_with " + ChoiceName(v.choice);
  return v;
}

constexpr uint64_t kSmallChunk = 100;  // bytes; not a multiple of most extents

// All the variants for comm: each algorithm with lanes 0/smaller and chunk
// 0/small, the intercepted MPI_Allreduce and mla_allreduce.  tiny_chunk adds
// lane and split with a 1-byte chunk (smaller than any element).
std::vector<Variant> AllVariants(MPI_Comm comm, bool tiny_chunk = false) {
  int rpn = MinRanksPerNode(comm);
  int fewer = std::max(1, rpn / 2);
  std::vector<Variant> vs;
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) {
    mla_algo algo = static_cast<mla_algo>(a);
    vs.push_back(With(algo, 0, 0));
    vs.push_back(With(algo, fewer, 0));
    vs.push_back(With(algo, 0, kSmallChunk));
    if (algo == MLA_ALGO_LANE) vs.push_back(With(algo, fewer, kSmallChunk));
  }
  if (tiny_chunk) {
    vs.push_back(With(MLA_ALGO_LANE, 0, 1));
    vs.push_back(With(MLA_ALGO_SPLIT, 0, 1));
  }
  vs.push_back(Variant{Variant::kIntercepted, {}, "MPI_Allreduce (intercepted)"});
  vs.push_back(Variant{Variant::kMlaAllreduce, {}, "mla_allreduce"});
  return vs;
}

// Only the multilane algorithms with default parameters.
std::vector<Variant> MultilaneVariants() {
  return {With(MLA_ALGO_LANE, 0, 0), With(MLA_ALGO_HIER, 0, 0), With(MLA_ALGO_SPLIT, 0, 0)};
}

int Call(const Variant& v, const void* s, void* r, int n, MPI_Datatype dt, MPI_Op op,
         MPI_Comm comm) {
  switch (v.kind) {
    case Variant::kWith: return mla_allreduce_with(s, r, n, dt, op, comm, &v.choice);
    case Variant::kIntercepted: return MPI_Allreduce(s, r, n, dt, op, comm);
    case Variant::kMlaAllreduce: return mla_allreduce(s, r, n, dt, op, comm);
  }
  return MPI_ERR_OTHER;
}

// The algorithm the variant asks for, or -1 when unpredictable.
int VariantAlgo(const Variant& v) {
  return v.kind == Variant::kWith ? static_cast<int>(v.choice.algo) : InterceptedAlgo();
}

// Checks the counters moved as one call of (dt, count) by algo should move
// them.  can_run: AlgoCanRun for the call.  Returns "" or what is wrong.
std::string CheckStatsDelta(const mla_stats& b, const mla_stats& a, int algo, bool can_run,
                            MPI_Datatype dt, int count) {
  if (!mla_enabled()) return "";
  std::ostringstream o;
  if (a.calls - b.calls != 1) o << "calls moved by " << (a.calls - b.calls) << " (want 1); ";
  if (algo < 0) return o.str();
  int tsize = 0;
  MPI_Type_size(dt, &tsize);
  uint64_t bytes = static_cast<uint64_t>(tsize) * static_cast<uint64_t>(count);
  auto d_algo = [&](int k) { return a.calls_by_algo[k] - b.calls_by_algo[k]; };
  auto d_bytes = [&](int k) { return a.bytes_by_algo[k] - b.bytes_by_algo[k]; };
  uint64_t d_unsup = a.unsupported - b.unsupported;
  if (algo == MLA_ALGO_PASSTHROUGH || can_run) {
    if (d_algo(algo) != 1 || d_unsup != 0)
      o << "want " << mla_algo_name(static_cast<mla_algo>(algo)) << "+1 unsupported+0, got "
        << mla_algo_name(static_cast<mla_algo>(algo)) << "+" << d_algo(algo) << " unsupported+"
        << d_unsup << "; ";
    else if (d_bytes(algo) != bytes)
      o << "bytes_by_algo[" << mla_algo_name(static_cast<mla_algo>(algo)) << "] moved by "
        << d_bytes(algo) << " (want " << bytes << "); ";
  } else {
    if (d_unsup != 1 || d_algo(algo) != 0)
      o << "want unsupported+1 (call goes to PMPI), got unsupported+" << d_unsup << " "
        << mla_algo_name(static_cast<mla_algo>(algo)) << "+" << d_algo(algo) << "; ";
  }
  return o.str();
}

// ---------------------------------------------------------------------------
// Running one (type, op, count) case through all variants.

struct CaseOptions {
  bool in_place = true;
  bool check_stats = true;
  uint64_t salt = 0;
};

void RunCase(MPI_Comm comm, const TypeCase& tc, MPI_Op op, int count,
             const std::vector<Variant>& variants, const CaseOptions& opt, Local& local) {
  const size_t bytes = tc.extent * static_cast<size_t>(count);
  Rng rng = MakeRng(opt.salt ^ HashString(tc.name) ^ (HashString(OpName(op)) << 1) ^
                        static_cast<uint64_t>(count) * 0x9e3779b97f4a7c15ULL,
                    CommRank(comm));
  Buf send(bytes);
  send.FillRandom(rng);  // padding bytes stay random
  tc.fill(op, rng, send.data(), count);
  const Buf send_copy(send);

  Buf ref(bytes);
  ref.FillRandom(rng);
  int rc = PMPI_Allreduce(send.data(), ref.data(), count, tc.type, op, comm);
  if (rc != MPI_SUCCESS) {
    local.Fail("PMPI_Allreduce reference failed for " + tc.name);
    return;
  }
  bool can_run[MLA_ALGO_COUNT];
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) can_run[a] = AlgoCanRun(a, tc.type, op, comm);
  const std::string where = tc.name + " " + OpName(op) + " count=" + std::to_string(count) +
                            " comm=" + CommName(comm);

  for (const Variant& v : variants) {
    for (int in_place = 0; in_place <= (opt.in_place ? 1 : 0); ++in_place) {
      Buf recv(bytes);
      if (in_place) recv = send;
      else recv.Fill(0xCD);
      mla_stats before, after;
      mla_get_stats(&before);
      rc = Call(v, in_place ? MPI_IN_PLACE : send.data(), recv.data(), count, tc.type, op,
                comm);
      mla_get_stats(&after);
      std::string what = where + " " + v.name + (in_place ? " MPI_IN_PLACE" : "");
      if (rc != MPI_SUCCESS) {
        local.Fail(what + ": returned " + std::to_string(rc));
        continue;
      }
      for (int i = 0; i < count; ++i) {
        const unsigned char* got = recv.data() + i * tc.extent;
        const unsigned char* want = ref.data() + i * tc.extent;
        if (!tc.equal(got, want)) {
          local.Fail(what + ": element " + std::to_string(i) + " is " + tc.show(got) +
                     ", PMPI_Allreduce gives " + tc.show(want));
          break;
        }
      }
      if (!in_place && !send.SameBytes(send_copy)) local.Fail(what + ": sendbuf was modified");
      if (opt.check_stats && count > 0) {
        const int algo = VariantAlgo(v);
        std::string s =
            CheckStatsDelta(before, after, algo, algo >= 0 && can_run[algo], tc.type, count);
        if (!s.empty()) local.Fail(what + ": stats: " + s);
      }
    }
  }
}

void RunTypeMatrix(const std::vector<TypeCase>& cases, MPI_Comm comm, int count, Local& local) {
  std::vector<Variant> variants = AllVariants(comm, /*tiny_chunk=*/true);
  for (const TypeCase& tc : cases) {
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(tc.type, &lb, &extent);
    if (static_cast<size_t>(extent) != tc.extent) {
      local.Fail(tc.name + ": MPI extent " + std::to_string(extent) + " != sizeof " +
                 std::to_string(tc.extent) + " (test bug)");
      continue;
    }
    for (MPI_Op op : tc.ops) {
      if (!MpiAccepts(tc.type, op)) {
        if (g_rank == 0)
          std::printf("[   INFO   ] system MPI rejects %s with %s: skipped\n", tc.name.c_str(),
                      OpName(op).c_str());
        continue;
      }
      // Predefined types with predefined ops are what the library is for:
      // they must be supported on every intracommunicator of 2 or more ranks.
      if (!IsInter(comm) && CommSize(comm) >= 2 &&
          !mla_call_supported(tc.type, op, comm, nullptr)) {
        const char* why = "";
        mla_call_supported(tc.type, op, comm, &why);
        local.Fail(tc.name + " " + OpName(op) + ": mla_call_supported says 0 (" +
                   std::string(why ? why : "") + ")");
      }
      RunCase(comm, tc, op, count, variants, CaseOptions{}, local);
    }
  }
}

// ---------------------------------------------------------------------------
// Tests.

TEST(Environment, EnabledVersionNames) {
  Local local;
  bool want_enabled = !ExpectDisabled();
  if ((mla_enabled() != 0) != want_enabled)
    local.Fail(std::string("mla_enabled() = ") + std::to_string(mla_enabled()) + ", want " +
               (want_enabled ? "1" : "0"));
  if (std::string(mla_version()) != MLA_VERSION_STRING)
    local.Fail(std::string("mla_version() = ") + mla_version());
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) {
    mla_algo back;
    const char* n = mla_algo_name(static_cast<mla_algo>(a));
    if (!mla_algo_from_name(n, &back) || back != a)
      local.Fail(std::string("mla_algo_from_name(mla_algo_name(") + std::to_string(a) + "))");
  }
  static const char* const names[] = {"passthrough", "lane", "hier", "split"};
  for (int a = 0; a < 4 && a < MLA_ALGO_COUNT; ++a)
    if (std::string(mla_algo_name(static_cast<mla_algo>(a))) != names[a])
      local.Fail(std::string("mla_algo_name(") + std::to_string(a) + ") = " +
                 mla_algo_name(static_cast<mla_algo>(a)));
  mla_algo dummy;
  if (mla_algo_from_name("bogus", &dummy)) local.Fail("mla_algo_from_name(\"bogus\") = 1");
  if (std::string(mla_algo_name(MLA_ALGO_COUNT)) != "unknown")
    local.Fail("mla_algo_name(MLA_ALGO_COUNT) is not \"unknown\"");
  EXPECT_ALL_RANKS_OK(local);
}

// The node of each rank of comm, from a source independent of the library:
// virtual nodes of MULTILANE_RANKS_PER_NODE consecutive world ranks, else the
// host name (real nodes: several hosts under srun -N2).  Node ids are numbered
// in the order of their first rank.
std::vector<int> NodeIds(MPI_Comm comm) {
  const int rpn_env = EnvInt("MULTILANE_RANKS_PER_NODE", 0);
  const int n = CommSize(comm);
  std::vector<int> ids(n);
  if (rpn_env > 0) {
    const int mine = g_rank / rpn_env;
    PMPI_Allgather(&mine, 1, MPI_INT, ids.data(), 1, MPI_INT, comm);
  } else {
    constexpr int kLen = 256;
    char host[kLen] = {0};
    gethostname(host, kLen - 1);
    std::vector<char> all(static_cast<size_t>(n) * kLen);
    PMPI_Allgather(host, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, comm);
    std::vector<std::string> names;
    for (int r = 0; r < n; ++r) {
      const std::string name(&all[static_cast<size_t>(r) * kLen]);
      auto it = std::find(names.begin(), names.end(), name);
      ids[r] = static_cast<int>(it - names.begin());
      if (it == names.end()) names.push_back(name);
    }
    return ids;
  }
  // renumber virtual node ids in order of appearance
  std::vector<int> seen;
  for (int& id : ids) {
    auto it = std::find(seen.begin(), seen.end(), id);
    const int idx = static_cast<int>(it - seen.begin());
    if (it == seen.end()) seen.push_back(id);
    id = idx;
  }
  return ids;
}

// What mla_comm_layout must say about comm, from NodeIds.
struct WantLayout {
  int nodes = 0;           // distinct nodes
  int node_size = 0;       // ranks on this rank's node
  int node_rank = 0;       // this rank's index among them
  bool regular = true;     // every node holds the same number of ranks
};

WantLayout ExpectedLayout(MPI_Comm comm) {
  const std::vector<int> ids = NodeIds(comm);
  const int me = CommRank(comm);
  std::map<int, int> sizes;
  for (int id : ids) ++sizes[id];
  WantLayout w;
  w.nodes = static_cast<int>(sizes.size());
  w.node_size = sizes[ids[me]];
  for (int r = 0; r < me; ++r) w.node_rank += ids[r] == ids[me];
  for (const auto& kv : sizes) w.regular = w.regular && kv.second == w.node_size;
  return w;
}

TEST(Layout, MatchesEnvironment) {
  Local local;
  LayoutInfo li = GetLayout(MPI_COMM_WORLD);
  const int rpg_env = EnvInt("MULTILANE_RANKS_PER_GPU", 0);
  const bool enabled = mla_enabled() != 0;
  const WantLayout want_world = ExpectedLayout(MPI_COMM_WORLD);
  const int smallest = MinNodeSize(MPI_COMM_WORLD);
  const bool core_split = CoreGpuGroupsEqual(MPI_COMM_WORLD, smallest);
  bool regular_want = want_world.regular;
  if (!li.ok) {
    local.Fail("mla_comm_layout(MPI_COMM_WORLD) failed");
  } else if (enabled) {
    const mla_layout& l = li.l;
    std::ostringstream got;
    got << "layout{size=" << l.size << " nodes=" << l.nodes << " ranks_per_node="
        << l.ranks_per_node << " ranks_per_gpu=" << l.ranks_per_gpu << " node_rank="
        << l.node_rank << " regular=" << l.regular << "}";
    auto want = [&](bool cond, const std::string& what) {
      if (!cond) local.Fail(got.str() + ": want " + what);
    };
    want(l.size == g_size, "size == " + std::to_string(g_size));
    // Virtual nodes (MULTILANE_RANKS_PER_NODE), else one node per host name.
    const WantLayout& w = want_world;
    const int nodes_want = w.regular ? w.nodes : 0;
    want(l.regular == (w.regular ? 1 : 0), "regular == " + std::to_string(w.regular));
    want(l.nodes == nodes_want, "nodes == " + std::to_string(nodes_want));
    want(l.ranks_per_node == w.node_size, "ranks_per_node == " + std::to_string(w.node_size));
    want(l.node_rank == w.node_rank, "node_rank == " + std::to_string(w.node_rank));
    if (const int nodes_env = EnvInt("MLA_TEST_EXPECT_NODES", 0); nodes_env > 0)
      want(w.nodes == nodes_env, "the job to span MLA_TEST_EXPECT_NODES=" + std::to_string(nodes_env) +
                                     " nodes (host names or virtual nodes say " + std::to_string(w.nodes) + ")");
    // GPU groups are consecutive ranks of a node, rpg_env of them; the last
    // group of a node that rpg_env does not divide is smaller.
    if (rpg_env > 0 && l.ranks_per_node % rpg_env == 0) {
      want(l.ranks_per_gpu == rpg_env, "ranks_per_gpu == " + std::to_string(rpg_env));
      if (l.regular) want(l.gpus_regular == 1, "gpus_regular == 1");
    }
    if (rpg_env > 0 && l.ranks_per_node % rpg_env != 0) {
      want(l.ranks_per_gpu <= rpg_env, "ranks_per_gpu <= " + std::to_string(rpg_env));
      want(l.gpus_regular == 0, "gpus_regular == 0 (" + std::to_string(rpg_env) + " does not divide the node)");
    }
    want(l.ranks_per_gpu >= 1 && l.ranks_per_gpu <= std::max(1, l.ranks_per_node),
         "1 <= ranks_per_gpu <= ranks_per_node");
    if (l.regular) want(l.nodes * l.ranks_per_node == l.size, "nodes * ranks_per_node == size");
    // Calling it again gives the same answer (cached).
    LayoutInfo again = GetLayout(MPI_COMM_WORLD);
    if (!again.ok || std::memcmp(&again.l, &li.l, sizeof(mla_layout)) != 0)
      local.Fail("second mla_comm_layout(MPI_COMM_WORLD) differs");
  }

  // On a regular layout every multilane algorithm runs; on an irregular one
  // too, folded onto its core (split only where ranks per GPU divide the
  // smallest node); on one rank none does (counted as unsupported).
  const int count = 13;
  std::vector<int> send(count), recv(count), ref(count);
  for (int i = 0; i < count; ++i) send[i] = (g_rank + 1) * (i + 1);
  PMPI_Allreduce(send.data(), ref.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (const Variant& v : MultilaneVariants()) {
    mla_stats b, a;
    mla_get_stats(&b);
    std::fill(recv.begin(), recv.end(), -1);
    int rc = Call(v, send.data(), recv.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mla_get_stats(&a);
    if (rc != MPI_SUCCESS || recv != ref) local.Fail(v.name + ": wrong result on world");
    if (enabled) {
      // Independent of what the library reports: from the variables alone.
      const int algo = v.choice.algo;
      const int rpn = want_world.node_size;
      const int ppg = rpg_env > 0 ? rpg_env : 1;
      const bool runs = g_size >= 2 && (algo != MLA_ALGO_SPLIT || (regular_want ? rpn % ppg == 0 : core_split));
      uint64_t d_algo = a.calls_by_algo[algo] - b.calls_by_algo[algo];
      uint64_t d_uns = a.unsupported - b.unsupported;
      if (!runs && (d_uns != 1 || d_algo != 0))
        local.Fail(v.name + " on world (" + (g_size < 2 ? "one rank" : "split, ranks per GPU not dividing the nodes") +
                   "): want unsupported+1 " + mla_algo_name(v.choice.algo) +
                   "+0, got unsupported+" + std::to_string(d_uns) + " +" +
                   std::to_string(d_algo));
      if (runs && (d_uns != 0 || d_algo != 1))
        local.Fail(v.name + " on a " + (regular_want ? "regular" : "folded irregular") + " layout: want " + mla_algo_name(v.choice.algo) +
                   "+1 unsupported+0, got +" + std::to_string(d_algo) + " unsupported+" +
                   std::to_string(d_uns));
    }
  }
  EXPECT_ALL_RANKS_OK(local);
}

// Exact comparisons over every predefined type and valid predefined op.
constexpr int kMatrixCount = 37;

TEST(PredefinedTypes, Integers) {
  Local local;
  RunTypeMatrix(IntegerCases(), MPI_COMM_WORLD, kMatrixCount, local);
  EXPECT_ALL_RANKS_OK(local);
}

TEST(PredefinedTypes, ByteAndBool) {
  Local local;
  RunTypeMatrix(ByteBoolCases(), MPI_COMM_WORLD, kMatrixCount, local);
  EXPECT_ALL_RANKS_OK(local);
}

TEST(PredefinedTypes, Floating) {
  Local local;
  RunTypeMatrix(FloatCases(), MPI_COMM_WORLD, kMatrixCount, local);
  EXPECT_ALL_RANKS_OK(local);
}

TEST(PredefinedTypes, Complex) {
  Local local;
  RunTypeMatrix(ComplexCases(), MPI_COMM_WORLD, kMatrixCount, local);
  EXPECT_ALL_RANKS_OK(local);
}

TEST(PredefinedTypes, MinLocMaxLocPairs) {
  Local local;
  RunTypeMatrix(PairCases(), MPI_COMM_WORLD, kMatrixCount, local);
  EXPECT_ALL_RANKS_OK(local);
}

// Counts around the edges: 0, 1, small odd ones, below the number of ranks,
// and larger ones that no number of lanes divides evenly.
std::vector<int> EdgeCounts() {
  std::vector<int> c = {0, 1, 7, 13, 1001, 2311};
  if (g_size > 2) c.push_back(g_size - 1);
  if (g_size > 4) c.push_back(g_size / 2 + 1);
  return c;
}

TEST(Counts, EdgeCountsAndInPlace) {
  Local local;
  std::vector<Variant> variants = AllVariants(MPI_COMM_WORLD);
  TypeCase ints = Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM});
  TypeCase dbls = Make<FloatKind<double>>("MPI_DOUBLE", MPI_DOUBLE, {MPI_MAX});
  TypeCase pairs = Make<PairKind<short>>("MPI_SHORT_INT", MPI_SHORT_INT, {MPI_MAXLOC});
  TypeCase cplx = Make<ComplexKind<float>>("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, {MPI_PROD});
  for (int count : EdgeCounts()) {
    for (const TypeCase* tc : {&ints, &dbls, &pairs, &cplx})
      RunCase(MPI_COMM_WORLD, *tc, tc->ops[0], count, variants, CaseOptions{true, true, 7},
              local);
  }
  EXPECT_ALL_RANKS_OK(local);
}

// Random real data: reassociation may change the last bits, so compare with
// PMPI's result to a tolerance, but every rank must hold the very same bits.
template <class T>
void RunRealData(MPI_Datatype dt, const char* tname, int count, MPI_Op op,
                 const std::vector<Variant>& variants, Local& local) {
  Rng rng = MakeRng(HashString(tname) ^ (static_cast<uint64_t>(count) << 20) ^
                        HashString(OpName(op)),
                    g_rank);
  std::vector<T> send(count), ref(count), absref(count), abs_in(count);
  std::uniform_real_distribution<T> d(op == MPI_PROD ? T(0.5) : T(-1), op == MPI_PROD ? T(1.5) : T(1));
  for (int i = 0; i < count; ++i) {
    send[i] = d(rng);
    abs_in[i] = std::fabs(send[i]);
  }
  PMPI_Allreduce(send.data(), ref.data(), count, dt, op, MPI_COMM_WORLD);
  PMPI_Allreduce(abs_in.data(), absref.data(), count, dt, MPI_SUM, MPI_COMM_WORLD);
  const T eps = std::numeric_limits<T>::epsilon();
  const T tol = eps * T(4 * (g_size + 1));
  for (const Variant& v : variants) {
    for (int in_place = 0; in_place <= 1; ++in_place) {
      std::vector<T> recv = in_place ? send : std::vector<T>(count, T(-12345));
      int rc = Call(v, in_place ? MPI_IN_PLACE : send.data(), recv.data(), count, dt, op,
                    MPI_COMM_WORLD);
      std::string what = std::string(tname) + " " + OpName(op) + " count=" +
                         std::to_string(count) + " " + v.name + (in_place ? " MPI_IN_PLACE" : "");
      if (rc != MPI_SUCCESS) local.Fail(what + ": returned " + std::to_string(rc));
      for (int i = 0; i < count; ++i) {
        T bound;
        if (op == MPI_SUM) bound = tol * absref[i];
        else if (op == MPI_PROD) bound = tol * std::fabs(ref[i]);
        else bound = 0;  // MIN/MAX are exact
        if (!(std::fabs(recv[i] - ref[i]) <= bound)) {
          std::ostringstream o;
          o.precision(std::numeric_limits<T>::max_digits10);
          o << what << ": element " << i << " is " << recv[i] << ", PMPI_Allreduce gives "
            << ref[i] << " (allowed difference " << bound << ")";
          local.Fail(o.str());
          break;
        }
      }
      // Bitwise identical on all ranks.
      uint64_t h = HashBytes(recv.data(), count * sizeof(T));
      uint64_t hmin = 0, hmax = 0;
      PMPI_Allreduce(&h, &hmin, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
      PMPI_Allreduce(&h, &hmax, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
      if (hmin != hmax) local.Fail(what + ": results differ between ranks (bitwise)");
    }
  }
}

TEST(RealData, ToleranceAndBitwiseIdenticalOnAllRanks) {
  Local local;
  std::vector<Variant> variants = AllVariants(MPI_COMM_WORLD);
  for (int count : {13, 1001, 3001}) {
    RunRealData<float>(MPI_FLOAT, "MPI_FLOAT", count, MPI_SUM, variants, local);
    RunRealData<double>(MPI_DOUBLE, "MPI_DOUBLE", count, MPI_SUM, variants, local);
  }
  RunRealData<float>(MPI_FLOAT, "MPI_FLOAT", 1001, MPI_PROD, variants, local);
  RunRealData<double>(MPI_DOUBLE, "MPI_DOUBLE", 1001, MPI_MIN, variants, local);
  RunRealData<double>(MPI_DOUBLE, "MPI_DOUBLE", 1001, MPI_MAX, variants, local);
  EXPECT_ALL_RANKS_OK(local);
}

// ---------------------------------------------------------------------------
// User-defined ops and derived datatypes.

std::atomic<long> g_user_sum_calls{0};

void UserIntSum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  g_user_sum_calls.fetch_add(1, std::memory_order_relaxed);
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] + b[i];
}

// Checks a call that must run multilane (or, on an irregular layout or a
// one-rank communicator, go to PMPI counted as unsupported).
void ExpectRanMultilane(const mla_stats& b, const mla_stats& a, mla_algo algo, MPI_Comm comm,
                        MPI_Datatype dt, MPI_Op op, const std::string& what, Local& local) {
  if (!mla_enabled()) return;
  uint64_t d_algo = a.calls_by_algo[algo] - b.calls_by_algo[algo];
  uint64_t d_uns = a.unsupported - b.unsupported;
  if (AlgoCanRun(algo, dt, op, comm)) {
    if (d_algo != 1 || d_uns != 0)
      local.Fail(what + ": must run " + mla_algo_name(algo) + " (want " + mla_algo_name(algo) +
                 "+1 unsupported+0, got +" + std::to_string(d_algo) + " unsupported+" +
                 std::to_string(d_uns) + ")");
  } else if (d_uns != 1 || d_algo != 0) {
    local.Fail(what + ": cannot run here (layout or one rank): want unsupported+1, got +" +
               std::to_string(d_uns));
  }
}

void ExpectUnsupported(const mla_stats& b, const mla_stats& a, mla_algo algo,
                       const std::string& what, Local& local) {
  if (!mla_enabled()) return;
  uint64_t d_algo = a.calls_by_algo[algo] - b.calls_by_algo[algo];
  uint64_t d_uns = a.unsupported - b.unsupported;
  if (d_uns != 1 || d_algo != 0)
    local.Fail(what + ": must go to PMPI_Allreduce as unsupported (want unsupported+1 " +
               mla_algo_name(algo) + "+0, got unsupported+" + std::to_string(d_uns) + " +" +
               std::to_string(d_algo) + ")");
}

TEST(UserOps, CommutativeRunsMultilane) {
  Local local;
  MPI_Op op;
  MPI_Op_create(&UserIntSum, 1, &op);
  if (g_size >= 2) {
    const char* why = nullptr;
    if (!mla_call_supported(MPI_INT, op, MPI_COMM_WORLD, &why))
      local.Fail(std::string("mla_call_supported(MPI_INT, commutative user op) = 0: ") +
                 (why ? why : ""));
  }
  for (int count : {1, 13, 1001}) {
    std::vector<int> send(count), ref(count);
    for (int i = 0; i < count; ++i) send[i] = (g_rank + 1) * (i % 11 + 1) - 3 * i;
    PMPI_Allreduce(send.data(), ref.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    std::vector<Variant> vs = AllVariants(MPI_COMM_WORLD);
    for (const Variant& v : vs) {
      std::vector<int> recv(count, -7);
      mla_stats b, a;
      mla_get_stats(&b);
      int rc = Call(v, send.data(), recv.data(), count, MPI_INT, op, MPI_COMM_WORLD);
      mla_get_stats(&a);
      std::string what = "commutative user op count=" + std::to_string(count) + " " + v.name;
      if (rc != MPI_SUCCESS || recv != ref) local.Fail(what + ": wrong result");
      if (v.kind == Variant::kWith && v.choice.algo != MLA_ALGO_PASSTHROUGH)
        ExpectRanMultilane(b, a, v.choice.algo, MPI_COMM_WORLD, MPI_INT, op, what, local);
    }
  }
  MPI_Op_free(&op);
  EXPECT_ALL_RANKS_OK(local);
}

// 2x2 integer matrices; inout = in * inout, so the reduction over ranks in
// rank order is M_0 * M_1 * ... * M_{n-1}.
struct Mat2 {
  int a[4];
};
Mat2 Mul(const Mat2& x, const Mat2& y) {
  return Mat2{{x.a[0] * y.a[0] + x.a[1] * y.a[2], x.a[0] * y.a[1] + x.a[1] * y.a[3],
               x.a[2] * y.a[0] + x.a[3] * y.a[2], x.a[2] * y.a[1] + x.a[3] * y.a[3]}};
}
void UserMatMul(void* in, void* inout, int* len, MPI_Datatype*) {
  const Mat2* x = static_cast<const Mat2*>(in);
  Mat2* y = static_cast<Mat2*>(inout);
  for (int i = 0; i < *len; ++i) y[i] = Mul(x[i], y[i]);
}
std::vector<Mat2> RankMatrices(int rank, int count) {
  Rng rng = MakeRng(0x4d41545249584553ULL, rank);
  std::vector<Mat2> m(count);
  for (auto& x : m)
    for (int& e : x.a) e = static_cast<int>(Uni(rng, -1, 1));
  return m;
}

TEST(UserOps, NonCommutativeGoesToPmpi) {
  Local local;
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_INT, &mat);
  MPI_Type_commit(&mat);
  MPI_Op op;
  MPI_Op_create(&UserMatMul, 0, &op);
  {
    const char* why = nullptr;
    if (mla_call_supported(mat, op, MPI_COMM_WORLD, &why))
      local.Fail("mla_call_supported(non-commutative op) = 1");
    else if (!why || !*why)
      local.Fail("mla_call_supported(non-commutative op) = 0 gives no reason");
  }
  for (int count : {1, 9, 101}) {
    std::vector<Mat2> send = RankMatrices(g_rank, count), ref(count), expect(count);
    for (int i = 0; i < count; ++i) {
      Mat2 p = RankMatrices(0, count)[i];
      for (int r = 1; r < g_size; ++r) p = Mul(p, RankMatrices(r, count)[i]);
      expect[i] = p;
    }
    PMPI_Allreduce(send.data(), ref.data(), count, mat, op, MPI_COMM_WORLD);
    if (std::memcmp(ref.data(), expect.data(), count * sizeof(Mat2)) != 0)
      local.Fail("PMPI_Allreduce with the non-commutative op is not the rank-order product "
                 "(test bug?)");
    for (const Variant& v : AllVariants(MPI_COMM_WORLD)) {
      std::vector<Mat2> recv(count, Mat2{{9, 9, 9, 9}});
      mla_stats b, a;
      mla_get_stats(&b);
      int rc = Call(v, send.data(), recv.data(), count, mat, op, MPI_COMM_WORLD);
      mla_get_stats(&a);
      std::string what = "non-commutative user op count=" + std::to_string(count) + " " + v.name;
      if (rc != MPI_SUCCESS ||
          std::memcmp(recv.data(), ref.data(), count * sizeof(Mat2)) != 0)
        local.Fail(what + ": result differs from PMPI_Allreduce");
      if (v.kind == Variant::kWith && v.choice.algo != MLA_ALGO_PASSTHROUGH)
        ExpectUnsupported(b, a, v.choice.algo, what, local);
    }
  }
  MPI_Op_free(&op);
  MPI_Type_free(&mat);
  EXPECT_ALL_RANKS_OK(local);
}

// Commutative user op summing floats; valid for MPI_FLOAT and contiguous
// derived types built from floats.
void UserFloatSum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  int tsize = 0;
  MPI_Type_size(*dt, &tsize);
  const long n = static_cast<long>(*len) * tsize / static_cast<long>(sizeof(float));
  const float* a = static_cast<const float*>(in);
  float* b = static_cast<float*>(inout);
  for (long i = 0; i < n; ++i) b[i] = a[i] + b[i];
}

// Commutative user op summing the ints of MPI_Type_vector(2, 1, 2, MPI_INT)
// elements (ints 0 and 2 of every 3), leaving the holes alone.
void UserVectorSum(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int e = 0; e < *len; ++e) {
    b[3 * e] += a[3 * e];
    b[3 * e + 2] += a[3 * e + 2];
  }
}

// Open MPI refuses predefined ops (MPI_SUM) on derived datatypes ("MPI_SUM is
// not defined for non-intrinsic datatypes"), as the standard allows, so the
// derived-type tests reduce with commutative user ops, and with MPI_SUM too
// where the system MPI accepts it.
std::vector<std::pair<MPI_Op, std::string>> DerivedTypeOps(MPI_Datatype dt,
                                                            MPI_User_function* fn,
                                                            std::vector<MPI_Op>* to_free) {
  std::vector<std::pair<MPI_Op, std::string>> ops;
  MPI_Op user;
  MPI_Op_create(fn, 1, &user);
  to_free->push_back(user);
  ops.emplace_back(user, "commutative user op");
  if (MpiAccepts(dt, MPI_SUM)) ops.emplace_back(MPI_SUM, "MPI_SUM");
  return ops;
}

TEST(DerivedTypes, ContiguousFloatsRunMultilane) {
  Local local;
  MPI_Datatype vec3;
  MPI_Type_contiguous(3, MPI_FLOAT, &vec3);
  MPI_Type_commit(&vec3);
  std::vector<MPI_Op> to_free;
  for (auto& [op, opname] : DerivedTypeOps(vec3, &UserFloatSum, &to_free)) {
    if (g_size >= 2) {
      const char* why = nullptr;
      if (!mla_call_supported(vec3, op, MPI_COMM_WORLD, &why))
        local.Fail("mla_call_supported(contiguous floats, " + opname + ") = 0: " +
                   (why ? why : ""));
    }
    for (int count : {1, 5, 333}) {
      std::vector<float> send(3 * count), ref(3 * count);
      Rng rng = MakeRng(0x5645433300ULL + count, g_rank);
      for (float& f : send) f = static_cast<float>(Uni(rng, -9, 9));
      PMPI_Allreduce(send.data(), ref.data(), count, vec3, op, MPI_COMM_WORLD);
      for (const Variant& v : AllVariants(MPI_COMM_WORLD)) {
        for (int in_place = 0; in_place <= 1; ++in_place) {
          std::vector<float> recv = in_place ? send : std::vector<float>(3 * count, -0.5f);
          mla_stats b, a;
          mla_get_stats(&b);
          int rc = Call(v, in_place ? MPI_IN_PLACE : send.data(), recv.data(), count, vec3, op,
                        MPI_COMM_WORLD);
          mla_get_stats(&a);
          std::string what = "contiguous(3 x MPI_FLOAT) " + opname + " count=" +
                             std::to_string(count) + " " + v.name +
                             (in_place ? " MPI_IN_PLACE" : "");
          if (rc != MPI_SUCCESS || recv != ref) local.Fail(what + ": wrong result");
          if (v.kind == Variant::kWith && v.choice.algo != MLA_ALGO_PASSTHROUGH) {
            ExpectRanMultilane(b, a, v.choice.algo, MPI_COMM_WORLD, vec3, op, what, local);
            int tsize = 0;
            MPI_Type_size(vec3, &tsize);
            uint64_t db = a.bytes_by_algo[v.choice.algo] - b.bytes_by_algo[v.choice.algo];
            if (mla_enabled() && AlgoCanRun(v.choice.algo, vec3, op, MPI_COMM_WORLD) &&
                db != static_cast<uint64_t>(tsize) * count)
              local.Fail(what + ": bytes_by_algo moved by " + std::to_string(db));
          }
        }
      }
    }
  }
  for (MPI_Op& op : to_free) MPI_Op_free(&op);
  MPI_Type_free(&vec3);
  EXPECT_ALL_RANKS_OK(local);
}

TEST(DerivedTypes, NonContiguousVectorGoesToPmpi) {
  Local local;
  // 2 ints with a hole of one int between them: extent 3 ints.
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  std::vector<MPI_Op> to_free;
  for (auto& [op, opname] : DerivedTypeOps(vec, &UserVectorSum, &to_free)) {
    {
      const char* why = nullptr;
      if (mla_call_supported(vec, op, MPI_COMM_WORLD, &why))
        local.Fail("mla_call_supported(MPI_Type_vector, " + opname + ") = 1");
    }
    for (int count : {1, 7, 200}) {
      const int n = 3 * count;
      std::vector<int> send(n), ref(n, -99);
      for (int i = 0; i < n; ++i) send[i] = (i % 3 == 1) ? 777 + g_rank : (g_rank + 1) * (i + 1);
      PMPI_Allreduce(send.data(), ref.data(), count, vec, op, MPI_COMM_WORLD);
      for (int e = 0; e < count; ++e) {
        long s0 = 0, s2 = 0;
        for (int r = 0; r < g_size; ++r) {
          s0 += (r + 1) * (3 * e + 1);
          s2 += (r + 1) * (3 * e + 3);
        }
        if (ref[3 * e] != s0 || ref[3 * e + 2] != s2) {
          local.Fail("PMPI_Allreduce on the vector type gives a wrong sum (test bug?)");
          break;
        }
      }
      for (const Variant& v : AllVariants(MPI_COMM_WORLD)) {
        std::vector<int> recv(n, -99);  // same fill as ref: holes must match too
        mla_stats b, a;
        mla_get_stats(&b);
        int rc = Call(v, send.data(), recv.data(), count, vec, op, MPI_COMM_WORLD);
        mla_get_stats(&a);
        std::string what = "vector(2,1,2,MPI_INT) " + opname + " count=" +
                           std::to_string(count) + " " + v.name;
        if (rc != MPI_SUCCESS || recv != ref) {
          int i = 0;
          while (i < n && recv[i] == ref[i]) ++i;
          local.Fail(what + ": differs from PMPI_Allreduce at int " + std::to_string(i) +
                     (i < n ? ": " + std::to_string(recv[i]) + " vs " + std::to_string(ref[i])
                            : std::string()));
        }
        if (v.kind == Variant::kWith && v.choice.algo != MLA_ALGO_PASSTHROUGH)
          ExpectUnsupported(b, a, v.choice.algo, what, local);
      }
    }
  }
  for (MPI_Op& op : to_free) MPI_Op_free(&op);
  MPI_Type_free(&vec);
  EXPECT_ALL_RANKS_OK(local);
}

// ---------------------------------------------------------------------------
// Communicators.

TEST(Communicators, Intercommunicator) {
  if (g_size < 2) GTEST_SKIP() << "needs at least 2 ranks";
  Local local;
  const int half = g_size / 2;
  const bool low = g_rank < half;
  MPI_Comm local_comm, inter;
  MPI_Comm_split(MPI_COMM_WORLD, low ? 0 : 1, g_rank, &local_comm);
  MPI_Intercomm_create(local_comm, 0, MPI_COMM_WORLD, low ? half : 0, 4242, &inter);
  MPI_Comm_set_name(inter, "intercomm");
  {
    const char* why = nullptr;
    if (mla_call_supported(MPI_INT, MPI_SUM, inter, &why))
      local.Fail("mla_call_supported(intercommunicator) = 1");
  }
  for (int count : {1, 13, 1001}) {
    std::vector<int> send(count), ref(count), expect(count, 0);
    for (int i = 0; i < count; ++i) send[i] = (g_rank + 1) * (i % 17 + 1);
    for (int r = low ? half : 0; r < (low ? g_size : half); ++r)
      for (int i = 0; i < count; ++i) expect[i] += (r + 1) * (i % 17 + 1);
    PMPI_Allreduce(send.data(), ref.data(), count, MPI_INT, MPI_SUM, inter);
    if (ref != expect) local.Fail("PMPI_Allreduce on the intercommunicator (test bug?)");
    for (const Variant& v : AllVariants(inter)) {
      std::vector<int> recv(count, -1);
      mla_stats b, a;
      mla_get_stats(&b);
      int rc = Call(v, send.data(), recv.data(), count, MPI_INT, MPI_SUM, inter);
      mla_get_stats(&a);
      std::string what = "intercommunicator count=" + std::to_string(count) + " " + v.name;
      if (rc != MPI_SUCCESS || recv != expect)
        local.Fail(what + ": not the sum over the remote group");
      if (v.kind == Variant::kWith && v.choice.algo != MLA_ALGO_PASSTHROUGH)
        ExpectUnsupported(b, a, v.choice.algo, what, local);
    }
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local_comm);
  EXPECT_ALL_RANKS_OK(local);
}

TEST(Communicators, CommSelf) {
  Local local;
  {
    const char* why = nullptr;
    if (mla_call_supported(MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF, &why))
      local.Fail("mla_call_supported(MPI_COMM_SELF) = 1; one-rank communicators go to PMPI");
  }
  for (int count : {0, 1, 13, 1001}) {
    std::vector<double> send(count);
    for (int i = 0; i < count; ++i) send[i] = g_rank * 1000.0 + i * 0.25;
    for (const Variant& v : AllVariants(MPI_COMM_SELF)) {
      for (int in_place = 0; in_place <= 1; ++in_place) {
        std::vector<double> recv = in_place ? send : std::vector<double>(count, -1.0);
        mla_stats b, a;
        mla_get_stats(&b);
        int rc = Call(v, in_place ? MPI_IN_PLACE : send.data(), recv.data(), count, MPI_DOUBLE,
                      MPI_SUM, MPI_COMM_SELF);
        mla_get_stats(&a);
        std::string what = "MPI_COMM_SELF count=" + std::to_string(count) + " " + v.name +
                           (in_place ? " MPI_IN_PLACE" : "");
        if (rc != MPI_SUCCESS || recv != send) local.Fail(what + ": result is not the input");
        if (count > 0) {
          // one rank: documented to go to PMPI_Allreduce (unsupported when forced)
          const int algo = VariantAlgo(v);
          std::string st = CheckStatsDelta(b, a, algo, algo == MLA_ALGO_PASSTHROUGH,
                                           MPI_DOUBLE, count);
          if (!st.empty()) local.Fail(what + ": stats: " + st);
        } else if (mla_enabled() && a.calls - b.calls != 1) {
          local.Fail(what + ": calls moved by " + std::to_string(a.calls - b.calls));
        }
      }
    }
  }
  EXPECT_ALL_RANKS_OK(local);
}

// A short but complete matrix for derived communicators.
void RunCommMatrix(MPI_Comm comm, Local& local) {
  std::vector<Variant> variants = AllVariants(comm);
  TypeCase ints = Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM, MPI_BXOR});
  TypeCase dbls = Make<FloatKind<double>>("MPI_DOUBLE", MPI_DOUBLE, {MPI_SUM, MPI_MIN});
  TypeCase pairs = Make<PairKind<int>>("MPI_2INT", MPI_2INT, {MPI_MINLOC});
  for (const TypeCase* tc : {&ints, &dbls, &pairs})
    for (MPI_Op op : tc->ops)
      for (int count : {1, 13, 1001})
        RunCase(comm, *tc, op, count, variants, CaseOptions{count != 13, true, 3}, local);
}

TEST(Communicators, SplitReversedKeys) {
  Local local;
  for (int round = 0; round < 3; ++round) {
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - g_rank, &rev);
    MPI_Comm_set_name(rev, "reversed");
    if (CommRank(rev) != g_size - 1 - g_rank) local.Fail("MPI_Comm_split did not reverse ranks");
    LayoutInfo li = GetLayout(rev);
    if (!li.ok || (mla_enabled() && li.l.size != g_size))
      local.Fail("mla_comm_layout(reversed) size " + std::to_string(li.l.size));
    if (round == 0) RunCommMatrix(rev, local);
    else RunCase(rev, Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM}), MPI_SUM, 101,
                 AllVariants(rev), CaseOptions{}, local);
    MPI_Comm_free(&rev);
  }
  EXPECT_ALL_RANKS_OK(local);
}

TEST(Communicators, SplitTwoColors) {
  Local local;
  for (int round = 0; round < 3; ++round) {
    MPI_Comm half;
    // round 0: alternate ranks; then contiguous halves
    int color = round == 0 ? g_rank % 2 : (g_rank < g_size / 2 ? 0 : 1);
    MPI_Comm_split(MPI_COMM_WORLD, color, g_rank, &half);
    MPI_Comm_set_name(half, round == 0 ? "split-odd-even" : "split-halves");
    if (round < 2) RunCommMatrix(half, local);
    else RunCase(half, Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM}), MPI_SUM, 101,
                 AllVariants(half), CaseOptions{}, local);
    MPI_Comm_free(&half);
  }
  EXPECT_ALL_RANKS_OK(local);
}

// A communicator inside each node and one across the nodes (the ranks of
// one node-local index): the library's layout of each matches the nodes the
// host names (or virtual nodes) give, and the matrix is exact on both.
TEST(Communicators, OneNodeAndAcrossNodes) {
  Local local;
  const WantLayout world = ExpectedLayout(MPI_COMM_WORLD);
  const std::vector<int> ids = NodeIds(MPI_COMM_WORLD);
  MPI_Comm node, across;
  MPI_Comm_split(MPI_COMM_WORLD, ids[g_rank], g_rank, &node);
  MPI_Comm_split(MPI_COMM_WORLD, world.node_rank, g_rank, &across);
  MPI_Comm_set_name(node, "one-node");
  MPI_Comm_set_name(across, "across-nodes");
  for (MPI_Comm c : {node, across}) {
    const WantLayout w = ExpectedLayout(c);
    LayoutInfo li = GetLayout(c);
    if (!li.ok) {
      local.Fail("mla_comm_layout failed");
    } else if (mla_enabled()) {
      const int nodes_want = w.regular ? w.nodes : 0;
      if (li.l.nodes != nodes_want || li.l.ranks_per_node != w.node_size || li.l.node_rank != w.node_rank ||
          li.l.regular != (w.regular ? 1 : 0))
        local.Fail(std::string(c == node ? "one-node" : "across-nodes") + ": layout nodes=" +
                   std::to_string(li.l.nodes) + " ranks_per_node=" + std::to_string(li.l.ranks_per_node) +
                   " node_rank=" + std::to_string(li.l.node_rank) + ", want nodes=" + std::to_string(nodes_want) +
                   " ranks_per_node=" + std::to_string(w.node_size) + " node_rank=" + std::to_string(w.node_rank));
    }
    RunCommMatrix(c, local);
  }
  MPI_Comm_free(&node);
  MPI_Comm_free(&across);
  EXPECT_ALL_RANKS_OK(local);
}

TEST(Communicators, DupAndFree) {
  Local local;
  // world's layout is cached by now; dup'ing must not share or double-free it
  GetLayout(MPI_COMM_WORLD);
  MPI_Comm dup1, dup2;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup1);
  MPI_Comm_set_name(dup1, "dup-of-world");
  RunCommMatrix(dup1, local);
  MPI_Comm_dup(dup1, &dup2);  // dup of a communicator with cached state
  MPI_Comm_set_name(dup2, "dup-of-dup");
  MPI_Comm_free(&dup1);        // the copy must survive its parent
  RunCase(dup2, Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM}), MPI_SUM, 1001,
          AllVariants(dup2), CaseOptions{}, local);
  MPI_Comm_free(&dup2);
  // many short-lived communicators
  for (int i = 0; i < 10; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int x = g_rank + i, y = 0;
    mla_choice ch = MakeChoice(static_cast<mla_algo>(1 + i % 3), 0, 0);
    if (mla_allreduce_with(&x, &y, 1, MPI_INT, MPI_SUM, c, &ch) != MPI_SUCCESS ||
        y != g_size * (g_size - 1) / 2 + g_size * i)
      local.Fail("short-lived dup #" + std::to_string(i) + ": wrong sum " + std::to_string(y));
    MPI_Comm_free(&c);
  }
  // world still works afterwards
  RunCase(MPI_COMM_WORLD, Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM}), MPI_SUM, 13,
          MultilaneVariants(), CaseOptions{}, local);
  EXPECT_ALL_RANKS_OK(local);
}

// ---------------------------------------------------------------------------
// Concurrency.

TEST(Concurrency, ThreadsOnDupComms) {
  if (g_provided < MPI_THREAD_MULTIPLE)
    GTEST_SKIP() << "MPI provides thread level " << g_provided
                 << ", below MPI_THREAD_MULTIPLE";
  constexpr int kThreads = 3;
  constexpr int kIters = 30;
  std::vector<MPI_Comm> comms(kThreads);
  for (int t = 0; t < kThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  std::vector<Local> locals(kThreads);
  std::vector<long> made(kThreads, 0);
  mla_stats before, after;
  mla_get_stats(&before);
  auto body = [&](int t) {
    static const int counts[] = {1, 13, 257, 1001, 5};
    MPI_Comm comm = comms[t];
    for (int it = 0; it < kIters; ++it) {
      const int count = counts[(it + t) % 5];
      std::vector<long> send(count), recv(count, -1);
      for (int i = 0; i < count; ++i) send[i] = static_cast<long>(g_rank + 1) * (i % 7 + 1) + t + it;
      const int which = (it + t) % 4;
      int rc;
      std::string name;
      if (which == 3) {
        rc = MPI_Allreduce(send.data(), recv.data(), count, MPI_LONG, MPI_SUM, comm);
        name = "MPI_Allreduce";
      } else {
        mla_choice ch = MakeChoice(static_cast<mla_algo>(1 + which), 0, (it % 2) ? 0u : 512u);
        rc = mla_allreduce_with(send.data(), recv.data(), count, MPI_LONG, MPI_SUM, comm, &ch);
        name = ChoiceName(ch);
      }
      ++made[t];
      for (int i = 0; i < count; ++i) {
        long want = static_cast<long>(i % 7 + 1) * g_size * (g_size + 1) / 2 +
                    static_cast<long>(g_size) * (t + it);
        if (rc != MPI_SUCCESS || recv[i] != want) {
          locals[t].Fail("thread " + std::to_string(t) + " iteration " + std::to_string(it) +
                         " " + name + " count=" + std::to_string(count) + ": element " +
                         std::to_string(i) + " is " + std::to_string(recv[i]) + ", want " +
                         std::to_string(want));
          break;
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(body, t);
  for (auto& th : threads) th.join();
  mla_get_stats(&after);
  Local local;
  for (auto& l : locals)
    if (!l.ok()) local.Fail(l.first());
  long total = 0;
  for (long m : made) total += m;
  if (mla_enabled() && static_cast<long>(after.calls - before.calls) != total)
    local.Fail("calls moved by " + std::to_string(after.calls - before.calls) + " for " +
               std::to_string(total) + " concurrent calls (counters not thread-safe?)");
  for (auto& c : comms) MPI_Comm_free(&c);
  EXPECT_ALL_RANKS_OK(local);
}

// Every predefined type through the intercepted MPI_Allreduce only (no
// forced algorithm): used by the bad/inconsistent-variable tests too.
TEST(Intercept, AllTypesIntercepted) {
  Local local;
  std::vector<Variant> only{Variant{Variant::kIntercepted, {}, "MPI_Allreduce (intercepted)"}};
  for (auto cases : {IntegerCases(), ByteBoolCases(), FloatCases(), ComplexCases(), PairCases()})
    for (const TypeCase& tc : cases)
      for (MPI_Op op : tc.ops)
        if (MpiAccepts(tc.type, op))
          for (int count : {1, 37})
            RunCase(MPI_COMM_WORLD, tc, op, count, only, CaseOptions{true, true, 11}, local);
  EXPECT_ALL_RANKS_OK(local);
}

// ---------------------------------------------------------------------------
// The intercepted path with a fixed number of calls.  Run alone
// (--gtest_filter=Intercept.FixedCallCount) with MULTILANE_STATS=1 by the
// stats-line test, which then reads "calls=21 ... unsupported=1" at finalize.

constexpr int kInterceptCalls = 20;

TEST(Intercept, FixedCallCount) {
  Local local;
  mla_reset_stats();
  mla_stats zero;
  mla_get_stats(&zero);
  if (zero.calls != 0 || zero.unsupported != 0) local.Fail("mla_reset_stats did not zero");
  const int algo = InterceptedAlgo();
  for (int k = 0; k < kInterceptCalls; ++k) {
    const int count = 1 + 97 * k;
    std::vector<int> send(count), recv(count, -1), ref(count);
    for (int i = 0; i < count; ++i) send[i] = (g_rank + 1) * (i % 5) - k;
    PMPI_Allreduce(send.data(), ref.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (MPI_Allreduce(send.data(), recv.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD) !=
            MPI_SUCCESS ||
        recv != ref)
      local.Fail("intercepted MPI_Allreduce #" + std::to_string(k) + " wrong result");
  }
  // one unsupported call: a non-contiguous type
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Op vsum;
  MPI_Op_create(&UserVectorSum, 1, &vsum);
  int vs[3] = {g_rank, -5, 1}, vr[3] = {0, -6, 0};
  if (MPI_Allreduce(vs, vr, 1, vec, vsum, MPI_COMM_WORLD) != MPI_SUCCESS ||
      vr[0] != g_size * (g_size - 1) / 2 || vr[1] != -6 || vr[2] != g_size)
    local.Fail("intercepted MPI_Allreduce on MPI_Type_vector wrong result");
  MPI_Op_free(&vsum);
  MPI_Type_free(&vec);
  mla_stats s;
  mla_get_stats(&s);
  if (mla_enabled()) {
    if (s.calls != kInterceptCalls + 1)
      local.Fail("calls = " + std::to_string(s.calls) + ", want " +
                 std::to_string(kInterceptCalls + 1));
    if (algo > MLA_ALGO_PASSTHROUGH && AlgoCanRun(algo, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) {
      if (s.calls_by_algo[algo] != kInterceptCalls || s.unsupported != 1)
        local.Fail(std::string(mla_algo_name(static_cast<mla_algo>(algo))) + " = " +
                   std::to_string(s.calls_by_algo[algo]) + " unsupported = " +
                   std::to_string(s.unsupported) + ", want " +
                   std::to_string(kInterceptCalls) + " and 1");
    } else if (algo > MLA_ALGO_PASSTHROUGH) {
      // the algorithm cannot run on world (irregular layout, one rank)
      if (s.unsupported != kInterceptCalls + 1 || s.calls_by_algo[algo] != 0)
        local.Fail("unsupported = " + std::to_string(s.unsupported) + ", want " +
                   std::to_string(kInterceptCalls + 1));
    } else if (algo == MLA_ALGO_PASSTHROUGH) {
      if (s.calls_by_algo[MLA_ALGO_PASSTHROUGH] != kInterceptCalls + 1 || s.unsupported != 0)
        local.Fail("passthrough = " + std::to_string(s.calls_by_algo[MLA_ALGO_PASSTHROUGH]) +
                   " unsupported = " + std::to_string(s.unsupported) + ", want " +
                   std::to_string(kInterceptCalls + 1) + " and 0");
    }
  }
  EXPECT_ALL_RANKS_OK(local);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &g_provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  ::testing::InitGoogleTest(&argc, argv);
  // A filter pattern naming no test fails the run (issue 27).
  const std::string unmatched = mlatest::FilterPatternsMatchingNothing();
  if (!unmatched.empty()) {
    if (g_rank == 0) std::printf("allreduce_mpi_test: FAILED: filter pattern(s) matching no test: %s\n", unmatched.c_str());
    MPI_Finalize();
    return 1;
  }
  if (g_rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  // MLA_TEST_NO_SKIP=1: a skipped test fails the run (a registration that
  // exists to run one thing, such as the TSan run of Concurrency.*).
  const int skipped = ::testing::UnitTest::GetInstance()->skipped_test_count();
  if (EnvInt("MLA_TEST_NO_SKIP", 0) != 0 && skipped > 0) {
    if (g_rank == 0) std::printf("allreduce_mpi_test: FAILED: %d test(s) skipped under MLA_TEST_NO_SKIP=1\n", skipped);
    rc = 1;
  }
  int all_rc = rc;
  PMPI_Allreduce(&rc, &all_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_rc;
}
