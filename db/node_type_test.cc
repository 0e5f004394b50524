#include "db/node_type.h"

#include <gtest/gtest.h>

#include <functional>

#include "db/test_util.h"

namespace mldb {
namespace {

using testing_util::TestFingerprint;

TEST(NodeTypeTest, KeyIsStableForEqualFingerprints) {
  NodeFingerprint a = TestFingerprint();
  NodeFingerprint b = TestFingerprint();
  EXPECT_EQ(a.Key(), b.Key());
  EXPECT_EQ(a.Key().size(), 16u);
  EXPECT_EQ(a.Key().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(a.Canonical(), b.Canonical());
}

TEST(NodeTypeTest, KeyIgnoresOrderOfGpusAndNetworkDevices) {
  NodeFingerprint a = TestFingerprint();
  a.gpus[1].nvlinks = 12;
  NodeFingerprint b = a;
  std::swap(b.gpus[0], b.gpus[1]);
  std::swap(b.network_devices[0], b.network_devices[1]);
  EXPECT_EQ(a.Key(), b.Key());
}

TEST(NodeTypeTest, KeyChangesWhenAnyFieldChanges) {
  const NodeFingerprint base = TestFingerprint();
  const std::vector<std::function<void(NodeFingerprint*)>> changes = {
      [](NodeFingerprint* f) { f->cpu_model += "x"; },
      [](NodeFingerprint* f) { f->sockets = 1; },
      [](NodeFingerprint* f) { f->cores = 63; },
      [](NodeFingerprint* f) { f->numa_nodes = 4; },
      [](NodeFingerprint* f) { f->gpus.pop_back(); },
      [](NodeFingerprint* f) { f->gpus[0].model = "NVIDIA H100"; },
      [](NodeFingerprint* f) { f->gpus[0].memory_bytes -= 1; },
      [](NodeFingerprint* f) { f->gpus[0].link = "PCIe"; },
      [](NodeFingerprint* f) { f->gpus[0].nvlinks = 17; },
      [](NodeFingerprint* f) { f->network_devices.push_back("mlx5_1"); },
      [](NodeFingerprint* f) { f->network_devices[0] = "ib1"; },
      [](NodeFingerprint* f) { f->mpi_version = "MPICH 4.1"; },
      [](NodeFingerprint* f) { f->cuda_driver_version = "12.5"; },
  };
  std::set<std::string> keys = {base.Key()};
  for (size_t i = 0; i < changes.size(); ++i) {
    NodeFingerprint f = base;
    changes[i](&f);
    EXPECT_NE(f.Key(), base.Key()) << "change " << i;
    keys.insert(f.Key());
  }
  EXPECT_EQ(keys.size(), changes.size() + 1);
}

TEST(NodeTypeTest, FieldBoundariesCannotCollide) {
  NodeFingerprint a = TestFingerprint();
  NodeFingerprint b = a;
  a.cpu_model = "X\nsockets=2";
  b.cpu_model = "X";
  EXPECT_NE(a.Key(), b.Key());
}

TEST(NodeTypeTest, JsonRoundTrips) {
  NodeFingerprint a = TestFingerprint();
  NodeFingerprint b;
  std::string error;
  ASSERT_TRUE(NodeFingerprint::FromJson(nlohmann::json::parse(a.ToJson().dump()), &b, &error))
      << error;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Key(), b.Key());
}

TEST(NodeTypeTest, FromJsonNamesTheBadField) {
  NodeFingerprint out;
  std::string error;
  nlohmann::json j = TestFingerprint().ToJson();
  j["cores"] = "many";
  EXPECT_FALSE(NodeFingerprint::FromJson(j, &out, &error));
  EXPECT_NE(error.find("cores"), std::string::npos) << error;
  j = TestFingerprint().ToJson();
  j["gpus"][1].erase("memory_bytes");
  EXPECT_FALSE(NodeFingerprint::FromJson(j, &out, &error));
  EXPECT_NE(error.find("gpus[1].memory_bytes"), std::string::npos) << error;
  EXPECT_FALSE(NodeFingerprint::FromJson(nlohmann::json::array(), &out, &error));
  EXPECT_FALSE(NodeFingerprint::FromJson(nlohmann::json(), &out, nullptr));
}

TEST(NodeTypeTest, DescriptionIsOneReadableLine) {
  std::string d = TestFingerprint().Description();
  EXPECT_EQ(d.find('\n'), std::string::npos);
  EXPECT_NE(d.find("2x NVIDIA H200"), std::string::npos) << d;
  EXPECT_NE(d.find("Test CPU 0"), std::string::npos) << d;
  EXPECT_NE(d.find("NVLink(18)"), std::string::npos) << d;
}

TEST(NodeTypeTest, CollectsThisMachine) {
  NodeFingerprint f = CollectNodeFingerprint("Test MPI 1.0");
  EXPECT_GE(f.cores, 1);
  EXPECT_GE(f.sockets, 1);
  EXPECT_GE(f.numa_nodes, 1);
  EXPECT_FALSE(f.cpu_model.empty());
  EXPECT_EQ(f.mpi_version, "Test MPI 1.0");
  EXPECT_TRUE(std::is_sorted(f.network_devices.begin(), f.network_devices.end()));
  for (const GpuInfo& g : f.gpus) {
    EXPECT_FALSE(g.model.empty());
    EXPECT_TRUE(g.link == "NVLink" || g.link == "PCIe" || g.link == "unknown") << g.link;
  }
  // Collecting twice gives the same node type.
  EXPECT_EQ(CollectNodeFingerprint("Test MPI 1.0").Key(), f.Key());
  std::cout << "this node: " << f.Key() << " " << f.Description() << "\n";
}

}  // namespace
}  // namespace mldb
