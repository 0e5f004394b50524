// reduction_map.cc: which MPI (datatype, op) pairs the device kernels run,
// and the size of their element types.
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

#include "libmlallreduce/cuda/reduce_kernels.h"

namespace mla::lib {
namespace cuda {
namespace {

// Whether the system MPI compares integer type `t` (of `size` bytes) as
// signed in MPI_MIN and MPI_MAX, asked once per type with MPI_Reduce_local
// (min of -1 and 1).  MPI says a type is signed when its C type is, but
// Open MPI 4.1 compares MPI_OFFSET as unsigned; the kernels must give the
// bits the system MPI gives (the host and staged paths use it), so they
// follow it.  `standard` is the answer when the question fails.
bool ComparesSigned(MPI_Datatype t, int size, bool standard) {
  static std::mutex mutex;
  static std::map<MPI_Datatype, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(t);
  if (it != known.end()) return it->second;
  unsigned char minus_one[8], one[8] = {0};
  std::memset(minus_one, 0xff, sizeof minus_one);
  const int64_t v = 1;
  std::memcpy(one, &v, static_cast<size_t>(size));  // 1 in the type's width, either byte order
  bool is_signed = standard;
  if (size <= 8 && PMPI_Reduce_local(minus_one, one, 1, t, MPI_MIN) == MPI_SUCCESS) {
    is_signed = std::memcmp(one, minus_one, static_cast<size_t>(size)) == 0;
  }
  known[t] = is_signed;
  return is_signed;
}

enum class Class { kNone, kSigned, kUnsigned, kFloat, kByte, kBool };

Class Classify(MPI_Datatype t) {
  if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T || t == MPI_SHORT || t == MPI_INT16_T || t == MPI_INT ||
      t == MPI_INT32_T || t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_INT64_T || t == MPI_AINT || t == MPI_OFFSET ||
      t == MPI_COUNT)
    return Class::kSigned;
  if (t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T || t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T || t == MPI_UNSIGNED ||
      t == MPI_UINT32_T || t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T)
    return Class::kUnsigned;
  if (t == MPI_FLOAT || t == MPI_DOUBLE) return Class::kFloat;
  if (t == MPI_BYTE) return Class::kByte;
  if (t == MPI_C_BOOL) return Class::kBool;
  return Class::kNone;
}

bool MapOp(MPI_Op op, DOp* out) {
  const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                        MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};  // in DOp's order
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i)
    if (op == ops[i]) {
      *out = static_cast<DOp>(i);
      return true;
    }
  return false;
}

bool IsArith(DOp op) { return op == DOp::kSum || op == DOp::kProd || op == DOp::kMin || op == DOp::kMax; }
bool IsLogical(DOp op) { return op == DOp::kLand || op == DOp::kLor || op == DOp::kLxor; }
bool IsBitwise(DOp op) { return op == DOp::kBand || op == DOp::kBor || op == DOp::kBxor; }

}  // namespace

bool MapReduction(MPI_Datatype datatype, MPI_Op op, DType* type, DOp* dop) {
  const Class c = Classify(datatype);
  if (c == Class::kNone || !MapOp(op, dop)) return false;
  int size = 0;
  if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS) return false;
  switch (c) {
    case Class::kFloat:
      if (!IsArith(*dop)) return false;
      *type = size == 4 ? DType::kF32 : DType::kF64;
      return size == 4 || size == 8;
    case Class::kByte:
      if (!IsBitwise(*dop)) return false;
      *type = DType::kU8;
      return true;
    case Class::kBool:
      if (!IsLogical(*dop) || size != 1) return false;
      *type = DType::kU8;
      return true;
    case Class::kSigned:
    case Class::kUnsigned: {
      bool is_signed = c == Class::kSigned;
      // Only comparisons tell signed from unsigned bits.
      if (*dop == DOp::kMin || *dop == DOp::kMax) is_signed = ComparesSigned(datatype, size, is_signed);
      switch (size) {
        case 1:
          *type = is_signed ? DType::kI8 : DType::kU8;
          return true;
        case 2:
          *type = is_signed ? DType::kI16 : DType::kU16;
          return true;
        case 4:
          *type = is_signed ? DType::kI32 : DType::kU32;
          return true;
        case 8:
          *type = is_signed ? DType::kI64 : DType::kU64;
          return true;
        default:
          return false;
      }
    }
    default:
      return false;
  }
}

size_t DTypeSize(DType type) {
  constexpr size_t kSizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};  // in DType's order
  return kSizes[static_cast<int>(type)];
}

}  // namespace cuda
}  // namespace mla::lib
