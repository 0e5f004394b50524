// tune_request_test.cc: `multilane tune`'s options read once (tune_request.h).
#include "launcher/tune/tune_request.h"

#include <gtest/gtest.h>

namespace multilane {
namespace {

TEST(TuneRequest, SizesFromToTimesStepInMultiplesOfFour) {
  TuneOptions opt;
  opt.sizes = "5:1K";
  TuneRequest r;
  std::string error;
  ASSERT_TRUE(ParseTuneRequest(opt, &r, &error)) << error;
  EXPECT_EQ(r.sizes.bytes, (std::vector<uint64_t>{4, 20, 80, 320}));
  EXPECT_EQ(r.sizes.from, 5u);
  EXPECT_EQ(r.sizes.to, 1024u);
  EXPECT_EQ(r.memory, TuneMemory::kAuto);
  ASSERT_NE(r.family, nullptr);
  EXPECT_EQ(r.family->name, mla::MpiFamilies().front().name);
}

TEST(TuneRequest, EveryBadOptionIsNamed) {
  const std::vector<std::pair<void (*)(TuneOptions*), std::string>> cases = {
      {[](TuneOptions* o) { o->sizes = "64M:4K"; }, "--sizes '64M:4K' must be FROM:TO"},
      {[](TuneOptions* o) { o->step = 1; }, "--step must be 2 or more"},
      {[](TuneOptions* o) { o->budget_s = 0; }, "--budget must be a positive number"},
      {[](TuneOptions* o) { o->ranks_per_gpu = "nine"; }, "--ranks-per-gpu 'nine'"},
      {[](TuneOptions* o) { o->weights = "/nonexistent/report.json"; }, "--weights: /nonexistent/report.json"},
      {[](TuneOptions* o) { o->mpi = "lam"; }, "--mpi 'lam' must be"},
      {[](TuneOptions* o) { o->memory = "gpu"; }, "--memory must be host, device, all or auto, not 'gpu'"},
  };
  for (const auto& [change, message] : cases) {
    TuneOptions opt;
    change(&opt);
    TuneRequest r;
    std::string error;
    EXPECT_FALSE(ParseTuneRequest(opt, &r, &error)) << message;
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

TEST(TuneRequest, TypedFields) {
  TuneOptions opt;
  opt.memory = "all";
  opt.ranks_per_gpu = "2,1";
  opt.mpi = "mpich";
  TuneRequest r;
  std::string error;
  ASSERT_TRUE(ParseTuneRequest(opt, &r, &error)) << error;
  EXPECT_EQ(r.memory, TuneMemory::kAll);
  EXPECT_STREQ(TuneMemoryName(r.memory), "all");
  EXPECT_EQ(r.ranks_per_gpu, (std::vector<int>{1, 2}));  // sorted (vocab/ranks_per_gpu.h)
  EXPECT_EQ(r.family->name, "mpich");
  EXPECT_FALSE(r.weights.has_value());
}

}  // namespace
}  // namespace multilane
