// allreduce_support.cc: the shared helpers of allreduce_mpi_test
// (allreduce_support.h).

#include "allreduce_support.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace mlatest {

int g_rank = 0;
int g_size = 1;
int g_provided = MPI_THREAD_SINGLE;

namespace {
constexpr uint64_t kSeed = 0x6d756c74696c616eULL;  // fixed: "multilan"
}  // namespace

Rng MakeRng(uint64_t salt, int rank) {
  std::seed_seq seq{static_cast<uint32_t>(kSeed), static_cast<uint32_t>(kSeed >> 32), static_cast<uint32_t>(salt),
                    static_cast<uint32_t>(salt >> 32), static_cast<uint32_t>(rank)};
  return Rng(seq);
}

long long Uni(Rng& rng, long long lo, long long hi) { return std::uniform_int_distribution<long long>(lo, hi)(rng); }

uint64_t HashString(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

uint64_t HashBytes(const void* p, size_t n, uint64_t h) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

bool AllRanksTrue(bool local) {
  int v = local ? 1 : 0, all = 0;
  PMPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

int EnvInt(const char* name, int dflt) {
  const char* v = Env(name);
  return v ? std::atoi(v) : dflt;
}

bool ExpectDisabled() { return EnvInt("MLA_TEST_EXPECT_DISABLED", 0) != 0; }

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

std::string OpName(MPI_Op op) {
  struct {
    MPI_Op op;
    const char* name;
  } names[] = {{MPI_SUM, "MPI_SUM"},   {MPI_PROD, "MPI_PROD"}, {MPI_MIN, "MPI_MIN"},       {MPI_MAX, "MPI_MAX"},
               {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},   {MPI_LXOR, "MPI_LXOR"},     {MPI_BAND, "MPI_BAND"},
               {MPI_BOR, "MPI_BOR"},   {MPI_BXOR, "MPI_BXOR"}, {MPI_MINLOC, "MPI_MINLOC"}, {MPI_MAXLOC, "MPI_MAXLOC"}};
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

int MinRanksPerNode(MPI_Comm comm) {
  if (IsInter(comm)) return 1;
  LayoutInfo li = GetLayout(comm);
  int mine = li.ok ? std::max(1, li.l.ranks_per_node) : 1, all = 1;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all;
}

int MinNodeSize(MPI_Comm comm) {
  std::map<int, int> sizes;
  for (int id : NodeIds(comm)) ++sizes[id];
  int m = 0;
  for (const auto& kv : sizes) m = m == 0 ? kv.second : std::min(m, kv.second);
  return m;
}

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

}  // namespace mlatest
