// pmix_abi_test.cc: pmix_abi.h's declarations against PMIx's own header.
#include "libmlallreduce/startup/pmix_abi.h"

#include <gtest/gtest.h>
#include <pmix_common.h>

#include <cstring>
#include <type_traits>

namespace mla::lib {
namespace {

TEST(PmixAbi, ConstantsMatchTheStandard) {
  EXPECT_EQ(pmix::kMaxNsLen, PMIX_MAX_NSLEN);
  EXPECT_EQ(pmix::kMaxKeyLen, PMIX_MAX_KEYLEN);
  EXPECT_EQ(pmix::kSuccess, PMIX_SUCCESS);
  EXPECT_EQ(pmix::kErrNotFound, PMIX_ERR_NOT_FOUND);
  EXPECT_EQ(pmix::kErrInit, PMIX_ERR_INIT);
  EXPECT_EQ(pmix::kTypeBool, PMIX_BOOL);
  EXPECT_EQ(pmix::kTypeString, PMIX_STRING);
  EXPECT_EQ(pmix::kScopeGlobal, PMIX_GLOBAL);
  EXPECT_STREQ(pmix::kOptional, PMIX_OPTIONAL);
  EXPECT_EQ(pmix::kTypeInt, PMIX_INT);
  EXPECT_STREQ(pmix::kTimeout, PMIX_TIMEOUT);
  EXPECT_EQ(pmix::kTypeUint32, PMIX_UINT32);
  EXPECT_EQ(pmix::kRankWildcard, PMIX_RANK_WILDCARD);
  EXPECT_STREQ(pmix::kNumNodes, PMIX_NUM_NODES);
}

TEST(PmixAbi, LayoutsMatchTheStandard) {
  EXPECT_EQ(sizeof(pmix::Proc), sizeof(pmix_proc_t));
  EXPECT_EQ(offsetof(pmix::Proc, rank), offsetof(pmix_proc_t, rank));
  EXPECT_EQ(sizeof(pmix::Value), sizeof(pmix_value_t));
  EXPECT_EQ(offsetof(pmix::Value, data), offsetof(pmix_value_t, data));
  EXPECT_EQ(sizeof(pmix::Info), sizeof(pmix_info_t));
  EXPECT_EQ(offsetof(pmix::Info, flags), offsetof(pmix_info_t, flags));
  EXPECT_EQ(offsetof(pmix::Info, value), offsetof(pmix_info_t, value));
}

TEST(PmixAbi, CallbackTypesMatchTheStandard) {
  // The non-blocking get and its callback, as pmix_channel.cc calls them.
  EXPECT_TRUE((std::is_same_v<decltype(pmix::ValueCbFn{}(0, nullptr, nullptr)), void>));
  EXPECT_EQ(sizeof(pmix_status_t), sizeof(int));
  EXPECT_EQ(sizeof(pmix_value_cbfunc_t), sizeof(pmix::ValueCbFn));
}

}  // namespace
}  // namespace mla::lib
