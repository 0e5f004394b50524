// gpu_test_support.h: what the GPU tests share: agreement across ranks, the
// layout as the tests see it (independently of the library), the predefined
// type x op matrix, one checked call on device buffers, and the exact
// counter expectations.
//
// Rules every GPU test follows so that all ranks agree and nothing hangs:
//  - every rank makes every collective call, whatever failed before on it
//    (failures are collected in a Local, never returned early);
//  - at the end of a test the verdict is reduced over MPI_COMM_WORLD and only
//    then asserted, so all ranks pass or fail together;
//  - only PMPI_* is used for references and agreement, so the library's
//    counters see exactly the calls under test.
#ifndef MLA_TESTS_GPU_GPU_TEST_SUPPORT_H_
#define MLA_TESTS_GPU_GPU_TEST_SUPPORT_H_

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mlallreduce.h"

namespace gputest {

extern int g_rank, g_size, g_device;

// This rank's failures; the first few kept in detail.
class Local {
 public:
  void Fail(const std::string& what) {
    if (failures_++ < kKept) kept_.push_back(what);
  }
  bool ok() const { return failures_ == 0; }
  long failures() const { return failures_; }
  const std::string& first() const { return kept_.front(); }
  const std::vector<std::string>& kept() const { return kept_; }

 private:
  static constexpr long kKept = 8;
  long failures_ = 0;
  std::vector<std::string> kept_;
};

// Collective: true only when `ok` on every rank.
bool AllRanks(bool ok);

// Collective: prints this rank's first failure to stderr as "[rank R] ..."
// and asserts (gtest) that every rank is ok.
void ExpectAllRanksOk(const Local& local);

// Collective: whether `h` is the same on every rank.
bool SameOnAllRanks(uint64_t h);
uint64_t Hash(const void* p, size_t n);

// Collective: whether `value` is the same on every rank.
bool Agreed(int64_t value);

// The layout of MPI_COMM_WORLD found by the tests themselves: nodes from the
// host (MPI_COMM_TYPE_SHARED) cut into MULTILANE_RANKS_PER_NODE virtual
// nodes, GPU groups from the device UUIDs, NCCL from dlopen.
struct GpuLayout {
  int nodes = 1;
  int node_size = 1;
  int node_rank = 0;
  int ppg = 1;         // ranks of this rank's node on its GPU (same UUID)
  int gpu_groups = 1;  // (node, GPU) groups in MPI_COMM_WORLD
  int gpus = 1;        // distinct UUIDs in MPI_COMM_WORLD
  bool regular = true;
  bool nccl_lib = false;         // libnccl.so.2 loads on every rank
  bool lanes_distinct = false;   // every lane's ranks are on distinct GPUs
  bool lane0_distinct = false;   // lane 0's ranks (hier's only lane) are
  bool slices_distinct = false;  // every slice's ranks are
  bool mps = false;              // CUDA reports MPS on every rank's device
  bool concurrent = false;       // every rank's kernels can run alongside the others' (alone on
                                 // its GPU, or MPS)

