#include "gpu_test_support.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

namespace gputest {

int g_rank = 0, g_size = 1, g_device = 0;

bool AllRanks(bool ok) {
  int in = ok ? 1 : 0, out = 0;
  PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return out == 1;
}

void ExpectAllRanksOk(const Local& local) {
  if (!local.ok()) {
    std::fprintf(stderr, "[rank %d] %ld failure(s); first: %s\n", g_rank, local.failures(), local.first().c_str());
    for (size_t i = 1; i < local.kept().size(); ++i)
      std::fprintf(stderr, "[rank %d]   then: %s\n", g_rank, local.kept()[i].c_str());
    std::fflush(stderr);
  }
  const bool all = AllRanks(local.ok());
  EXPECT_TRUE(all) << "some rank failed (see the [rank N] lines); this rank: "
                   << (local.ok() ? std::string("ok") : local.first());
}

uint64_t Hash(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  return h;
}

bool SameOnAllRanks(uint64_t h) {
  uint64_t in[2] = {h, ~h}, out[2];
  PMPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return out[0] == ~out[1];
}

bool Agreed(int64_t value) { return SameOnAllRanks(static_cast<uint64_t>(value)); }

// ---------------------------------------------------------------------------
// Layout.

namespace {

GpuLayout g_layout;

struct RankInfo {
  unsigned char uuid[16];
  int64_t node_key;
  int32_t nccl;
  int32_t pad;
};

bool Distinct(const std::vector<const RankInfo*>& members) {
  std::set<std::string> seen;
  for (const RankInfo* m : members) {
    if (!seen.insert(std::string(reinterpret_cast<const char*>(m->uuid), 16)).second) return false;
  }
  return true;
}

}  // namespace

const GpuLayout& Layout() { return g_layout; }

void ComputeLayout() {
  GpuLayout& L = g_layout;
  MPI_Comm host;
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &host);
  int host_rank = 0, leader = g_rank;
  PMPI_Comm_rank(host, &host_rank);
  PMPI_Bcast(&leader, 1, MPI_INT, 0, host);
  PMPI_Comm_free(&host);
  const char* rpn_env = std::getenv("MULTILANE_RANKS_PER_NODE");
  const int rpn = rpn_env != nullptr ? std::max(0, std::atoi(rpn_env)) : 0;

  RankInfo mine{};
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, g_device) == cudaSuccess) std::memcpy(mine.uuid, prop.uuid.bytes, 16);
  mine.node_key = static_cast<int64_t>(leader) * 1000000 + (rpn > 0 ? host_rank / rpn : 0);
  // The names the library tries, in its order.
  void* nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (nccl == nullptr) nccl = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
  mine.nccl = nccl != nullptr ? 1 : 0;
  std::vector<RankInfo> all(g_size);
  PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);

  // Nodes in order of their first rank; node and GPU indices of every rank.
  std::map<int64_t, std::vector<int>> nodes;
  for (int r = 0; r < g_size; ++r) nodes[all[r].node_key].push_back(r);
  std::vector<int> node_rank(g_size), gpu_rank(g_size);
  std::set<std::pair<int64_t, std::string>> groups;
  std::set<std::string> uuids;
  std::set<size_t> node_sizes, group_sizes;
  for (auto& [key, members] : nodes) {
    node_sizes.insert(members.size());
    std::map<std::string, int> on_gpu;
    for (size_t i = 0; i < members.size(); ++i) {
      const int r = members[i];
      const std::string u(reinterpret_cast<const char*>(all[r].uuid), 16);
      node_rank[r] = static_cast<int>(i);
      gpu_rank[r] = on_gpu[u]++;
      groups.insert({key, u});
      uuids.insert(u);
    }
    for (auto& [u, n] : on_gpu) group_sizes.insert(static_cast<size_t>(n));
  }
  L.nodes = static_cast<int>(nodes.size());
  const std::vector<int>& my_node = nodes[mine.node_key];
  L.node_size = static_cast<int>(my_node.size());
  L.node_rank = node_rank[g_rank];
  L.ppg = 0;
  for (int r : my_node) L.ppg += std::memcmp(all[r].uuid, mine.uuid, 16) == 0 ? 1 : 0;
  L.gpu_groups = static_cast<int>(groups.size());
  L.gpus = static_cast<int>(uuids.size());
  L.regular = node_sizes.size() == 1 && group_sizes.size() == 1;
  L.nccl_lib = true;
  for (const RankInfo& i : all) L.nccl_lib = L.nccl_lib && i.nccl == 1;

  std::map<int, std::vector<const RankInfo*>> lanes, slices;
  for (int r = 0; r < g_size; ++r) {
    lanes[node_rank[r]].push_back(&all[r]);
    slices[gpu_rank[r]].push_back(&all[r]);
  }
  L.lanes_distinct = true;
  for (auto& [i, m] : lanes) L.lanes_distinct = L.lanes_distinct && Distinct(m);
  L.lane0_distinct = Distinct(lanes[0]);
  L.slices_distinct = true;
  for (auto& [i, m] : slices) L.slices_distinct = L.slices_distinct && Distinct(m);
  int mps = 0;
  if (cudaDeviceGetAttribute(&mps, cudaDevAttrMpsEnabled, g_device) != cudaSuccess) mps = 0;
  int flags[2] = {mps ? 1 : 0, (L.ppg == 1 || mps) ? 1 : 0};
  PMPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  L.mps = flags[0] != 0;
  L.concurrent = flags[1] != 0;
}

