// allreduce_layout_test.cc: part of allreduce_mpi_test.  Environment: the
// library's state, version and algorithm names.  Layout: what
// mla_comm_layout says about MPI_COMM_WORLD against the variables and host
// names, and where the multilane algorithms run on it.

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "allreduce_cases.h"
#include "allreduce_support.h"
#include "mlallreduce.h"

namespace mlatest {
namespace {

TEST(Environment, EnabledVersionNames) {
  Local local;
  bool want_enabled = !ExpectDisabled();
  if ((mla_enabled() != 0) != want_enabled)
    local.Fail(std::string("mla_enabled() = ") + std::to_string(mla_enabled()) + ", want " +
               (want_enabled ? "1" : "0"));
  if (std::string(mla_version()) != MLA_VERSION_STRING) local.Fail(std::string("mla_version() = ") + mla_version());
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) {
    mla_algo back;
    const char* n = mla_algo_name(static_cast<mla_algo>(a));
    if (!mla_algo_from_name(n, &back) || back != a)
      local.Fail(std::string("mla_algo_from_name(mla_algo_name(") + std::to_string(a) + "))");
  }
  static const char* const names[] = {"passthrough", "lane", "hier", "split"};
  for (int a = 0; a < 4 && a < MLA_ALGO_COUNT; ++a)
    if (std::string(mla_algo_name(static_cast<mla_algo>(a))) != names[a])
      local.Fail(std::string("mla_algo_name(") + std::to_string(a) + ") = " + mla_algo_name(static_cast<mla_algo>(a)));
  mla_algo dummy;
  if (mla_algo_from_name("bogus", &dummy)) local.Fail("mla_algo_from_name(\"bogus\") = 1");
  if (std::string(mla_algo_name(MLA_ALGO_COUNT)) != "unknown")
    local.Fail("mla_algo_name(MLA_ALGO_COUNT) is not \"unknown\"");
  EXPECT_ALL_RANKS_OK(local);
}

// The world layout mla_comm_layout gave (li, with the library on) against
// the one the environment and host names give (w); asks again, for the cache.
void CheckWorldLayout(const LayoutInfo& li, const WantLayout& w, int rpg_env, Local& local) {
  const mla_layout& l = li.l;
  std::ostringstream got;
  got << "layout{size=" << l.size << " nodes=" << l.nodes << " ranks_per_node=" << l.ranks_per_node
      << " ranks_per_gpu=" << l.ranks_per_gpu << " node_rank=" << l.node_rank << " regular=" << l.regular << "}";
  auto want = [&](bool cond, const std::string& what) {
    if (!cond) local.Fail(got.str() + ": want " + what);
  };
  want(l.size == g_size, "size == " + std::to_string(g_size));
  // Virtual nodes (MULTILANE_RANKS_PER_NODE), else one node per host name.
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
// Collective over MPI_COMM_WORLD.
void CheckMultilaneOnWorld(const WantLayout& want_world, bool core_split, int rpg_env, Local& local) {
  const bool enabled = mla_enabled() != 0;
  const bool regular_want = want_world.regular;
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
                   "): want unsupported+1 " + mla_algo_name(v.choice.algo) + "+0, got unsupported+" +
                   std::to_string(d_uns) + " +" + std::to_string(d_algo));
      if (runs && (d_uns != 0 || d_algo != 1))
        local.Fail(v.name + " on a " + (regular_want ? "regular" : "folded irregular") + " layout: want " +
                   mla_algo_name(v.choice.algo) + "+1 unsupported+0, got +" + std::to_string(d_algo) + " unsupported+" +
                   std::to_string(d_uns));
    }
  }
}

TEST(Layout, MatchesEnvironment) {
  Local local;
  LayoutInfo li = GetLayout(MPI_COMM_WORLD);
  const int rpg_env = EnvInt("MULTILANE_RANKS_PER_GPU", 0);
  const WantLayout want_world = ExpectedLayout(MPI_COMM_WORLD);
  const int smallest = MinNodeSize(MPI_COMM_WORLD);
  const bool core_split = CoreGpuGroupsEqual(MPI_COMM_WORLD, smallest);
  if (!li.ok) {
    local.Fail("mla_comm_layout(MPI_COMM_WORLD) failed");
  } else if (mla_enabled()) {
    CheckWorldLayout(li, want_world, rpg_env, local);
  }
  CheckMultilaneOnWorld(want_world, core_split, rpg_env, local);
  EXPECT_ALL_RANKS_OK(local);
}

}  // namespace
}  // namespace mlatest
