#include "libmlallreduce/cuda/nccl_lane.h"

#include <dlfcn.h>
#include <nccl.h>

#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "libmlallreduce/cuda/cuda_util.h"

namespace mla::lib {
namespace cuda {
namespace {

struct NcclApi {
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRank) comm_init_rank;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclCommDestroy) comm_destroy;
  decltype(&ncclGetErrorString) error_string;
};

// Returns the NCCL entry points, or nullptr when libnccl.so.2 is not there.
const NcclApi* Nccl() {
  static NcclApi api;
  static bool loaded = false;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    api.get_unique_id = reinterpret_cast<decltype(api.get_unique_id)>(dlsym(lib, "ncclGetUniqueId"));
    api.comm_init_rank = reinterpret_cast<decltype(api.comm_init_rank)>(dlsym(lib, "ncclCommInitRank"));
    api.all_reduce = reinterpret_cast<decltype(api.all_reduce)>(dlsym(lib, "ncclAllReduce"));
    api.comm_destroy = reinterpret_cast<decltype(api.comm_destroy)>(dlsym(lib, "ncclCommDestroy"));
    api.error_string = reinterpret_cast<decltype(api.error_string)>(dlsym(lib, "ncclGetErrorString"));
    loaded = api.get_unique_id && api.comm_init_rank && api.all_reduce && api.comm_destroy && api.error_string;
  });
  return loaded ? &api : nullptr;
}

// The value `key` maps to in `table`; false when it maps to none.
template <typename Key, typename Value, size_t N>
bool Lookup(const std::pair<Key, Value> (&table)[N], Key key, Value* out) {
  for (const auto& [k, v] : table)
    if (k == key) {
      *out = v;
      return true;
    }
  return false;
}

// NCCL's name of each type and operation it has (no 16-bit integers, no
// logical or bitwise operations).
const std::pair<DType, ncclDataType_t> kNcclTypes[] = {
    {DType::kI8, ncclInt8},   {DType::kU8, ncclUint8},   {DType::kI32, ncclInt32},   {DType::kU32, ncclUint32},
    {DType::kI64, ncclInt64}, {DType::kU64, ncclUint64}, {DType::kF32, ncclFloat32}, {DType::kF64, ncclFloat64}};
const std::pair<DOp, ncclRedOp_t> kNcclOps[] = {
    {DOp::kSum, ncclSum}, {DOp::kProd, ncclProd}, {DOp::kMin, ncclMin}, {DOp::kMax, ncclMax}};

bool MapType(DType t, ncclDataType_t* out) { return Lookup(kNcclTypes, t, out); }
bool MapOp(DOp op, ncclRedOp_t* out) { return Lookup(kNcclOps, op, out); }

}  // namespace

bool NcclLane::Covers(DType type, DOp op) {
  ncclDataType_t t;
  ncclRedOp_t o;
  return MapType(type, &t) && MapOp(op, &o);
}

NcclLane::~NcclLane() {
  if (comm_ != nullptr && Nccl() != nullptr) Nccl()->comm_destroy(static_cast<ncclComm_t>(comm_));
}

bool NcclLane::Ready(MPI_Comm comm, const unsigned char uuid[16]) {
  if (state_ != 0) return state_ > 0;
  state_ = -1;
  int size = 0, rank = 0;
  PMPI_Comm_size(comm, &size);
  PMPI_Comm_rank(comm, &rank);
  // Usable only when every rank has NCCL and all GPUs differ.
  std::vector<unsigned char> all(static_cast<size_t>(size) * 16);
  if (PMPI_Allgather(uuid, 16, MPI_BYTE, all.data(), 16, MPI_BYTE, comm) != MPI_SUCCESS) return false;
  int ok = Nccl() != nullptr ? 1 : 0;
  for (int i = 0; i < size && ok; ++i)
    for (int j = i + 1; j < size && ok; ++j)
      if (std::memcmp(&all[i * 16], &all[j * 16], 16) == 0) ok = 0;
  if (PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !ok) return false;

  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  int id_ok = 1;
  if (rank == 0 && Nccl()->get_unique_id(&id) != ncclSuccess) id_ok = 0;
  if (PMPI_Bcast(&id_ok, 1, MPI_INT, 0, comm) != MPI_SUCCESS || !id_ok) return false;
  if (PMPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm) != MPI_SUCCESS) return false;
  ncclComm_t nccl = nullptr;
  ncclResult_t rc = Nccl()->comm_init_rank(&nccl, size, id, rank);
  int init_ok = rc == ncclSuccess ? 1 : 0;
  if (!init_ok) Warn(std::string("ncclCommInitRank failed: ") + Nccl()->error_string(rc) + "; lanes use MPI staging");
  PMPI_Allreduce(MPI_IN_PLACE, &init_ok, 1, MPI_INT, MPI_MIN, comm);
  if (!init_ok) {
    if (nccl != nullptr) Nccl()->comm_destroy(nccl);
    return false;
  }
  comm_ = nccl;
  state_ = 1;
  return true;
}

int NcclLane::Allreduce(const void* src, void* dst, size_t n, DType type, DOp op, cudaStream_t stream) {
  ncclDataType_t t;
  ncclRedOp_t o;
  if (state_ <= 0 || !MapType(type, &t) || !MapOp(op, &o)) return MPI_ERR_INTERN;
  ncclResult_t rc = Nccl()->all_reduce(src, dst, n, t, o, static_cast<ncclComm_t>(comm_), stream);
  if (rc != ncclSuccess) {
    Warn(std::string("ncclAllReduce failed: ") + Nccl()->error_string(rc));
    return MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

}  // namespace cuda
}  // namespace mla::lib
