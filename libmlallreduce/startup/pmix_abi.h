// pmix_abi.h: the few PMIx Standard types and constants the start-up
// agreement uses (pmix_channel.cc), declared here so that the library needs
// neither PMIx's headers to build nor libpmix to link: it opens the libpmix
// the MPI uses at run time.  The layouts are the PMIx Standard's ABI (v3 and
// later); pmix_abi_test.cc checks them against pmix_common.h where present.
#ifndef MLA_PMIX_ABI_H_
#define MLA_PMIX_ABI_H_

#include <cstddef>
#include <cstdint>

namespace mla::lib::pmix {

constexpr int kMaxNsLen = 255;
constexpr int kMaxKeyLen = 511;
constexpr int kSuccess = 0;                         // PMIX_SUCCESS
constexpr int kErrNotFound = -46;                   // PMIX_ERR_NOT_FOUND
constexpr int kErrInit = -31;                       // PMIX_ERR_INIT
constexpr uint16_t kTypeBool = 1;                   // PMIX_BOOL
constexpr uint16_t kTypeString = 3;                 // PMIX_STRING
constexpr uint16_t kTypeInt = 6;                    // PMIX_INT
constexpr uint16_t kTypeUint32 = 14;                // PMIX_UINT32
constexpr uint32_t kRankWildcard = UINT32_MAX - 1;  // PMIX_RANK_WILDCARD: the job itself
constexpr uint8_t kScopeGlobal = 3;                 // PMIX_GLOBAL
constexpr char kOptional[] = "pmix.optional";       // PMIX_OPTIONAL: look in the local store only
constexpr char kTimeout[] = "pmix.timeout";         // PMIX_TIMEOUT: seconds before the operation gives up
constexpr char kNumNodes[] = "pmix.num.nodes";      // PMIX_NUM_NODES: the job's nodes (uint32)

struct Proc {  // pmix_proc_t
  char nspace[kMaxNsLen + 1];
  uint32_t rank;
};

struct Value {  // pmix_value_t: the type, then a union whose largest member is 3 words
  uint16_t type;
  union {
    bool flag;
    int integer;
    uint32_t uint32;
    char* string;
    unsigned char bytes[24];
  } data;
};

struct Info {  // pmix_info_t
  char key[kMaxKeyLen + 1];
  uint32_t flags;
  Value value;
};

using InitFn = int (*)(Proc* proc, Info* info, size_t ninfo);
using FinalizeFn = int (*)(const Info* info, size_t ninfo);
using PutFn = int (*)(uint8_t scope, const char key[], Value* value);
using CommitFn = int (*)();
using GetFn = int (*)(const Proc* proc, const char key[], const Info info[], size_t ninfo, Value** value);
// pmix_value_cbfunc_t: the answer of a PMIx_Get_nb; `value` stays PMIx's.
using ValueCbFn = void (*)(int status, Value* value, void* cbdata);
using GetNbFn = int (*)(const Proc* proc, const char key[], const Info info[], size_t ninfo, ValueCbFn cbfunc,
                        void* cbdata);

}  // namespace mla::lib::pmix

#endif  // MLA_PMIX_ABI_H_
