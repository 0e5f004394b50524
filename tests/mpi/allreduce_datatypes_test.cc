// allreduce_datatypes_test.cc: part of allreduce_mpi_test.  PredefinedTypes:
// exact results for every predefined type and valid predefined op.  Counts:
// edge counts and MPI_IN_PLACE.  RealData: random floating data within a
// tolerance of PMPI_Allreduce, bitwise identical on all ranks.

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "allreduce_cases.h"
#include "allreduce_support.h"
#include "mlallreduce.h"

namespace mlatest {
namespace {

// Exact comparisons over every predefined type and valid predefined op.
constexpr int kMatrixCount = 37;

// Runs `cases` over MPI_COMM_WORLD, kMatrixCount elements; every rank must
// get the exact result.
void ExpectMatrixExact(const std::vector<TypeCase>& cases) {
  Local local;
  RunTypeMatrix(cases, MPI_COMM_WORLD, kMatrixCount, local);
  EXPECT_ALL_RANKS_OK(local);
}

TEST(PredefinedTypes, Integers) { ExpectMatrixExact(IntegerCases()); }
TEST(PredefinedTypes, ByteAndBool) { ExpectMatrixExact(ByteBoolCases()); }
TEST(PredefinedTypes, Floating) { ExpectMatrixExact(FloatCases()); }
TEST(PredefinedTypes, Complex) { ExpectMatrixExact(ComplexCases()); }
TEST(PredefinedTypes, MinLocMaxLocPairs) { ExpectMatrixExact(PairCases()); }

// Counts around the edges: 0, 1, small odd ones, below the number of ranks,
// and larger ones that no number of lanes divides evenly.
std::vector<int> EdgeCounts() {
  std::vector<int> c = {0, 1, 7, 13, 1001, 2311};
  if (g_size > 2) c.push_back(g_size - 1);
  if (g_size > 4) c.push_back(g_size / 2 + 1);
  return c;
}

TEST(Counts, EdgeCountsAndInPlace) {
  Local local;
  std::vector<Variant> variants = AllVariants(MPI_COMM_WORLD);
  TypeCase ints = Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM});
  TypeCase dbls = Make<FloatKind<double>>("MPI_DOUBLE", MPI_DOUBLE, {MPI_MAX});
  TypeCase pairs = Make<PairKind<short>>("MPI_SHORT_INT", MPI_SHORT_INT, {MPI_MAXLOC});
  TypeCase cplx = Make<ComplexKind<float>>("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, {MPI_PROD});
  for (int count : EdgeCounts()) {
    for (const TypeCase* tc : {&ints, &dbls, &pairs, &cplx})
      RunCase(MPI_COMM_WORLD, *tc, tc->ops[0], count, variants, CaseOptions{true, true, 7}, local);
  }
  EXPECT_ALL_RANKS_OK(local);
}

// Messages of several shared-memory slots (MULTILANE_NODE_STEP=shm cuts
// them into chunks of 256 KiB, algorithms.md) and of an odd count, exact:
// the algorithms without a chunk, so that the MPI node steps stay quick.
TEST(Counts, LargeAcrossChunks) {
  Local local;
  const int fewer = std::max(1, MinRanksPerNode(MPI_COMM_WORLD) / 2);
  const std::vector<Variant> variants = {With(MLA_ALGO_LANE, 0, 0), With(MLA_ALGO_LANE, fewer, 0),
                                         With(MLA_ALGO_HIER, 0, 0),
                                         Variant{Variant::kIntercepted, {}, "MPI_Allreduce (intercepted)"}};
  constexpr int kCount = 3 * (256 << 10) / 8 + 1001;  // 3.1 slots of doubles, 6.2 of ints
  TypeCase ints = Make<IntKind<int>>("MPI_INT", MPI_INT, {MPI_SUM});
  TypeCase dbls = Make<FloatKind<double>>("MPI_DOUBLE", MPI_DOUBLE, {MPI_SUM});  // small integers: exact
  TypeCase bxor = Make<IntKind<uint64_t>>("MPI_UINT64_T", MPI_UINT64_T, {MPI_BXOR});
  for (const TypeCase* tc : {&ints, &dbls, &bxor})
    RunCase(MPI_COMM_WORLD, *tc, tc->ops[0], kCount, variants, CaseOptions{true, true, 11}, local);
  EXPECT_ALL_RANKS_OK(local);
}

// Random real data: reassociation may change the last bits, so compare with
// PMPI's result to a tolerance, but every rank must hold the very same bits.
template <class T>
void RunRealData(MPI_Datatype dt, const char* tname, int count, MPI_Op op, const std::vector<Variant>& variants,
                 Local& local) {
  Rng rng = MakeRng(HashString(tname) ^ (static_cast<uint64_t>(count) << 20) ^ HashString(OpName(op)), g_rank);
  std::vector<T> send(count), ref(count), absref(count), abs_in(count);
  std::uniform_real_distribution<T> d(op == MPI_PROD ? T(0.5) : T(-1), op == MPI_PROD ? T(1.5) : T(1));
  for (int i = 0; i < count; ++i) {
    send[i] = d(rng);
    abs_in[i] = std::fabs(send[i]);
  }
  PMPI_Allreduce(send.data(), ref.data(), count, dt, op, MPI_COMM_WORLD);
  PMPI_Allreduce(abs_in.data(), absref.data(), count, dt, MPI_SUM, MPI_COMM_WORLD);
  const T eps = std::numeric_limits<T>::epsilon();
  const T tol = eps * T(4 * (g_size + 1));
  for (const Variant& v : variants) {
    for (int in_place = 0; in_place <= 1; ++in_place) {
      std::vector<T> recv = in_place ? send : std::vector<T>(count, T(-12345));
      int rc = Call(v, in_place ? MPI_IN_PLACE : send.data(), recv.data(), count, dt, op, MPI_COMM_WORLD);
      std::string what = std::string(tname) + " " + OpName(op) + " count=" + std::to_string(count) + " " + v.name +
                         (in_place ? " MPI_IN_PLACE" : "");
      if (rc != MPI_SUCCESS) local.Fail(what + ": returned " + std::to_string(rc));
      for (int i = 0; i < count; ++i) {
        T bound;
        if (op == MPI_SUM)
          bound = tol * absref[i];
        else if (op == MPI_PROD)
          bound = tol * std::fabs(ref[i]);
        else
          bound = 0;  // MIN/MAX are exact
        if (!(std::fabs(recv[i] - ref[i]) <= bound)) {
          std::ostringstream o;
          o.precision(std::numeric_limits<T>::max_digits10);
          o << what << ": element " << i << " is " << recv[i] << ", PMPI_Allreduce gives " << ref[i]
            << " (allowed difference " << bound << ")";
          local.Fail(o.str());
          break;
        }
      }
      // Bitwise identical on all ranks.
      uint64_t h = HashBytes(recv.data(), count * sizeof(T));
      uint64_t hmin = 0, hmax = 0;
      PMPI_Allreduce(&h, &hmin, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
      PMPI_Allreduce(&h, &hmax, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
      if (hmin != hmax) local.Fail(what + ": results differ between ranks (bitwise)");
    }
  }
}

TEST(RealData, ToleranceAndBitwiseIdenticalOnAllRanks) {
  Local local;
  std::vector<Variant> variants = AllVariants(MPI_COMM_WORLD);
  for (int count : {13, 1001, 3001}) {
    RunRealData<float>(MPI_FLOAT, "MPI_FLOAT", count, MPI_SUM, variants, local);
    RunRealData<double>(MPI_DOUBLE, "MPI_DOUBLE", count, MPI_SUM, variants, local);
  }
  RunRealData<float>(MPI_FLOAT, "MPI_FLOAT", 1001, MPI_PROD, variants, local);
  RunRealData<double>(MPI_DOUBLE, "MPI_DOUBLE", 1001, MPI_MIN, variants, local);
  RunRealData<double>(MPI_DOUBLE, "MPI_DOUBLE", 1001, MPI_MAX, variants, local);
  EXPECT_ALL_RANKS_OK(local);
}

}  // namespace
}  // namespace mlatest
