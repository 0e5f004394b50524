// abi_handles_test.cc: FindMpiAbiHandles (mpi_family.h), which the front
// library uses without mpi.h, against the family's own mpi.h.  Built once per
// family; no MPI_Init is needed (the handles are constants or objects of
// libmpi).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>

#include "libmlallreduce/startup/mpi_family.h"

namespace mla::lib {
namespace {

#if defined(OPEN_MPI)
constexpr MpiFamily kFamily = MpiFamily::kOpenMpi;
#elif defined(MPICH)
constexpr MpiFamily kFamily = MpiFamily::kMpich;
#else
#error "neither Open MPI's nor MPICH's mpi.h"
#endif

template <typename T>
std::uintptr_t Bits(T handle) {
  if constexpr (std::is_pointer_v<T>)
    return reinterpret_cast<std::uintptr_t>(handle);
  else
    return static_cast<std::uintptr_t>(handle);
}

TEST(AbiHandles, MatchThisFamilysMpiH) {
  MpiAbiHandles h;
  ASSERT_TRUE(FindMpiAbiHandles(kFamily, nullptr, &h));
  EXPECT_EQ(h.comm_world, Bits(MPI_COMM_WORLD));
  EXPECT_EQ(h.unsigned_long_long, Bits(MPI_UNSIGNED_LONG_LONG));
  EXPECT_EQ(h.op_max, Bits(MPI_MAX));
  EXPECT_EQ(h.in_place, MPI_IN_PLACE);
}

TEST(AbiHandles, NoneForAnUnknownMpi) {
  MpiAbiHandles h;
  EXPECT_FALSE(FindMpiAbiHandles(MpiFamily::kNeither, nullptr, &h));
}

}  // namespace
}  // namespace mla::lib
