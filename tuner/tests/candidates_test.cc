#include "tuner/candidates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace mltuner {
namespace {

std::vector<std::string> Words(const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const Candidate& c : cs) out.push_back(c.Render());
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(ByteSize, ParseAndFormat) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseByteSize("4M", &v));
  EXPECT_EQ(v, 4u << 20);
  EXPECT_TRUE(ParseByteSize("64KiB", &v));
  EXPECT_EQ(v, 65536u);
  EXPECT_FALSE(ParseByteSize("1.5M", &v));
  EXPECT_FALSE(ParseByteSize("K", &v));
  EXPECT_FALSE(ParseByteSize("99999999999999999999", &v));
  EXPECT_EQ(FormatByteSize(0), "0");
  EXPECT_EQ(FormatByteSize(8192), "8K");
  EXPECT_EQ(FormatByteSize(3u << 20), "3M");
  EXPECT_EQ(FormatByteSize(1000), "1000");
}

TEST(Expand, HostTwoRanksPerNode) {
  // lanes=2 is "all" on nodes of 2 ranks: dropped; split needs ranks per GPU > 1;
  // transport=shm (the node steps on shared memory) without a chunk only.
  std::vector<std::string> w = Words(Expand(DefaultSpace(), MemKind::kHost, 2, 1));
  std::vector<std::string> expected = {
      "lane",         "lane transport=shm",         "lane chunk=1M",         "lane chunk=4M",
      "lane lanes=1", "lane lanes=1 transport=shm", "lane lanes=1 chunk=1M", "lane lanes=1 chunk=4M",
      "hier",         "hier transport=shm",         "hier chunk=1M",         "hier chunk=4M"};
  EXPECT_EQ(w, expected);
}

TEST(Expand, ConstraintsFollowTheLayout) {
  Space s = DefaultSpace();
  std::vector<std::string> four = Words(Expand(s, MemKind::kHost, 4, 2));
  EXPECT_TRUE(Has(four, "lane lanes=2"));
  EXPECT_TRUE(Has(four, "split chunk=4M"));
  EXPECT_EQ(four.size(), 12u + 4u + 3u);  // lane 3x(3+shm), hier 3+shm, split 3
  // One rank per node: lane and hier are a plain allreduce; split needs ppg > 1.
  EXPECT_TRUE(Expand(s, MemKind::kHost, 1, 1).empty());
  // Unknown layout (0): nothing dropped.
  EXPECT_EQ(Expand(s, MemKind::kHost, 0, 0).size(), 12u + 4u + 3u);
  // On host memory the one transport is shm, never beside a chunk nor on
  // split; no duplicates, no passthrough.
  for (const std::string& w : four) {
    if (w.find("transport") != std::string::npos) {
      EXPECT_NE(w.find("transport=shm"), std::string::npos) << w;
      EXPECT_EQ(w.find("chunk"), std::string::npos) << w;
      EXPECT_NE(w.rfind("split", 0), 0u) << w;
    }
    EXPECT_NE(w, "passthrough");
  }
  std::set<std::string> unique(four.begin(), four.end());
  EXPECT_EQ(unique.size(), four.size());
}

TEST(Expand, TransportOnDeviceOnly) {
  std::vector<std::string> w = Words(Expand(DefaultSpace(), MemKind::kDevice, 2, 1));
  EXPECT_TRUE(Has(w, "lane lanes=1 chunk=4M transport=nccl"));
  EXPECT_TRUE(Has(w, "lane transport=mpi"));
  EXPECT_TRUE(Has(w, "hier chunk=1M"));
  EXPECT_FALSE(Has(w, "hier transport=mpi"));  // hier's device steps have no transport
  EXPECT_FALSE(Has(w, "lane transport=shm"));  // shm is for host memory
  EXPECT_EQ(w.size(), 2u * 3u * 3u + 3u);
}

// Adding a dimension is one entry in the table: here a hypothetical
// "pipeline" depth for lane on host memory (the library would take it as a new
// mla_choice field; here it sets nothing).
TEST(Expand, AddingADimensionIsOneTableEntry) {
  Space s = DefaultSpace();
  size_t before = Expand(s, MemKind::kHost, 2, 1).size();
  s.dimensions.push_back({"pipeline",
                          {"1", "2", "4"},
                          {"lane"},
                          {MemKind::kHost},
                          "1",
                          [](const std::string&, mla_choice*, std::string*) { return true; },
                          nullptr,
                          nullptr,
                          nullptr});
  std::vector<std::string> w = Words(Expand(s, MemKind::kHost, 2, 1));
  EXPECT_EQ(w.size(), before + 8u * 2u);  // 8 lane candidates x 2 more values
  EXPECT_TRUE(Has(w, "lane lanes=1 chunk=4M pipeline=4"));
  EXPECT_TRUE(Has(w, "hier chunk=1M"));
  EXPECT_FALSE(Has(w, "hier pipeline=2"));
  Candidate c;
  std::string error;
  ASSERT_TRUE(ParseCandidate(s, "lane pipeline=2 lanes=1", &c, &error)) << error;
  EXPECT_EQ(c.Render(), "lane lanes=1 pipeline=2");  // table order
  mla_choice choice{};
  EXPECT_TRUE(ToChoice(s, c, &choice, &error)) << error;
}