bool GpuLayout::FlagPath(uint64_t bytes) const {
  uint64_t limit = 64u << 10;  // the library's default
  if (const char* v = std::getenv("MULTILANE_DEVICE_FLAG_MAX")) limit = std::strtoull(v, nullptr, 10);
  return nodes == 1 && node_size >= 2 && node_size <= 16 && concurrent && bytes <= limit;
}

bool GpuLayout::CrossStep(mla_algo algo) const {
  if (algo == MLA_ALGO_SPLIT) return gpu_groups > 1;
  return (algo == MLA_ALGO_LANE || algo == MLA_ALGO_HIER) && nodes > 1;
}

bool GpuLayout::NcclCanRun(mla_algo algo, std::string* why) const {
  std::string w;
  if (!CrossStep(algo))
    w = "no step between nodes or GPUs in this layout";
  else if (!nccl_lib)
    w = "libnccl.so.2 does not load on every rank";
  else if (algo == MLA_ALGO_LANE && !lanes_distinct)
    w = "two ranks of a lane share a GPU (NCCL takes one rank per GPU)";
  else if (algo == MLA_ALGO_HIER && !lane0_distinct)
    w = "two node leaders share a GPU (NCCL takes one rank per GPU)";
  else if (algo == MLA_ALGO_SPLIT && !slices_distinct)
    w = "two ranks of a slice share a GPU (NCCL takes one rank per GPU)";
  if (why != nullptr) *why = w;
  return w.empty();
}

std::string GpuLayout::Describe() const {
  std::ostringstream o;
  o << g_size << " ranks, " << nodes << " node(s) of " << node_size << ", " << gpus << " GPU(s), " << ppg
    << " rank(s) per GPU (by UUID), " << gpu_groups << " GPU group(s), NCCL " << (nccl_lib ? "loads" : "absent")
    << (mps ? ", MPS" : "") << (regular ? "" : ", IRREGULAR") << ", flag path " << (FlagPath(1) ? "on" : "off");
  for (mla_algo a : {MLA_ALGO_LANE, MLA_ALGO_HIER, MLA_ALGO_SPLIT}) {
    std::string why;
    o << "; " << mla_algo_name(a) << ": "
      << (!CrossStep(a)         ? "no step between nodes/GPUs"
          : NcclCanRun(a, &why) ? "nccl can run"
                                : "nccl cannot run (" + why + ")");
  }
  return o.str();
}

// ---------------------------------------------------------------------------
// Types and ops.

std::string OpName(MPI_Op op) {
  struct {
    MPI_Op op;
    const char* name;
  } names[] = {{MPI_SUM, "sum"},   {MPI_PROD, "prod"}, {MPI_MIN, "min"},       {MPI_MAX, "max"},
               {MPI_LAND, "land"}, {MPI_LOR, "lor"},   {MPI_LXOR, "lxor"},     {MPI_BAND, "band"},
               {MPI_BOR, "bor"},   {MPI_BXOR, "bxor"}, {MPI_MINLOC, "minloc"}, {MPI_MAXLOC, "maxloc"}};
  for (auto& n : names)
    if (n.op == op) return n.name;
  return "user-op";
}

