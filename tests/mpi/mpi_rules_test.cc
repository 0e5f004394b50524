// MPI's rules the library must keep where it runs its own algorithms
// (issue 23): errors raised under the caller's error handler (N6), the
// padding bytes of pair types left alone (N13), and no host algorithm on
// buffers it cannot classify (N15).  allreduce_mpi_test.cc checks results;
// this file checks what MPI promises besides the result.
//
// Same rules as allreduce_mpi_test.cc: every rank makes the same collective
// calls, checks are local, the verdict is reduced over MPI_COMM_WORLD with
// PMPI_Allreduce before it is asserted, and only world rank 0 prints gtest's
// report.  tests/CMakeLists.txt runs each group under its own layout.
//
// Environment read by the tests:
//   MLA_TEST_CUDA_STUB=PATH  a libcuda.so to load (the CUDA toolkit's stub):
//                            the CudaWithoutModule tests run only with it.

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mlallreduce.h"

namespace {

int g_rank = 0;
int g_size = 1;

// This rank's failures, the first one in detail.
struct Local {
  int failures = 0;
  std::string first;
  void Fail(const std::string& what) {
    if (failures++ == 0) first = what;
  }
};

bool AllRanksOk(const Local& local) {
  if (local.failures > 0)
    std::fprintf(stderr, "[rank %d] %d failure(s); first: %s\n", g_rank, local.failures, local.first.c_str());
  int ok = local.failures == 0 ? 1 : 0, all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

#define EXPECT_ALL_RANKS_OK(local) EXPECT_TRUE(AllRanksOk(local)) << "some rank failed (see the [rank N] lines)"

mla_choice Choice(mla_algo algo) {
  mla_choice c;
  std::memset(&c, 0, sizeof c);
  c.algo = algo;
  return c;
}

// The algorithms that run on MPI_COMM_WORLD in this layout (split needs GPU
// groups that the layout has), each through mla_allreduce_with.
std::vector<mla_algo> RunnableAlgorithms() {
  std::vector<mla_algo> algos;
  for (mla_algo a : {MLA_ALGO_LANE, MLA_ALGO_HIER, MLA_ALGO_SPLIT}) {
    mla_stats before, after;
    mla_get_stats(&before);
    int x = 1, y = 0;
    const mla_choice c = Choice(a);
    mla_allreduce_with(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &c);
    mla_get_stats(&after);
    if (after.calls_by_algo[a] > before.calls_by_algo[a]) algos.push_back(a);
  }
  return algos;
}

// A way to call the library (the intercepted MPI_Allreduce, one algorithm
// through mla_allreduce_with) or the system MPI, for the tests below.
using CallFn = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, mla_algo);

int ThroughChoice(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm, mla_algo algo) {
  const mla_choice c = Choice(algo);
  return mla_allreduce_with(s, r, n, t, op, comm, &c);
}

// ---------------------------------------------------------------------------
// N6: MPI_ERRORS_RETURN (or any handler) on the caller's communicator holds
// for calls the library runs, also after its first call cached the
// communicator's state.

std::string ClassName(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(cls, text, &len);
  return std::to_string(cls) + " (" + std::string(text, static_cast<size_t>(len)) + ")";
}

int ErrorClass(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  return cls;
}

// One call of each kind that MPI refuses with an op/datatype error.
struct BadCall {
  const char* name;
  MPI_Datatype type;
  MPI_Op op;
};
const BadCall kBadCalls[] = {{"MPI_MINLOC on MPI_DOUBLE", MPI_DOUBLE, MPI_MINLOC},
                             {"MPI_SUM on MPI_DOUBLE_INT", MPI_DOUBLE_INT, MPI_SUM},
                             {"MPI_BAND on MPI_FLOAT", MPI_FLOAT, MPI_BAND}};

int ThroughMpiAllreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm, mla_algo) {
  return MPI_Allreduce(s, r, n, t, op, comm);  // intercepted: MULTILANE_ALGO decides
}

