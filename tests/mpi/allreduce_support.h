// allreduce_support.h: what every suite of allreduce_mpi_test shares: the
// ranks, seeded generators, the verdict agreed over all ranks, the
// environment the registration sets, buffers, names, and the layout oracles
// (what mla_comm_layout must say and where an algorithm can run), computed
// from the environment and host names, independently of the library.
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
#ifndef MLA_TESTS_MPI_ALLREDUCE_SUPPORT_H_
#define MLA_TESTS_MPI_ALLREDUCE_SUPPORT_H_

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mlallreduce.h"

namespace mlatest {

// This rank, the size of MPI_COMM_WORLD and the thread level MPI gave;
// set by main() before any test runs.
extern int g_rank;
extern int g_size;
extern int g_provided;

using Rng = std::mt19937_64;

// A generator seeded by a fixed seed, the caller's salt and the rank.
Rng MakeRng(uint64_t salt, int rank);
// A uniform integer in [lo, hi].
long long Uni(Rng& rng, long long lo, long long hi);
// FNV-1a of a string and of bytes (salts and bitwise comparisons).
uint64_t HashString(const std::string& s);
uint64_t HashBytes(const void* p, size_t n, uint64_t h = 1469598103934665603ULL);

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

// True on every rank when `local` is true on all of them (collective over
// MPI_COMM_WORLD, through PMPI so the library is not involved).
bool AllRanksTrue(bool local);

// Reduces the verdict over all ranks, prints the local detail, asserts.
#define EXPECT_ALL_RANKS_OK(local)                                                                    \
  do {                                                                                                \
    const ::mlatest::Local& l_ = (local);                                                             \
    if (!l_.ok()) {                                                                                   \
      std::fprintf(stderr, "[rank %d] %ld failure(s); first: %s\n", ::mlatest::g_rank, l_.failures(), \
                   l_.first().c_str());                                                               \
      std::fflush(stderr);                                                                            \
    }                                                                                                 \
    bool all_ok_ = ::mlatest::AllRanksTrue(l_.ok());                                                  \
    EXPECT_TRUE(all_ok_) << "some rank failed (see the [rank N] lines); this rank: "                  \
                         << (l_.ok() ? std::string("ok") : l_.first());                               \
  } while (0)

// ---------------------------------------------------------------------------
// Environment helpers.

// The variable's value, or nullptr when it is unset or empty.
const char* Env(const char* name);
// The variable as an int (atoi), or dflt when it is unset or empty.
int EnvInt(const char* name, int dflt);
// MLA_TEST_EXPECT_DISABLED=1: the library must be off in this run.
bool ExpectDisabled();
// The algorithm the intercepted MPI_Allreduce is expected to choose, or -1
// when it cannot be predicted (a profile is set).
int InterceptedAlgo();

// ---------------------------------------------------------------------------
// Aligned buffers of exact size (ASan catches overruns past n bytes).

class Buf {
 public:
  Buf() = default;
  explicit Buf(size_t n) : n_(n) { p_ = static_cast<unsigned char*>(::operator new(n ? n : 1, std::align_val_t(64))); }
  Buf(const Buf& o) : Buf(o.n_) {
    if (n_) std::memcpy(p_, o.p_, n_);
  }
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
  bool SameBytes(const Buf& o) const { return n_ == o.n_ && (n_ == 0 || std::memcmp(p_, o.p_, n_) == 0); }

 private:
  unsigned char* p_ = nullptr;
  size_t n_ = 0;
};

// ---------------------------------------------------------------------------
// Names.

// The name of a predefined op ("MPI_SUM"), else "user-op".
std::string OpName(MPI_Op op);
// "world", "self", the name set with MPI_Comm_set_name, else "comm".
std::string CommName(MPI_Comm comm);

// ---------------------------------------------------------------------------
// Layout and support oracles.

struct LayoutInfo {
  bool ok = false;
  mla_layout l{};
};

// mla_comm_layout of comm and whether it succeeded.
LayoutInfo GetLayout(MPI_Comm comm);
bool IsInter(MPI_Comm comm);
int CommSize(MPI_Comm comm);
int CommRank(MPI_Comm comm);
// Smallest ranks_per_node over the ranks of comm (same on all of them).
int MinRanksPerNode(MPI_Comm comm);

// The node of each rank of comm, from a source independent of the library:
// virtual nodes of MULTILANE_RANKS_PER_NODE consecutive world ranks, else the
// host name (real nodes: several hosts under srun -N2).  Node ids are numbered
// in the order of their first rank.  Collective over comm.
std::vector<int> NodeIds(MPI_Comm comm);
// The ranks of the smallest node of comm (from NodeIds).
int MinNodeSize(MPI_Comm comm);

// Whether the GPU groups of the core of an irregular comm (the first
// `smallest` ranks of each node, in comm order) all hold the same number of
// ranks: consecutive ranks of a (virtual) node of the host share a GPU, ppg
// at a time (this host's ranks are MPI_COMM_WORLD's).  Collective over comm.
bool CoreGpuGroupsEqual(MPI_Comm comm, int smallest);

// True when a call of `algo` (forced) can run on (dt, op, comm); false when
// it must go to PMPI_Allreduce and count as unsupported.  Passthrough always
// "runs".  Mirrors the documented rules: mla_call_supported; a regular layout
// and, for split, equal GPU groups; an irregular one is folded onto a core of
// the smallest node's size, where split needs equal GPU groups.  Collective
// over comm.
bool AlgoCanRun(int algo, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);

// What mla_comm_layout must say about comm, from NodeIds.
struct WantLayout {
  int nodes = 0;        // distinct nodes
  int node_size = 0;    // ranks on this rank's node
  int node_rank = 0;    // this rank's index among them
  bool regular = true;  // every node holds the same number of ranks
};

// What mla_comm_layout must say about comm, from NodeIds.  Collective.
WantLayout ExpectedLayout(MPI_Comm comm);

}  // namespace mlatest

#endif  // MLA_TESTS_MPI_ALLREDUCE_SUPPORT_H_
