#include "libmlallreduce/quick_route.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "vocab/ranks_per_gpu.h"

namespace mla::lib {
namespace {

Config Load(const std::map<std::string, std::string>& vars) {
  Config c = LoadConfig([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
  EXPECT_TRUE(c.problems.empty()) << c.problems.front();
  return c;
}

// What the whole path decides for a call of `bytes` on host memory without a
// caller's choice, multilane on.
bool WholePathUnchanged(const Config& c, uint64_t bytes) {
  mla_choice choice{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  const std::string* system_algorithm = nullptr;
  SettingsChoice(c, MemKind::kHost, bytes, RanksPerGpuOrOne(c.ranks_per_gpu), &choice, &system_algorithm);
  return RunsUnchanged(choice, system_algorithm);
}

class QuickRoute : public ::testing::Test {
 protected:
  void TearDown() override { ClearQuickRoute(); }
};

TEST_F(QuickRoute, OffUntilBuiltAndAfterCleared) {
  EXPECT_FALSE(QuickPassthrough(8, nullptr));
  BuildQuickRoute(Load({}), true, true);
  EXPECT_TRUE(QuickPassthrough(8, nullptr));
  ClearQuickRoute();
  EXPECT_FALSE(QuickPassthrough(8, nullptr));
}

TEST_F(QuickRoute, WindowsAreThePassthroughEntriesWithoutASystemAlgorithm) {
  const Config c = Load({{"MULTILANE_PROFILE",
                          "multilane-profile 1; host 0 4K passthrough; host 4K 64K lane; "
                          "host 64K 1M passthrough mpi=ring; host 1M 8M passthrough; host 8M inf hier; "
                          "device 0 inf passthrough"}});
  BuildQuickRoute(c, true, true);
  EXPECT_TRUE(QuickPassthrough(0, nullptr));
  EXPECT_TRUE(QuickPassthrough(4095, nullptr));
  EXPECT_FALSE(QuickPassthrough(4096, nullptr));   // lane
  EXPECT_FALSE(QuickPassthrough(65536, nullptr));  // the system algorithm ring is counted by the whole path
  EXPECT_FALSE(QuickPassthrough(1048575, nullptr));
  EXPECT_TRUE(QuickPassthrough(1048576, nullptr));
  EXPECT_TRUE(QuickPassthrough((8u << 20) - 1, nullptr));
  EXPECT_FALSE(QuickPassthrough(8u << 20, nullptr));  // hier
}

TEST_F(QuickRoute, EntriesOfThisProcesssRanksPerGpuWin) {
  const std::string profile = "multilane-profile 1; host 0 inf passthrough; host 0 1M lane ppg=2";
  BuildQuickRoute(Load({{"MULTILANE_PROFILE", profile}}), true, true);
  EXPECT_TRUE(QuickPassthrough(512, nullptr));
  BuildQuickRoute(Load({{"MULTILANE_PROFILE", profile}, {"MULTILANE_RANKS_PER_GPU", "2"}}), true, true);
  EXPECT_FALSE(QuickPassthrough(512, nullptr));
  EXPECT_TRUE(QuickPassthrough(1u << 20, nullptr));
}

TEST_F(QuickRoute, MultilaneOffSendsEveryCallWithoutAChoiceThrough) {
  const Config c = Load({{"MULTILANE_ALGO", "lane"}});
  BuildQuickRoute(c, true, true);
  EXPECT_FALSE(QuickPassthrough(512, nullptr));
  BuildQuickRoute(c, false, true);
  EXPECT_TRUE(QuickPassthrough(512, nullptr));
  BuildQuickRoute(c, true, false);
  EXPECT_TRUE(QuickPassthrough(512, nullptr));
}

TEST_F(QuickRoute, ACallersChoiceDecidesAlone) {
  BuildQuickRoute(Load({{"MULTILANE_ALGO", "lane"}}), true, true);
  const mla_choice passthrough{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  const mla_choice hier{MLA_ALGO_HIER, 0, 0, MLA_TRANSPORT_AUTO};
  EXPECT_TRUE(QuickPassthrough(512, &passthrough));
  EXPECT_FALSE(QuickPassthrough(512, &hier));
  BuildQuickRoute(Load({}), true, true);
  EXPECT_FALSE(QuickPassthrough(512, &hier));
}

// Random profiles: the route never sends through a call the whole path would
// not, and with at most kWindows stretches it sends through every such call.
TEST_F(QuickRoute, AgreesWithTheWholePathOnRandomProfiles) {
  std::mt19937_64 rng(44);
  const char* algos[] = {"passthrough", "passthrough mpi=ring", "lane", "hier", "split"};
  const uint64_t sizes[] = {0, 1, 64, 4096, 65536, 1u << 20, 16u << 20};
  int quick = 0, whole_path = 0;  // probes each way, so that the test is seen to try both
  for (int trial = 0; trial < 500; ++trial) {
    std::string text = "multilane-profile 1";
    std::vector<uint64_t> probes{0, 1, UINT64_MAX / 2};
    // Entries never overlap for one memory kind and ppg: each kind and ppg
    // cuts the sizes at a few random points.
    const std::pair<const char*, const char*> keys[] = {
        {"host", ""}, {"host", " ppg=1"}, {"host", " ppg=2"}, {"device", ""}};
    for (const auto& [kind, ppg] : keys) {
      if (rng() % 5 < 2) continue;
      std::vector<uint64_t> cuts;
      for (uint64_t s : sizes)
        if (rng() % 2 == 0) cuts.push_back(s);
      for (size_t i = 0; i < cuts.size(); ++i) {
        if (rng() % 5 == 0) continue;
        const std::string hi = i + 1 < cuts.size() ? std::to_string(cuts[i + 1]) : "inf";
        text += std::string("; ") + kind + " " + std::to_string(cuts[i]) + " " + hi + " " + algos[rng() % 5] + ppg;
        probes.insert(probes.end(), {cuts[i], cuts[i] + 1, cuts[i] ? cuts[i] - 1 : 0});
      }
    }
    const std::string ppg = std::to_string(1 + rng() % 2);
    const Config c = Load({{"MULTILANE_PROFILE", text}, {"MULTILANE_RANKS_PER_GPU", ppg}});
    BuildQuickRoute(c, true, true);
    int stretches = 0;
    bool last = false;
    for (uint64_t b = 0; b <= (32u << 20); b = b < 8 ? b + 1 : b + b / 8) {
      const bool now = WholePathUnchanged(c, b);
      stretches += now && !last;
      last = now;
    }
    for (uint64_t b : probes) {
      SCOPED_TRACE(text + " ppg=" + ppg + " bytes=" + std::to_string(b));
      const bool whole = WholePathUnchanged(c, b);
      whole_path += !whole;
      if (QuickPassthrough(b, nullptr)) {
        EXPECT_TRUE(whole);
        ++quick;
      }
      if (stretches <= QuickRouteState::kWindows) {
        EXPECT_EQ(QuickPassthrough(b, nullptr), whole);
      }
    }
  }
  EXPECT_GT(quick, 1000);
  EXPECT_GT(whole_path, 1000);
}

}  // namespace
}  // namespace mla::lib
