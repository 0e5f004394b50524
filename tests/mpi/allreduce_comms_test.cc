// allreduce_comms_test.cc: part of allreduce_mpi_test.  Communicators: an
// intercommunicator and MPI_COMM_SELF go to PMPI_Allreduce; split, per-node,
// across-node and duplicated communicators give exact results and their own
// layouts.

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "allreduce_cases.h"
#include "allreduce_support.h"
#include "mlallreduce.h"

namespace mlatest {
namespace {

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
    if (mla_call_supported(MPI_INT, MPI_SUM, inter, &why)) local.Fail("mla_call_supported(intercommunicator) = 1");
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
      if (rc != MPI_SUCCESS || recv != expect) local.Fail(what + ": not the sum over the remote group");
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
        int rc = Call(v, in_place ? MPI_IN_PLACE : send.data(), recv.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
        mla_get_stats(&a);
        std::string what =
            "MPI_COMM_SELF count=" + std::to_string(count) + " " + v.name + (in_place ? " MPI_IN_PLACE" : "");
        if (rc != MPI_SUCCESS || recv != send) local.Fail(what + ": result is not the input");
        if (count > 0) {
          // one rank: documented to go to PMPI_Allreduce (unsupported when forced)
          const int algo = VariantAlgo(v);
          std::string st = CheckStatsDelta(b, a, algo, algo == MLA_ALGO_PASSTHROUGH, MPI_DOUBLE, count);
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
      for (int count : {1, 13, 1001}) RunCase(comm, *tc, op, count, variants, CaseOptions{count != 13, true, 3}, local);
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
    if (round == 0)
      RunCommMatrix(rev, local);
    else
      RunCase(rev, Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM}), MPI_SUM, 101, AllVariants(rev), CaseOptions{},
              local);
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
    if (round < 2)
      RunCommMatrix(half, local);
    else
      RunCase(half, Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM}), MPI_SUM, 101, AllVariants(half), CaseOptions{},
              local);
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
  MPI_Comm_free(&dup1);  // the copy must survive its parent
  RunCase(dup2, Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM}), MPI_SUM, 1001, AllVariants(dup2), CaseOptions{},
          local);
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
  RunCase(MPI_COMM_WORLD, Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM}), MPI_SUM, 13, MultilaneVariants(),
          CaseOptions{}, local);
  EXPECT_ALL_RANKS_OK(local);
}

}  // namespace
}  // namespace mlatest
