#include "db/node_type.h"

#include <gtest/gtest.h>
#include <sched.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <unistd.h>

#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <utility>

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
  ASSERT_TRUE(NodeFingerprint::FromJson(nlohmann::json::parse(a.ToJson().dump()), &b, &error)) << error;
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

// Issue 47: CPU model strings and MPI version lines come padded; the
// description shows them without the runs of spaces.
TEST(NodeTypeTest, DescriptionDropsThePaddingOfNames) {
  NodeFingerprint f = TestFingerprint();
  f.cpu_model = "  Intel(R) Xeon(R) CPU   E5-2680 v4 @\t2.40GHz  ";
  f.mpi_version = "Open MPI v4.1.4, package: Debian OpenMPI,   ident: 4.1.4 ";
  const std::string d = f.Description();
  EXPECT_EQ(d.find("  "), std::string::npos) << d;
  EXPECT_EQ(d.find('\t'), std::string::npos) << d;
  EXPECT_NE(d.find("2x Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz (64 cores"), std::string::npos) << d;
  EXPECT_NE(d.find("MPI Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, CUDA"), std::string::npos) << d;
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

// /proc/cpuinfo read here, apart from node_type.cc: the "model name" of the
// first processor and the distinct (physical id, core id) pairs and physical
// ids over all processors.  Empty where the kernel gives none (non-x86).
struct ProcCpuinfo {
  std::string model_name;
  std::set<std::pair<std::string, std::string>> cores;
  std::set<std::string> packages;
};

std::string Trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  const size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

ProcCpuinfo ReadProcCpuinfo() {
  ProcCpuinfo info;
  std::ifstream in("/proc/cpuinfo");
  std::string line, physical;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trimmed(line.substr(0, colon));
    const std::string value = Trimmed(line.substr(colon + 1));
    if (key == "model name" && info.model_name.empty()) info.model_name = value;
    if (key == "physical id") {
      physical = value;
      info.packages.insert(value);
    }
    if (key == "core id") info.cores.insert({physical, value});
  }
  return info;
}

// The x86 processor brand string (cpuid leaves 0x80000002..4), which hwloc
// prefers to /proc/cpuinfo: in a VM the two may differ ("AMD EPYC" from the
// kernel, the hypervisor's brand from cpuid).  Empty elsewhere.
std::string CpuidBrand() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned regs[12] = {0};
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000004u) return "";
  for (unsigned i = 0; i < 3; ++i) {
    __get_cpuid(0x80000002u + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2], &regs[4 * i + 3]);
  }
  std::string brand(reinterpret_cast<const char*>(regs), sizeof regs);
  return Trimmed(brand.substr(0, brand.find('\0')));
#else
  return "";
#endif
}

// The fingerprint against what the kernel says directly, so that a collector
// that reads the wrong thing (threads for cores, another object's name, a
// fallback that always wins) fails here instead of being printed.
TEST(NodeTypeTest, CollectedFieldsMatchTheKernel) {
  const NodeFingerprint f = CollectNodeFingerprint("Test MPI 1.0");
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GE(online, 1);
  EXPECT_GE(f.cores, 1);
  EXPECT_LE(f.cores, online) << "more cores than online CPUs";
  EXPECT_LE(f.sockets, f.cores);

  const ProcCpuinfo info = ReadProcCpuinfo();
  // The model is one of the names this CPU gives itself (compared without
  // the padding cpuid may leave around it).
  const std::string brand = CpuidBrand();
  if (!info.model_name.empty() || !brand.empty()) {
    const std::string model = Trimmed(f.cpu_model);
    EXPECT_TRUE(model == info.model_name || model == brand)
        << "cpu_model '" << f.cpu_model << "', /proc/cpuinfo '" << info.model_name << "', cpuid '" << brand << "'";
  }
  // hwloc sees only the CPUs this process may use (a cgroup or a Slurm job
  // narrows them); compare counts exactly only where that is every CPU.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const bool whole_machine = CPU_COUNT(&allowed) == online;
  if (!info.cores.empty()) {
    if (whole_machine) {
      EXPECT_EQ(f.cores, static_cast<int>(info.cores.size())) << "physical cores in /proc/cpuinfo";
      EXPECT_EQ(f.sockets, static_cast<int>(info.packages.size())) << "physical ids in /proc/cpuinfo";
    } else {
      EXPECT_LE(f.cores, static_cast<int>(info.cores.size()));
      EXPECT_LE(f.sockets, static_cast<int>(info.packages.size()));
    }
  } else {
    std::cout << "no physical/core ids in /proc/cpuinfo: core and socket counts checked for bounds only\n";
  }
  std::cout << "kernel: cpuid brand '" << brand << "', " << online << " CPUs online, " << CPU_COUNT(&allowed)
            << " allowed, " << info.cores.size() << " cores, " << info.packages.size() << " packages, model '"
            << info.model_name << "'\n";
}

}  // namespace
}  // namespace mldb