// A good call (so that the library builds and caches its communicators),
// then every bad call: each must give the error class PMPI_Allreduce gives.
void GoodThenBad(MPI_Comm comm, CallFn call, mla_algo algo, const std::string& what, Local& local) {
  double in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
  if (call(in, out, 4, MPI_DOUBLE, MPI_SUM, comm, algo) != MPI_SUCCESS) local.Fail(what + ": the good call failed");
  for (const BadCall& bad : kBadCalls) {
    const int want = PMPI_Allreduce(in, out, 2, bad.type, bad.op, comm);
    const int got = call(in, out, 2, bad.type, bad.op, comm, algo);
    if (want == MPI_SUCCESS) {
      local.Fail(what + ": the system MPI accepts " + bad.name + " (test premise)");
    } else if (ErrorClass(got) != ErrorClass(want)) {
      local.Fail(what + ", " + bad.name + ": error class " + ClassName(got) + ", the system MPI gives " +
                 ClassName(want));
    }
  }
}

void RunErrorsReturn(bool handler_first, Local& local) {
  for (mla_algo algo : RunnableAlgorithms()) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (handler_first) MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const std::string what = std::string(mla_algo_name(algo)) + (handler_first ? " (handler set first)" : "");
    double in[4] = {1, 2, 3, 4}, out[4];
    ThroughChoice(in, out, 4, MPI_DOUBLE, MPI_SUM, comm, algo);  // the library caches its state
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    GoodThenBad(comm, ThroughChoice, algo, what, local);
    MPI_Comm_free(&comm);
  }
}

TEST(ErrorHandler, ErrorsReturnHoldsAfterTheFirstCall) {
  Local local;
  RunErrorsReturn(false, local);
  EXPECT_ALL_RANKS_OK(local);
}

TEST(ErrorHandler, ErrorsReturnSetBeforeTheFirstCall) {
  Local local;
  RunErrorsReturn(true, local);
  EXPECT_ALL_RANKS_OK(local);
}

// The intercepted MPI_Allreduce on MPI_COMM_WORLD itself (MULTILANE_ALGO).
TEST(ErrorHandler, InterceptedCallOnWorld) {
  Local local;
  double in[4] = {1, 2, 3, 4}, out[4];
  MPI_Allreduce(in, out, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  GoodThenBad(MPI_COMM_WORLD, ThroughMpiAllreduce, MLA_ALGO_PASSTHROUGH, "MPI_Allreduce", local);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  EXPECT_ALL_RANKS_OK(local);
}

// What the program's own handler saw.
struct Seen {
  int calls = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  int error_class = MPI_SUCCESS;
};
Seen g_seen;

void RecordError(MPI_Comm* comm, int* code, ...) {
  ++g_seen.calls;
  g_seen.comm = *comm;
  g_seen.error_class = ErrorClass(*code);
}

// The program's handler is called once per failed call, on its own
// communicator, with the class the system MPI raises, as MPI calls it.
TEST(ErrorHandler, TheProgramsHandlerIsCalledOnItsCommunicator) {
  Local local;
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(RecordError, &handler);
  for (mla_algo algo : RunnableAlgorithms()) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    double in[4] = {1, 2, 3, 4}, out[4];
    ThroughChoice(in, out, 4, MPI_DOUBLE, MPI_SUM, comm, algo);
    MPI_Comm_set_errhandler(comm, handler);
    g_seen = Seen();
    PMPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MINLOC, comm);
    const Seen want = g_seen;
    g_seen = Seen();
    ThroughChoice(in, out, 2, MPI_DOUBLE, MPI_MINLOC, comm, algo);
    const std::string name = mla_algo_name(algo);
    if (want.calls != 1)
      local.Fail(name + ": the system MPI called the handler " + std::to_string(want.calls) + " times (premise)");
    if (g_seen.calls != want.calls || g_seen.comm != comm || g_seen.error_class != want.error_class) {
      local.Fail(name + ": handler called " + std::to_string(g_seen.calls) + " time(s)" +
                 (g_seen.calls > 0 && g_seen.comm != comm ? " on another communicator" : "") + " with class " +
                 ClassName(g_seen.error_class) + "; the system MPI: once, on the caller's, with " +
                 ClassName(want.error_class));
    }
    MPI_Comm_free(&comm);
  }
  MPI_Errhandler_free(&handler);
  EXPECT_ALL_RANKS_OK(local);
}