  // Whether `algo` has a step between nodes (lane, hier) or GPUs (split).
  bool CrossStep(mla_algo algo) const;
  // Whether a device call of `bytes` runs on the flag path (docs/gpu.md): one
  // node of 2 to 16 ranks whose kernels run concurrently (one rank per GPU,
  // or MPS), at most MULTILANE_DEVICE_FLAG_MAX bytes (64 KiB unless set).
  bool FlagPath(uint64_t bytes) const;
  // Whether NCCL can carry that step; when not, *why says so.
  bool NcclCanRun(mla_algo algo, std::string* why) const;
  std::string Describe() const;
};

// Collective over MPI_COMM_WORLD; call once after cudaSetDevice.
void ComputeLayout();
const GpuLayout& Layout();

// One predefined datatype with the ops the tests run it with.
enum class Cls { kSigned, kUnsigned, kFloat, kByte, kBool, kComplex, kPairInt, kPairFloat };
struct TypeCase {
  const char* name;
  MPI_Datatype type;
  Cls cls;
  int size;  // bytes per element (the extent)
  std::vector<MPI_Op> ops;
};

// Every predefined type the device kernels take, with every op MPI allows on
// it (the host test's matrix), and a few they do not take (complex, pairs).
const std::vector<TypeCase>& AllTypes();
const TypeCase& FindType(MPI_Datatype type);
std::string OpName(MPI_Op op);

// Whether the system MPI takes (type, op): a one-element PMPI_Allreduce on a
// copy of MPI_COMM_SELF that returns errors.  The same on every rank.
bool MpiAccepts(MPI_Datatype type, MPI_Op op);

// Whether the device kernels run (type, op); otherwise the call is staged.
bool KernelsTake(const TypeCase& tc, MPI_Op op);
// Whether NCCL carries (type, op): 8/32/64-bit integers, fp32, fp64 with
// sum, prod, min, max.
bool NcclTakes(const TypeCase& tc, MPI_Op op);

// Data whose reduction is exact in any order (small integers, +-1/2 for
// products), different on every rank.
std::vector<unsigned char> Fill(const TypeCase& tc, MPI_Op op, int count, uint64_t seed);

// Fails *local with "WHAT failed: why" unless rc is cudaSuccess.
void Check(cudaError_t rc, const char* what, Local* local);

// Two device buffers of `bytes` each, from cudaMalloc, or with `pool` from
// the stream-ordered pool (cudaMallocAsync on a stream of their own, ready
// when constructed); freed at scope end.
struct DevicePair {
  explicit DevicePair(size_t bytes, Local* local, bool pool = false);
  ~DevicePair();
  DevicePair(const DevicePair&) = delete;
  DevicePair& operator=(const DevicePair&) = delete;
  void* send = nullptr;
  void* recv = nullptr;
  size_t bytes = 0;
  cudaStream_t stream = nullptr;  // the pool's
};

// One call: how it is made.
struct Call {
  const TypeCase* tc;
  MPI_Op op;
  int count;
  bool in_place;
  uint64_t seed;
};

// Runs `call` on `bufs` with mla_allreduce_with(choice), or the intercepted
// MPI_Allreduce when choice is nullptr, and checks it: return code, result
// bitwise equal to PMPI_Allreduce on host copies of the same data, the send
// buffer untouched, results bitwise equal on every rank.  Collective, always
// makes the same collective calls on every rank.
void RunCall(const Call& call, const mla_choice* choice, DevicePair* bufs, Local* local);

// Counter deltas a sequence of calls must produce.
struct Counts {
  uint64_t calls = 0, device = 0, unsupported = 0, nccl_fallbacks = 0;
  uint64_t algo[MLA_ALGO_COUNT] = {0};
  uint64_t path[MLA_PATH_COUNT] = {0};
  uint64_t flag = 0, one_shot = 0;  // device calls on the flag path, and of those one-shot
};

// Adds to *c what one device call of `count` elements of (tc, op) with
// `choice` must count in this layout.
void ExpectDeviceCall(const TypeCase& tc, MPI_Op op, const mla_choice& choice, int count, Counts* c);
// Adds a call with device buffers that the library stages whole.
void ExpectStagedCall(Counts* c);

// Checks after - before == expected, field by field; names what differs.
void CheckCounts(const mla_stats& before, const mla_stats& after, const Counts& expected, const std::string& what,
                 Local* local);

// Collects what rank 0 writes to stderr between Start and Stop (the
// library's warnings come from world rank 0 only).
class StderrCapture {
 public:
  void Start();
  // Returns what was written (empty on other ranks).
  std::string Stop();

 private:
  int saved_ = -1;
  std::string path_;
};

// Occurrences of `needle` in `text`.
int Occurrences(const std::string& text, const std::string& needle);

std::string Name(const mla_choice& c);

}  // namespace gputest

#endif  // MLA_TESTS_GPU_GPU_TEST_SUPPORT_H_