const std::vector<TypeCase>& AllTypes() {
  static const std::vector<TypeCase> types = [] {
    const std::vector<MPI_Op> ints = {MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                                      MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    // MPI_AINT, MPI_OFFSET, MPI_COUNT: "multi-language" types take no logical ops.
    const std::vector<MPI_Op> multi = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_BAND, MPI_BOR, MPI_BXOR};
    const std::vector<MPI_Op> floats = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    return std::vector<TypeCase>{
        {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, Cls::kSigned, 1, ints},
        {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, Cls::kUnsigned, 1, ints},
        {"MPI_SHORT", MPI_SHORT, Cls::kSigned, 2, ints},
        {"MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, Cls::kUnsigned, 2, ints},
        {"MPI_INT", MPI_INT, Cls::kSigned, 4, ints},
        {"MPI_UNSIGNED", MPI_UNSIGNED, Cls::kUnsigned, 4, ints},
        {"MPI_LONG", MPI_LONG, Cls::kSigned, sizeof(long), ints},
        {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, Cls::kUnsigned, sizeof(long), ints},
        {"MPI_LONG_LONG", MPI_LONG_LONG, Cls::kSigned, 8, ints},
        {"MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, Cls::kUnsigned, 8, ints},
        {"MPI_INT8_T", MPI_INT8_T, Cls::kSigned, 1, ints},
        {"MPI_INT16_T", MPI_INT16_T, Cls::kSigned, 2, ints},
        {"MPI_INT32_T", MPI_INT32_T, Cls::kSigned, 4, ints},
        {"MPI_INT64_T", MPI_INT64_T, Cls::kSigned, 8, ints},
        {"MPI_UINT8_T", MPI_UINT8_T, Cls::kUnsigned, 1, ints},
        {"MPI_UINT16_T", MPI_UINT16_T, Cls::kUnsigned, 2, ints},
        {"MPI_UINT32_T", MPI_UINT32_T, Cls::kUnsigned, 4, ints},
        {"MPI_UINT64_T", MPI_UINT64_T, Cls::kUnsigned, 8, ints},
        {"MPI_AINT", MPI_AINT, Cls::kSigned, sizeof(MPI_Aint), multi},
        {"MPI_OFFSET", MPI_OFFSET, Cls::kSigned, sizeof(MPI_Offset), multi},
        {"MPI_COUNT", MPI_COUNT, Cls::kSigned, sizeof(MPI_Count), multi},
        {"MPI_BYTE", MPI_BYTE, Cls::kByte, 1, {MPI_BAND, MPI_BOR, MPI_BXOR}},
        {"MPI_C_BOOL", MPI_C_BOOL, Cls::kBool, 1, {MPI_LAND, MPI_LOR, MPI_LXOR}},
        {"MPI_FLOAT", MPI_FLOAT, Cls::kFloat, 4, floats},
        {"MPI_DOUBLE", MPI_DOUBLE, Cls::kFloat, 8, floats},
        // Without device kernels: staged through the host.
        {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, Cls::kComplex, 16, {MPI_SUM, MPI_PROD}},
        {"MPI_2INT", MPI_2INT, Cls::kPairInt, 8, {MPI_MINLOC, MPI_MAXLOC}},
        {"MPI_FLOAT_INT", MPI_FLOAT_INT, Cls::kPairFloat, 8, {MPI_MINLOC, MPI_MAXLOC}},
    };
  }();
  return types;
}

const TypeCase& FindType(MPI_Datatype type) {
  for (const TypeCase& tc : AllTypes())
    if (tc.type == type) return tc;
  std::abort();
}

bool MpiAccepts(MPI_Datatype type, MPI_Op op) {
  static MPI_Comm probe = MPI_COMM_NULL;
  if (probe == MPI_COMM_NULL) {
    PMPI_Comm_dup(MPI_COMM_SELF, &probe);
    PMPI_Comm_set_errhandler(probe, MPI_ERRORS_RETURN);
  }
  alignas(64) unsigned char in[64] = {0}, out[64] = {0};
  return PMPI_Allreduce(in, out, 1, type, op, probe) == MPI_SUCCESS;
}

bool KernelsTake(const TypeCase& tc, MPI_Op) {
  return tc.cls != Cls::kComplex && tc.cls != Cls::kPairInt && tc.cls != Cls::kPairFloat;
}

bool NcclTakes(const TypeCase& tc, MPI_Op op) {
  const bool arith = op == MPI_SUM || op == MPI_PROD || op == MPI_MIN || op == MPI_MAX;
  const bool type = tc.cls == Cls::kFloat || ((tc.cls == Cls::kSigned || tc.cls == Cls::kUnsigned) && tc.size != 2);
  return arith && type;
}

namespace {

template <class T>
void Put(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// The low `size` bytes of v (two's complement, little-endian).
void PutInt(unsigned char* p, int64_t v, int size) { std::memcpy(p, &v, static_cast<size_t>(size)); }

}  // namespace

std::vector<unsigned char> Fill(const TypeCase& tc, MPI_Op op, int count, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(g_rank) * 1000003u +
                      static_cast<uint64_t>(count));
  auto uni = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  std::vector<unsigned char> out(static_cast<size_t>(count) * tc.size);
  for (int i = 0; i < count; ++i) {
    unsigned char* p = out.data() + static_cast<size_t>(i) * tc.size;
    const bool sgn = tc.cls == Cls::kSigned;
    switch (tc.cls) {
      case Cls::kSigned:
      case Cls::kUnsigned: {
        int64_t v;
        if (op == MPI_SUM)
          v = sgn ? uni(-3, 3) : uni(0, 5);
        else if (op == MPI_PROD)
          v = sgn ? (uni(0, 1) ? 1 : -1) : uni(1, 2);
        else if (op == MPI_MIN || op == MPI_MAX) {
          // Unsigned: half the values with the top bit set, so that comparing
          // them as signed (a wrong map) picks other elements (issue 27).
          const int64_t top = static_cast<int64_t>(uint64_t{1} << (8 * tc.size - 1));
          v = sgn ? uni(-60, 60) : uni(0, 1) ? uni(0, 120) : top + uni(0, 120);
        } else if (op == MPI_LAND)
          v = uni(0, 9) ? uni(1, 3) : 0;
        else if (op == MPI_LOR)
          v = uni(0, 9) ? 0 : uni(1, 3);
        else if (op == MPI_LXOR)
          v = uni(0, 2);
        else if (op == MPI_BAND)
          v = static_cast<int64_t>(rng() | rng() | rng());  // bits mostly 1
        else if (op == MPI_BOR)
          v = static_cast<int64_t>(rng() & rng() & rng());  // bits mostly 0
        else
          v = static_cast<int64_t>(rng());
        PutInt(p, v, tc.size);
        break;
      }
      case Cls::kByte:
        *p = static_cast<unsigned char>(rng());
        break;
      case Cls::kBool:
        *p = op == MPI_LAND ? uni(0, 9) != 0 : op == MPI_LOR ? uni(0, 9) == 0 : uni(0, 1);
        break;
      case Cls::kFloat: {
        static const int prod_values[] = {-2, -1, 1, 2};
        const double v = op == MPI_SUM ? uni(-8, 8) : op == MPI_PROD ? prod_values[uni(0, 3)] : uni(-100, 100);
        if (tc.size == 4)
          Put(p, static_cast<float>(v));
        else
          Put(p, v);
        break;
      }
      case Cls::kComplex: {
        static const int prod_values[][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        const auto& pv = prod_values[uni(0, 3)];
        Put(p, op == MPI_SUM ? static_cast<double>(uni(-8, 8)) : static_cast<double>(pv[0]));
        Put(p + 8, op == MPI_SUM ? static_cast<double>(uni(-8, 8)) : static_cast<double>(pv[1]));
        break;
      }
      case Cls::kPairInt:
        Put(p, static_cast<int32_t>(uni(-2, 2)));
        Put(p + 4, static_cast<int32_t>(uni(0, 5)));
        break;
      case Cls::kPairFloat:
        Put(p, static_cast<float>(uni(-2, 2)));
        Put(p + 4, static_cast<int32_t>(uni(0, 5)));
        break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Calls.

void Check(cudaError_t rc, const char* what, Local* local) {
  if (rc != cudaSuccess) local->Fail(std::string(what) + " failed: " + cudaGetErrorString(rc));
}

DevicePair::DevicePair(size_t n, Local* local, bool pool) : bytes(n) {
  if (pool) {
    Check(cudaStreamCreate(&stream), "cudaStreamCreate", local);
    Check(cudaMallocAsync(&send, n, stream), "cudaMallocAsync", local);
    Check(cudaMallocAsync(&recv, n, stream), "cudaMallocAsync", local);
    Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize", local);
  } else if (cudaMalloc(&send, n ? n : 1) != cudaSuccess || cudaMalloc(&recv, n ? n : 1) != cudaSuccess) {
    local->Fail("cudaMalloc of " + std::to_string(n) + " bytes failed");
  }
}

DevicePair::~DevicePair() {
  if (stream == nullptr) {
    cudaFree(send);
    cudaFree(recv);
    return;
  }
  cudaFreeAsync(send, stream);
  cudaFreeAsync(recv, stream);
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
}

namespace {

void CudaCheck(cudaError_t rc, const char* what, const std::string& where, Local* local) {
  if (rc != cudaSuccess) local->Fail(where + ": " + what + " failed: " + cudaGetErrorString(rc));
}

}  // namespace

std::string Name(const mla_choice& c) {
  std::string s = mla_algo_name(c.algo);
  if (c.transport != MLA_TRANSPORT_AUTO) s += std::string(":") + mla_transport_name(c.transport);
  if (c.chunk_bytes != 0) s += " chunk=" + std::to_string(c.chunk_bytes);
  return s;
}

void RunCall(const Call& c, const mla_choice* choice, DevicePair* bufs, Local* local) {
  const TypeCase& tc = *c.tc;
  const std::string where = std::string(choice ? Name(*choice) : "MPI_Allreduce") + " " + tc.name + " " + OpName(c.op) +
                            " count " + std::to_string(c.count) + (c.in_place ? " in place" : "");
  const std::vector<unsigned char> send = Fill(tc, c.op, c.count, c.seed);
  const size_t bytes = send.size();
  // The reference: the system MPI on host copies, the receive buffer holding
  // the same bytes before the call as the device one.
  std::vector<unsigned char> expect(bytes, 0x5a);
  if (c.in_place) {
    expect = send;
    PMPI_Allreduce(MPI_IN_PLACE, expect.data(), c.count, tc.type, c.op, MPI_COMM_WORLD);
  } else {
    PMPI_Allreduce(send.data(), expect.data(), c.count, tc.type, c.op, MPI_COMM_WORLD);
  }
  if (bytes > bufs->bytes) {
    local->Fail(where + ": buffers of " + std::to_string(bufs->bytes) + " bytes are too small");
    return;  // the same on every rank: no collective is skipped on one rank only
  }
  CudaCheck(cudaMemcpy(c.in_place ? bufs->recv : bufs->send, send.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy",
            where, local);
  if (!c.in_place) CudaCheck(cudaMemset(bufs->recv, 0x5a, bytes), "cudaMemset", where, local);
  CudaCheck(cudaDeviceSynchronize(), "cudaDeviceSynchronize", where, local);
  const void* sbuf = c.in_place ? MPI_IN_PLACE : bufs->send;
  const int rc = choice != nullptr
                     ? mla_allreduce_with(sbuf, bufs->recv, c.count, tc.type, c.op, MPI_COMM_WORLD, choice)
                     : MPI_Allreduce(sbuf, bufs->recv, c.count, tc.type, c.op, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) local->Fail(where + ": returned " + std::to_string(rc));
  std::vector<unsigned char> got(bytes);
  CudaCheck(cudaMemcpy(got.data(), bufs->recv, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", where, local);
  if (got != expect) {
    size_t i = 0;
    while (i < bytes && got[i] == expect[i]) ++i;
    local->Fail(where + ": element " + std::to_string(i / tc.size) + " differs from PMPI_Allreduce");
  }
  if (!c.in_place) {
    std::vector<unsigned char> after(bytes);
    CudaCheck(cudaMemcpy(after.data(), bufs->send, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", where, local);
    if (after != send) local->Fail(where + ": the send buffer was written");
  }
  if (!SameOnAllRanks(Hash(got.data(), got.size()))) local->Fail(where + ": results differ between ranks");
}

// ---------------------------------------------------------------------------
// Counters.

void ExpectStagedCall(Counts* c) {
  ++c->calls;
  ++c->device;
  ++c->algo[MLA_ALGO_PASSTHROUGH];
  ++c->path[MLA_PATH_STAGED];
}

void ExpectDeviceCall(const TypeCase& tc, MPI_Op op, const mla_choice& choice, int count, Counts* c) {
  const mla_algo algo = choice.algo;
  const mla_transport transport = choice.transport;
  if (algo == MLA_ALGO_PASSTHROUGH || !KernelsTake(tc, op)) return ExpectStagedCall(c);
  ++c->calls;
  ++c->device;
  ++c->algo[algo];
  const GpuLayout& L = Layout();
  if (L.FlagPath(static_cast<uint64_t>(count) * tc.size)) {
    ++c->path[MLA_PATH_IPC];
    ++c->flag;
    if (algo == MLA_ALGO_HIER || (algo == MLA_ALGO_LANE && choice.lanes == 1)) ++c->one_shot;
    return;
  }
  if (!L.CrossStep(algo)) {
    ++c->path[MLA_PATH_IPC];
    return;
  }
  if (transport != MLA_TRANSPORT_MPI && NcclTakes(tc, op) && L.NcclCanRun(algo, nullptr)) {
    ++c->path[MLA_PATH_NCCL];
    return;
  }
  ++c->path[MLA_PATH_MPI];
  if (transport == MLA_TRANSPORT_NCCL) ++c->nccl_fallbacks;
}

void CheckCounts(const mla_stats& b, const mla_stats& a, const Counts& e, const std::string& what, Local* local) {
  std::ostringstream diff;
  auto check = [&](const std::string& name, uint64_t before, uint64_t after, uint64_t expected) {
    if (after - before != expected) diff << " " << name << " " << after - before << " (expected " << expected << ")";
  };
  check("calls", b.calls, a.calls, e.calls);
  check("device", b.device_calls, a.device_calls, e.device);
  check("unsupported", b.unsupported, a.unsupported, e.unsupported);
  check("nccl_fallbacks", b.nccl_fallbacks, a.nccl_fallbacks, e.nccl_fallbacks);
  for (int i = 0; i < MLA_ALGO_COUNT; ++i)
    check(mla_algo_name(static_cast<mla_algo>(i)), b.calls_by_algo[i], a.calls_by_algo[i], e.algo[i]);
  for (int i = 0; i < MLA_PATH_COUNT; ++i)
    check(std::string("path ") + mla_device_path_name(static_cast<mla_device_path>(i)), b.calls_by_path[i],
          a.calls_by_path[i], e.path[i]);
  check("flag path", b.device_flag_calls, a.device_flag_calls, e.flag);
  check("flag path one-shot", b.device_flag_one_shot, a.device_flag_one_shot, e.one_shot);
  if (!diff.str().empty()) local->Fail(what + ": counters differ:" + diff.str());
}

// ---------------------------------------------------------------------------
// stderr.

void StderrCapture::Start() {
  if (g_rank != 0) return;
  std::fflush(stderr);
  char name[] = "/tmp/mla-gpu-test-stderr.XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) return;
  path_ = name;
  saved_ = dup(2);
  dup2(fd, 2);
  close(fd);
}

std::string StderrCapture::Stop() {
  if (g_rank != 0 || saved_ < 0) return "";
  std::fflush(stderr);
  dup2(saved_, 2);
  close(saved_);
  saved_ = -1;
  std::ifstream in(path_);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path_.c_str());
  // Shown in the log as well, so that nothing the library said is lost.
  std::fputs(text.str().c_str(), stderr);
  return text.str();
}

int Occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace gputest