TEST(Candidate, RendersAndConverts) {
  Space s = DefaultSpace();
  Candidate c;
  std::string error;
  ASSERT_TRUE(ParseCandidate(s, "lane chunk=4M lanes=2 transport=nccl", &c, &error)) << error;
  EXPECT_EQ(c.Render(), "lane lanes=2 chunk=4M transport=nccl");
  mla_choice ch{};
  ASSERT_TRUE(ToChoice(s, c, &ch, &error)) << error;
  EXPECT_EQ(ch.algo, MLA_ALGO_LANE);
  EXPECT_EQ(ch.lanes, 2);
  EXPECT_EQ(ch.chunk_bytes, 4u << 20);
  EXPECT_EQ(ch.transport, MLA_TRANSPORT_NCCL);

  ASSERT_TRUE(ParseCandidate(s, "lane lanes=0 chunk=0", &c, &error)) << error;
  EXPECT_EQ(c.Render(), "lane");                                // default values are not rendered
  EXPECT_FALSE(ParseCandidate(s, "hier lanes=1", &c, &error));  // lanes does not apply to hier
}

TEST(Candidate, RejectsBadWords) {
  Space s = DefaultSpace();
  Candidate c;
  std::string error;
  EXPECT_FALSE(ParseCandidate(s, "ring", &c, &error));
  EXPECT_FALSE(ParseCandidate(s, "lane lanes=x", &c, &error));
  EXPECT_FALSE(ParseCandidate(s, "lane chunk=1.5M", &c, &error));
  EXPECT_FALSE(ParseCandidate(s, "lane bogus=1", &c, &error));
  EXPECT_FALSE(ParseCandidate(s, "lane lanes=1 lanes=2", &c, &error));
  EXPECT_FALSE(ParseCandidate(s, "passthrough chunk=1M", &c, &error));
  EXPECT_FALSE(ParseCandidate(s, "", &c, &error));
  ASSERT_TRUE(ParseCandidate(s, "passthrough", &c, &error));
  EXPECT_TRUE(c.IsPassthrough());
  EXPECT_EQ(c, Passthrough());
}

TEST(Candidate, RedundantAtSize) {
  Space s = DefaultSpace();
  Candidate c;
  std::string error;
  ASSERT_TRUE(ParseCandidate(s, "lane chunk=1M", &c, &error));
  EXPECT_TRUE(RedundantAtSize(s, c, 4096));
  EXPECT_TRUE(RedundantAtSize(s, c, 1u << 20));
  EXPECT_FALSE(RedundantAtSize(s, c, 4u << 20));
  EXPECT_FALSE(RedundantAtSize(s, Candidate{"lane", {}}, 4096));
}

TEST(Space, Restrict) {
  Space s = DefaultSpace();
  std::string error;
  ASSERT_TRUE(s.Restrict("algo", {"lane"}, &error)) << error;
  ASSERT_TRUE(s.Restrict("chunk", {"0", "64K"}, &error)) << error;
  EXPECT_EQ(Words(Expand(s, MemKind::kHost, 2, 1)),
            (std::vector<std::string>{"lane", "lane transport=shm", "lane chunk=64K", "lane lanes=1",
                                      "lane lanes=1 transport=shm", "lane lanes=1 chunk=64K"}));
  EXPECT_FALSE(s.Restrict("algo", {"ring"}, &error));
  EXPECT_FALSE(s.Restrict("chunk", {"big"}, &error));
  EXPECT_FALSE(s.Restrict("nope", {"1"}, &error));
}

TEST(SystemCandidates, EveryOfferedAlgorithmUnlessThePlanNamesSome) {
  Space s = DefaultSpace();
  const std::vector<std::string> offered = {"basic_linear", "ring", "rabenseifner"};
  std::vector<std::string> missing;
  EXPECT_EQ(Words(SystemCandidates(s, offered, &missing)),
            (std::vector<std::string>{"passthrough mpi=basic_linear", "passthrough mpi=ring",
                                      "passthrough mpi=rabenseifner"}));
  EXPECT_TRUE(missing.empty());
  std::string error;
  ASSERT_TRUE(s.Restrict("mpi", {"ring", "k_reduce_scatter"}, &error)) << error;
  EXPECT_EQ(Words(SystemCandidates(s, offered, &missing)), (std::vector<std::string>{"passthrough mpi=ring"}));
  EXPECT_EQ(missing, (std::vector<std::string>{"k_reduce_scatter"}));
  // A plan's empty list probes none of them.
  ASSERT_TRUE(s.Restrict("mpi", {}, &error)) << error;
  EXPECT_TRUE(SystemCandidates(s, offered, nullptr).empty());
  EXPECT_FALSE(s.Restrict("mpi", {"Ring"}, &error));
  // Never expanded: the space alone does not know the MPI's names.
  for (const std::string& w : Words(Expand(DefaultSpace(), MemKind::kHost, 0, 0)))
    EXPECT_EQ(w.find("mpi="), std::string::npos);
}

TEST(SystemCandidates, ParseAndRenderAsTheProfileDoes) {
  Space s = DefaultSpace();
  Candidate c;
  std::string error;
  ASSERT_TRUE(ParseCandidate(s, "passthrough mpi=ring", &c, &error)) << error;
  EXPECT_TRUE(c.IsPassthrough());
  EXPECT_NE(c, Passthrough());
  EXPECT_EQ(c.SystemAlgorithm(), "ring");
  EXPECT_EQ(c.Render(), "passthrough mpi=ring");
  EXPECT_EQ(Passthrough().SystemAlgorithm(), "");
  mla_choice choice{};
  ASSERT_TRUE(ToChoice(s, c, &choice, &error)) << error;
  EXPECT_EQ(choice.algo, MLA_ALGO_PASSTHROUGH);
  EXPECT_FALSE(ParseCandidate(s, "lane mpi=ring", &c, &error));
  EXPECT_NE(error.find("does not apply to lane"), std::string::npos) << error;
  EXPECT_FALSE(ParseCandidate(s, "passthrough mpi=Ring!", &c, &error));
  EXPECT_FALSE(ParseCandidate(s, "passthrough lanes=1", &c, &error));
}

}  // namespace
}  // namespace mltuner
