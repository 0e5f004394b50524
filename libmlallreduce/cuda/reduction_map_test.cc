// reduction_map_test.cc: which (MPI datatype, MPI op) pairs the device
// kernels take, and whether the element type and op they map to give the
// system MPI's bits, without a GPU (issue 27: a mutant that compared 1- and
// 4-byte unsigned MIN/MAX as signed survived the GPU tests).
//
// For every predefined type and op: MapReduction must accept exactly the
// pairs the kernels cover, and for each one a host model of the kernels'
// element operation (reduce_ops.cuh) on the mapped DType/DOp, fed values
// whose top bits are set as often as not, must equal MPI_Reduce_local's
// result byte for byte.  One process (MPI singleton); no CUDA call.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "libmlallreduce/cuda/reduce_kernels.h"

namespace mla::lib {
namespace cuda {
namespace {

struct TypeCase {
  const char* name;
  MPI_Datatype type;
  enum Kind { kInt, kFloat, kByte, kBool, kOther } kind;
};

struct OpCase {
  const char* name;
  MPI_Op op;
};

std::vector<TypeCase> Types() {
  return {{"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, TypeCase::kInt},
          {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, TypeCase::kInt},
          {"MPI_SHORT", MPI_SHORT, TypeCase::kInt},
          {"MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, TypeCase::kInt},
          {"MPI_INT", MPI_INT, TypeCase::kInt},
          {"MPI_UNSIGNED", MPI_UNSIGNED, TypeCase::kInt},
          {"MPI_LONG", MPI_LONG, TypeCase::kInt},
          {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, TypeCase::kInt},
          {"MPI_LONG_LONG", MPI_LONG_LONG, TypeCase::kInt},
          {"MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, TypeCase::kInt},
          {"MPI_INT8_T", MPI_INT8_T, TypeCase::kInt},
          {"MPI_INT16_T", MPI_INT16_T, TypeCase::kInt},
          {"MPI_INT32_T", MPI_INT32_T, TypeCase::kInt},
          {"MPI_INT64_T", MPI_INT64_T, TypeCase::kInt},
          {"MPI_UINT8_T", MPI_UINT8_T, TypeCase::kInt},
          {"MPI_UINT16_T", MPI_UINT16_T, TypeCase::kInt},
          {"MPI_UINT32_T", MPI_UINT32_T, TypeCase::kInt},
          {"MPI_UINT64_T", MPI_UINT64_T, TypeCase::kInt},
          {"MPI_AINT", MPI_AINT, TypeCase::kInt},
          {"MPI_OFFSET", MPI_OFFSET, TypeCase::kInt},
          {"MPI_COUNT", MPI_COUNT, TypeCase::kInt},
          {"MPI_FLOAT", MPI_FLOAT, TypeCase::kFloat},
          {"MPI_DOUBLE", MPI_DOUBLE, TypeCase::kFloat},
          {"MPI_BYTE", MPI_BYTE, TypeCase::kByte},
          {"MPI_C_BOOL", MPI_C_BOOL, TypeCase::kBool},
          // Never mapped: staged through the host.
          {"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, TypeCase::kOther},
          {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, TypeCase::kOther},
          {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, TypeCase::kOther},
          {"MPI_2INT", MPI_2INT, TypeCase::kOther},
          {"MPI_FLOAT_INT", MPI_FLOAT_INT, TypeCase::kOther},
          {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, TypeCase::kOther},
          {"MPI_CHAR", MPI_CHAR, TypeCase::kOther},
          {"MPI_WCHAR", MPI_WCHAR, TypeCase::kOther}};
}

const OpCase kOps[] = {{"MPI_SUM", MPI_SUM},        {"MPI_PROD", MPI_PROD},     {"MPI_MIN", MPI_MIN},
                       {"MPI_MAX", MPI_MAX},        {"MPI_LAND", MPI_LAND},     {"MPI_LOR", MPI_LOR},
                       {"MPI_LXOR", MPI_LXOR},      {"MPI_BAND", MPI_BAND},     {"MPI_BOR", MPI_BOR},
                       {"MPI_BXOR", MPI_BXOR},      {"MPI_MINLOC", MPI_MINLOC}, {"MPI_MAXLOC", MPI_MAXLOC},
                       {"MPI_REPLACE", MPI_REPLACE}};

bool IsArith(MPI_Op op) { return op == MPI_SUM || op == MPI_PROD || op == MPI_MIN || op == MPI_MAX; }
bool IsLogical(MPI_Op op) { return op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR; }
bool IsBitwise(MPI_Op op) { return op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR; }
// MPI_AINT, MPI_OFFSET, MPI_COUNT ("multi-language" types) take no logical
// op in MPI; the map takes them like any integer (the system MPI would refuse
// the call first on the host path; the device path never sees one it refuses).
bool KernelsCover(const TypeCase& t, MPI_Op op) {
  switch (t.kind) {
    case TypeCase::kInt:
      return IsArith(op) || IsLogical(op) || IsBitwise(op);
    case TypeCase::kFloat:
      return IsArith(op);
    case TypeCase::kByte:
      return IsBitwise(op);
    case TypeCase::kBool:
      return IsLogical(op);
    case TypeCase::kOther:
      return false;
  }
  return false;
}

// The kernels' element operation (reduce_ops.cuh) on the host; sums and
// products wrap in the type's width as on the device.
template <class T>
T Apply(DOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case DOp::kSum:
        return static_cast<T>(static_cast<U>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)));
      case DOp::kProd:
        return static_cast<T>(static_cast<U>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)));
      case DOp::kMin:
        return b < a ? b : a;
      case DOp::kMax:
        return a < b ? b : a;
      case DOp::kLand:
        return static_cast<T>(a && b);
      case DOp::kLor:
        return static_cast<T>(a || b);
      case DOp::kLxor:
        return static_cast<T>(!a != !b);
      case DOp::kBand:
        return static_cast<T>(a & b);
      case DOp::kBor:
        return static_cast<T>(a | b);
      case DOp::kBxor:
        return static_cast<T>(a ^ b);
    }
  } else {
    switch (op) {
      case DOp::kSum:
        return a + b;
      case DOp::kProd:
        return a * b;
      case DOp::kMin:
        return b < a ? b : a;
      case DOp::kMax:
        return a < b ? b : a;
      default:
        break;
    }
  }
  ADD_FAILURE() << "op " << static_cast<int>(op) << " on a type that does not take it";
  return a;
}

// out = in[0] op in[1] op ... element by element, as DType `t`.
template <class T>
void ModelAs(DOp op, const std::vector<std::vector<unsigned char>>& in, int count, unsigned char* out) {
  for (int i = 0; i < count; ++i) {
    T acc;
    std::memcpy(&acc, in[0].data() + i * sizeof(T), sizeof(T));
    for (size_t r = 1; r < in.size(); ++r) {
      T v;
      std::memcpy(&v, in[r].data() + i * sizeof(T), sizeof(T));
      acc = Apply(op, acc, v);
    }
    std::memcpy(out + i * sizeof(T), &acc, sizeof(T));
  }
}

void Model(DType t, DOp op, const std::vector<std::vector<unsigned char>>& in, int count, unsigned char* out) {
  switch (t) {
    case DType::kI8:
      return ModelAs<int8_t>(op, in, count, out);
    case DType::kU8:
      return ModelAs<uint8_t>(op, in, count, out);
    case DType::kI16:
      return ModelAs<int16_t>(op, in, count, out);
    case DType::kU16:
      return ModelAs<uint16_t>(op, in, count, out);
    case DType::kI32:
      return ModelAs<int32_t>(op, in, count, out);
    case DType::kU32:
      return ModelAs<uint32_t>(op, in, count, out);
    case DType::kI64:
      return ModelAs<int64_t>(op, in, count, out);
    case DType::kU64:
      return ModelAs<uint64_t>(op, in, count, out);
    case DType::kF32:
      return ModelAs<float>(op, in, count, out);
    case DType::kF64:
      return ModelAs<double>(op, in, count, out);
  }
}

// Inputs of `ranks` ranks: integers of random bits (the top bit set in half
// of them, so both signs meet in every MIN/MAX and bitwise op), small values
// for SUM and PROD, 0/1 for C_BOOL; floats of small integers (every sum and
// product exact).
std::vector<std::vector<unsigned char>> Inputs(const TypeCase& t, MPI_Op op, int size, int count, int ranks,
                                               std::mt19937_64& rng) {
  std::vector<std::vector<unsigned char>> in(ranks, std::vector<unsigned char>(static_cast<size_t>(size) * count));
  for (auto& buf : in) {
    for (int i = 0; i < count; ++i) {
      unsigned char* p = buf.data() + static_cast<size_t>(i) * size;
      if (t.kind == TypeCase::kFloat) {
        const double v = static_cast<double>(static_cast<int>(rng() % 17) - 8);
        if (size == 4) {
          const float f = static_cast<float>(v);
          std::memcpy(p, &f, 4);
        } else {
          std::memcpy(p, &v, 8);
        }
      } else if (t.kind == TypeCase::kBool) {
        *p = static_cast<unsigned char>(rng() & 1);
      } else {
        uint64_t v = rng();
        if (IsLogical(op) && rng() % 3 == 0) v = 0;  // zeros make LAND/LOR/LXOR differ
        // Sums that overflow no type: Open MPI 4.1's AVX reductions (op/avx)
        // saturate 8- and 16-bit sums in their vector part and wrap in the
        // scalar tail (seen on the build machine: 257 x uint8 200 + 100 gives
        // 255 in element 0 and 44 in element 256), so overflow has no one
        // system-MPI answer to compare with.  Products of -2..2 (wrapping
        // multiplies agree everywhere).
        if (op == MPI_SUM) v = rng() % 41;
        if (op == MPI_PROD) v = static_cast<uint64_t>(static_cast<int64_t>(rng() % 5) - 2);
        std::memcpy(p, &v, static_cast<size_t>(size));
      }
    }
  }
  return in;
}

class ReductionMap : public testing::Test {};

TEST_F(ReductionMap, TakesExactlyThePairsTheKernelsCover) {
  int checked = 0;
  for (const TypeCase& t : Types()) {
    for (const OpCase& o : kOps) {
      DType type = DType::kF64;
      DOp dop = DOp::kBxor;
      const bool mapped = MapReduction(t.type, o.op, &type, &dop);
      EXPECT_EQ(mapped, KernelsCover(t, o.op)) << t.name << " " << o.name;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 33 * 13);
}

TEST_F(ReductionMap, MappedTypeHasTheMpiTypesSizeAndItsSignedness) {
  const DType kSigned[] = {DType::kI8, DType::kI16, DType::kI32, DType::kI64};
  const DType kUnsigned[] = {DType::kU8, DType::kU16, DType::kU32, DType::kU64};
  for (const TypeCase& t : Types()) {
    if (t.kind == TypeCase::kOther) continue;
    int size = 0;
    ASSERT_EQ(MPI_Type_size(t.type, &size), MPI_SUCCESS);
    for (const OpCase& o : kOps) {
      DType type;
      DOp dop;
      if (!MapReduction(t.type, o.op, &type, &dop)) continue;
      EXPECT_EQ(DTypeSize(type), static_cast<size_t>(size)) << t.name << " " << o.name;
      if (t.kind != TypeCase::kInt || o.op == MPI_MIN || o.op == MPI_MAX) continue;
      // Only MIN and MAX depend on the sign; the others take the C type's.
      const bool c_unsigned =
          std::string(t.name).find("UNSIGNED") != std::string::npos || std::string(t.name).find("MPI_UINT") == 0;
      const DType* list = c_unsigned ? kUnsigned : kSigned;
      EXPECT_TRUE(type == list[0] || type == list[1] || type == list[2] || type == list[3])
          << t.name << " " << o.name << " mapped to the other signedness";
    }
  }
}

TEST_F(ReductionMap, ModelOfTheMappedKernelGivesTheSystemMpisBits) {
  std::mt19937_64 rng(0x6d617070696e67ull);
  constexpr int kCount = 257, kRanks = 3;
  int compared = 0, refused = 0;
  for (const TypeCase& t : Types()) {
    int size = 0;
    ASSERT_EQ(MPI_Type_size(t.type, &size), MPI_SUCCESS) << t.name;
    for (const OpCase& o : kOps) {
      DType type;
      DOp dop;
      if (!MapReduction(t.type, o.op, &type, &dop)) continue;
      const auto in = Inputs(t, o.op, size, kCount, kRanks, rng);
      // The system MPI: inout = in[r] op inout, from the last rank down.
      std::vector<unsigned char> mpi = in[kRanks - 1];
      int rc = MPI_SUCCESS;
      for (int r = kRanks - 2; r >= 0 && rc == MPI_SUCCESS; --r)
        rc = MPI_Reduce_local(in[r].data(), mpi.data(), kCount, t.type, o.op);
      if (rc != MPI_SUCCESS) {
        // Only MPI's own rule may refuse: no logical op on the multi-language types.
        EXPECT_TRUE(IsLogical(o.op) && (t.type == MPI_AINT || t.type == MPI_OFFSET || t.type == MPI_COUNT))
            << t.name << " " << o.name << ": the system MPI refused a pair the kernels take";
        ++refused;
        continue;
      }
      std::vector<unsigned char> model(mpi.size(), 0xa5);
      Model(type, dop, in, kCount, model.data());
      size_t i = 0;
      while (i < mpi.size() && mpi[i] == model[i]) ++i;
      EXPECT_EQ(i, mpi.size()) << t.name << " " << o.name << ": element " << i / size << " of the mapped kernel (DType "
                               << static_cast<int>(type) << ", DOp " << static_cast<int>(dop)
                               << ") differs from MPI_Reduce_local";
      ++compared;
    }
  }
  // 21 integer types x 10 ops, 2 floats x 4, MPI_BYTE x 3, MPI_C_BOOL x 3;
  // at most the 9 logical pairs of the multi-language types refused.
  EXPECT_EQ(compared + refused, 21 * 10 + 2 * 4 + 3 + 3);
  EXPECT_LE(refused, 9);
  std::printf("[   INFO   ] %d pairs compared with MPI_Reduce_local, %d refused by the system MPI\n", compared,
              refused);
}

// The inputs above really exercise the sign: for every unsigned integer
// type, MIN and MAX as the *signed* type of the same width would differ from
// the system MPI (so a map that got the sign wrong cannot pass).
TEST_F(ReductionMap, InputsTellSignedFromUnsignedMinAndMax) {
  std::mt19937_64 rng(7);
  const TypeCase u8{"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, TypeCase::kInt};
  const TypeCase u32{"MPI_UNSIGNED", MPI_UNSIGNED, TypeCase::kInt};
  const TypeCase u64{"MPI_UINT64_T", MPI_UINT64_T, TypeCase::kInt};
  const std::pair<const TypeCase*, DType> cases[] = {{&u8, DType::kI8}, {&u32, DType::kI32}, {&u64, DType::kI64}};
  for (const auto& [t, wrong] : cases) {
    for (MPI_Op op : {MPI_MIN, MPI_MAX}) {
      int size = 0;
      MPI_Type_size(t->type, &size);
      const auto in = Inputs(*t, op, size, 257, 3, rng);
      std::vector<unsigned char> mpi = in[2];
      MPI_Reduce_local(in[1].data(), mpi.data(), 257, t->type, op);
      MPI_Reduce_local(in[0].data(), mpi.data(), 257, t->type, op);
      std::vector<unsigned char> model(mpi.size());
      Model(wrong, op == MPI_MIN ? DOp::kMin : DOp::kMax, in, 257, model.data());
      EXPECT_NE(model, mpi) << t->name;
    }
  }
}

}  // namespace
}  // namespace cuda
}  // namespace mla::lib

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  // MPI_Reduce_local's errors (a pair the system MPI refuses) come back as codes.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