// ---------------------------------------------------------------------------
// N13: the bytes of a pair type's extent that hold neither member (padding)
// are left as they were in recvbuf, as the system MPI leaves them.

template <class V>
struct Pair {
  V v;
  int i;
};

struct PairType {
  const char* name;
  MPI_Datatype type;
  size_t extent;
  std::vector<bool> data;  // which bytes of one element hold a member
  void (*set)(unsigned char* element, int value, int index);
};

template <class V>
void SetPair(unsigned char* element, int value, int index) {
  const V v = static_cast<V>(value);
  std::memcpy(element + offsetof(Pair<V>, v), &v, sizeof v);
  std::memcpy(element + offsetof(Pair<V>, i), &index, sizeof index);
}

template <class V>
PairType MakePairType(const char* name, MPI_Datatype type) {
  PairType t{name, type, sizeof(Pair<V>), std::vector<bool>(sizeof(Pair<V>), false), SetPair<V>};
  for (size_t b = 0; b < sizeof(V); ++b) t.data[offsetof(Pair<V>, v) + b] = true;
  for (size_t b = 0; b < sizeof(int); ++b) t.data[offsetof(Pair<V>, i) + b] = true;
  return t;
}

std::vector<PairType> PairTypes() {
  return {MakePairType<double>("MPI_DOUBLE_INT", MPI_DOUBLE_INT), MakePairType<long>("MPI_LONG_INT", MPI_LONG_INT),
          MakePairType<short>("MPI_SHORT_INT", MPI_SHORT_INT),
          MakePairType<long double>("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT),
          MakePairType<float>("MPI_FLOAT_INT", MPI_FLOAT_INT)};
}

constexpr unsigned char kRecvPattern = 0xA5;
constexpr unsigned char kSendPattern = 0x5A;
constexpr int kPairCount = 9;

// sendbuf: members set, padding kSendPattern; recvbuf: all kRecvPattern
// (or, in place, a copy of sendbuf).
void FillPairs(const PairType& t, int salt, std::vector<unsigned char>* send) {
  send->assign(t.extent * kPairCount, kSendPattern);
  for (int k = 0; k < kPairCount; ++k) {
    unsigned char* e = send->data() + k * t.extent;
    for (size_t b = 0; b < t.extent; ++b)
      if (t.data[b]) e[b] = 0;
    t.set(e, (g_rank * 7 + k * 3 + salt) % 5, g_rank);  // ties on some elements
  }
}

// The first padding byte of recv that differs from want, or -1.
long PaddingChanged(const PairType& t, const std::vector<unsigned char>& recv, const std::vector<unsigned char>& want) {
  for (size_t b = 0; b < recv.size(); ++b)
    if (!t.data[b % t.extent] && recv[b] != want[b]) return static_cast<long>(b);
  return -1;
}

std::string Hex(unsigned char b) {
  char h[8];
  std::snprintf(h, sizeof h, "0x%02x", b);
  return h;
}

int ThroughPmpi(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm, mla_algo) {
  return PMPI_Allreduce(s, r, n, t, op, comm);
}

// recv's padding after one call, in place or not.
std::vector<unsigned char> RunPairs(const PairType& t, MPI_Op op, bool in_place, CallFn call, mla_algo algo, int* rc) {
  std::vector<unsigned char> send;
  FillPairs(t, op == MPI_MINLOC ? 1 : 2, &send);
  std::vector<unsigned char> recv = in_place ? send : std::vector<unsigned char>(send.size(), kRecvPattern);
  *rc = call(in_place ? MPI_IN_PLACE : send.data(), recv.data(), kPairCount, t.type, op, MPI_COMM_WORLD, algo);
  return recv;
}

void CheckPadding(const PairType& t, MPI_Op op, bool in_place, const std::vector<mla_algo>& algos, Local& local) {
  const std::string what =
      std::string(t.name) + (op == MPI_MINLOC ? " MPI_MINLOC" : " MPI_MAXLOC") + (in_place ? " in place" : "");
  // The results themselves are checked by allreduce_mpi_test.cc; here only
  // the bytes that hold no member.
  std::vector<unsigned char> before;
  FillPairs(t, op == MPI_MINLOC ? 1 : 2, &before);
  if (!in_place) before.assign(before.size(), kRecvPattern);
  int rc = MPI_SUCCESS;
  const std::vector<unsigned char> ref = RunPairs(t, op, in_place, ThroughPmpi, MLA_ALGO_PASSTHROUGH, &rc);
  if (rc != MPI_SUCCESS || PaddingChanged(t, ref, before) >= 0) {
    local.Fail(what + ": the system MPI itself changes the padding (test premise)");
    return;
  }
  for (mla_algo algo : algos) {
    const std::vector<unsigned char> got = RunPairs(t, op, in_place, ThroughChoice, algo, &rc);
    const long at = PaddingChanged(t, got, before);
    if (rc != MPI_SUCCESS)
      local.Fail(what + " " + mla_algo_name(algo) + ": returned " + std::to_string(rc));
    else if (at >= 0)
      local.Fail(what + " " + mla_algo_name(algo) + ": padding byte " + std::to_string(at) + " of recvbuf is " +
                 Hex(got[at]) + ", was " + Hex(before[at]));
  }
}

TEST(PairPadding, RecvPaddingIsLeftAsItWas) {
  Local local;
  const std::vector<mla_algo> algos = RunnableAlgorithms();
  if (algos.empty()) local.Fail("no algorithm runs on this layout (test setup)");
  for (const PairType& t : PairTypes()) {
    for (MPI_Op op : {MPI_MINLOC, MPI_MAXLOC}) {
      CheckPadding(t, op, false, algos, local);
      CheckPadding(t, op, true, algos, local);
    }
  }
  EXPECT_ALL_RANKS_OK(local);
}

// ---------------------------------------------------------------------------
// N15: CUDA in the process and no CUDA module: no buffer is known to be host
// memory, so every call goes to the system MPI, never to a host algorithm.

TEST(CudaWithoutModule, CallsGoToTheSystemMpi) {
  const char* stub = std::getenv("MLA_TEST_CUDA_STUB");
  if (stub == nullptr) GTEST_SKIP() << "MLA_TEST_CUDA_STUB is not set";
  Local local;
  const std::vector<mla_algo> algos = RunnableAlgorithms();
  if (algos.empty()) local.Fail("no algorithm runs on this layout before CUDA is loaded (test setup)");
  // The driver library in the process: what an application using CUDA has.
  if (dlopen(stub, RTLD_NOW | RTLD_GLOBAL) == nullptr) local.Fail(std::string("dlopen: ") + dlerror());
  int in[6] = {1, 2, 3, 4, 5, 6}, out[6] = {0}, ref[6] = {0};
  PMPI_Allreduce(in, ref, 6, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (mla_algo algo : algos) {
    mla_stats before, after;
    mla_get_stats(&before);
    const int rc = ThroughChoice(in, out, 6, MPI_INT, MPI_SUM, MPI_COMM_WORLD, algo);
    mla_get_stats(&after);
    const std::string name = mla_algo_name(algo);
    if (rc != MPI_SUCCESS || std::memcmp(out, ref, sizeof out) != 0) local.Fail(name + ": wrong result");
    if (after.calls_by_algo[algo] != before.calls_by_algo[algo])
      local.Fail(name + " ran on buffers the library cannot classify (the CUDA module is missing)");
    if (after.calls_by_algo[MLA_ALGO_PASSTHROUGH] != before.calls_by_algo[MLA_ALGO_PASSTHROUGH] + 1)
      local.Fail(name + ": the call did not go to the system MPI");
  }
  // The intercepted MPI_Allreduce too (MULTILANE_ALGO).
  mla_stats before, after;
  mla_get_stats(&before);
  MPI_Allreduce(in, out, 6, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  mla_get_stats(&after);
  if (after.calls_by_algo[MLA_ALGO_PASSTHROUGH] != before.calls_by_algo[MLA_ALGO_PASSTHROUGH] + 1)
    local.Fail("MPI_Allreduce: the call did not go to the system MPI");
  EXPECT_ALL_RANKS_OK(local);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  ::testing::InitGoogleTest(&argc, argv);
  if (g_rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  int all_rc = rc;
  PMPI_Allreduce(&rc, &all_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_rc;
}
