// allreduce_userops_test.cc: part of allreduce_mpi_test.  UserOps: a
// commutative user op runs multilane, a non-commutative one goes to
// PMPI_Allreduce.  DerivedTypes: contiguous derived types run multilane,
// non-contiguous ones go to PMPI_Allreduce.

#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "allreduce_cases.h"
#include "allreduce_support.h"
#include "mlallreduce.h"

namespace mlatest {
namespace {

std::atomic<long> g_user_sum_calls{0};

void UserIntSum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  g_user_sum_calls.fetch_add(1, std::memory_order_relaxed);
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] + b[i];
}

TEST(UserOps, CommutativeRunsMultilane) {
  Local local;
  MPI_Op op;
  MPI_Op_create(&UserIntSum, 1, &op);
  if (g_size >= 2) {
    const char* why = nullptr;
    if (!mla_call_supported(MPI_INT, op, MPI_COMM_WORLD, &why))
      local.Fail(std::string("mla_call_supported(MPI_INT, commutative user op) = 0: ") + (why ? why : ""));
  }
  for (int count : {1, 13, 1001}) {
    std::vector<int> send(count), ref(count);
    for (int i = 0; i < count; ++i) send[i] = (g_rank + 1) * (i % 11 + 1) - 3 * i;
    PMPI_Allreduce(send.data(), ref.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    std::vector<Variant> vs = AllVariants(MPI_COMM_WORLD);
    for (const Variant& v : vs) {
      std::vector<int> recv(count, -7);
      mla_stats b, a;
      mla_get_stats(&b);
      int rc = Call(v, send.data(), recv.data(), count, MPI_INT, op, MPI_COMM_WORLD);
      mla_get_stats(&a);
      std::string what = "commutative user op count=" + std::to_string(count) + " " + v.name;
      if (rc != MPI_SUCCESS || recv != ref) local.Fail(what + ": wrong result");
      if (v.kind == Variant::kWith && v.choice.algo != MLA_ALGO_PASSTHROUGH)
        ExpectRanMultilane(b, a, v.choice.algo, MPI_COMM_WORLD, MPI_INT, op, what, local);
    }
  }
  MPI_Op_free(&op);
  EXPECT_ALL_RANKS_OK(local);
}

// 2x2 integer matrices; inout = in * inout, so the reduction over ranks in
// rank order is M_0 * M_1 * ... * M_{n-1}.
struct Mat2 {
  int a[4];
};
Mat2 Mul(const Mat2& x, const Mat2& y) {
  return Mat2{{x.a[0] * y.a[0] + x.a[1] * y.a[2], x.a[0] * y.a[1] + x.a[1] * y.a[3], x.a[2] * y.a[0] + x.a[3] * y.a[2],
               x.a[2] * y.a[1] + x.a[3] * y.a[3]}};
}
void UserMatMul(void* in, void* inout, int* len, MPI_Datatype*) {
  const Mat2* x = static_cast<const Mat2*>(in);
  Mat2* y = static_cast<Mat2*>(inout);
  for (int i = 0; i < *len; ++i) y[i] = Mul(x[i], y[i]);
}
std::vector<Mat2> RankMatrices(int rank, int count) {
  Rng rng = MakeRng(0x4d41545249584553ULL, rank);
  std::vector<Mat2> m(count);
  for (auto& x : m)
    for (int& e : x.a) e = static_cast<int>(Uni(rng, -1, 1));
  return m;
}

TEST(UserOps, NonCommutativeGoesToPmpi) {
  Local local;
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_INT, &mat);
  MPI_Type_commit(&mat);
  MPI_Op op;
  MPI_Op_create(&UserMatMul, 0, &op);
  {
    const char* why = nullptr;
    if (mla_call_supported(mat, op, MPI_COMM_WORLD, &why))
      local.Fail("mla_call_supported(non-commutative op) = 1");
    else if (!why || !*why)
      local.Fail("mla_call_supported(non-commutative op) = 0 gives no reason");
  }
  for (int count : {1, 9, 101}) {
    std::vector<Mat2> send = RankMatrices(g_rank, count), ref(count), expect(count);
    for (int i = 0; i < count; ++i) {
      Mat2 p = RankMatrices(0, count)[i];
      for (int r = 1; r < g_size; ++r) p = Mul(p, RankMatrices(r, count)[i]);
      expect[i] = p;
    }
    PMPI_Allreduce(send.data(), ref.data(), count, mat, op, MPI_COMM_WORLD);
    if (std::memcmp(ref.data(), expect.data(), count * sizeof(Mat2)) != 0)
      local.Fail(
          "PMPI_Allreduce with the non-commutative op is not the rank-order product "
          "(test bug?)");
    for (const Variant& v : AllVariants(MPI_COMM_WORLD)) {
      std::vector<Mat2> recv(count, Mat2{{9, 9, 9, 9}});
      mla_stats b, a;
      mla_get_stats(&b);
      int rc = Call(v, send.data(), recv.data(), count, mat, op, MPI_COMM_WORLD);
      mla_get_stats(&a);
      std::string what = "non-commutative user op count=" + std::to_string(count) + " " + v.name;
      if (rc != MPI_SUCCESS || std::memcmp(recv.data(), ref.data(), count * sizeof(Mat2)) != 0)
        local.Fail(what + ": result differs from PMPI_Allreduce");
      if (v.kind == Variant::kWith && v.choice.algo != MLA_ALGO_PASSTHROUGH)
        ExpectUnsupported(b, a, v.choice.algo, what, local);
    }
  }
  MPI_Op_free(&op);
  MPI_Type_free(&mat);
  EXPECT_ALL_RANKS_OK(local);
}

// Commutative user op summing floats; valid for MPI_FLOAT and contiguous
// derived types built from floats.
void UserFloatSum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  int tsize = 0;
  MPI_Type_size(*dt, &tsize);
  const long n = static_cast<long>(*len) * tsize / static_cast<long>(sizeof(float));
  const float* a = static_cast<const float*>(in);
  float* b = static_cast<float*>(inout);
  for (long i = 0; i < n; ++i) b[i] = a[i] + b[i];
}

// Open MPI refuses predefined ops (MPI_SUM) on derived datatypes ("MPI_SUM is
// not defined for non-intrinsic datatypes"), as the standard allows, so the
// derived-type tests reduce with a commutative user op of `fn`, and with
// MPI_SUM too where the system MPI accepts it: body(op, its name) for each,
// on `dt` committed.  Frees the op and the type after.
template <typename Body>
void ForEachDerivedTypeOp(MPI_Datatype& dt, MPI_User_function* fn, Body body) {
  MPI_Type_commit(&dt);
  MPI_Op user;
  MPI_Op_create(fn, 1, &user);
  const bool sum = MpiAccepts(dt, MPI_SUM);
  body(user, std::string("commutative user op"));
  if (sum) body(MPI_SUM, std::string("MPI_SUM"));
  MPI_Op_free(&user);
  MPI_Type_free(&dt);
}

TEST(DerivedTypes, ContiguousFloatsRunMultilane) {
  Local local;
  MPI_Datatype vec3;
  MPI_Type_contiguous(3, MPI_FLOAT, &vec3);
  ForEachDerivedTypeOp(vec3, &UserFloatSum, [&](MPI_Op op, const std::string& opname) {
    if (g_size >= 2) {
      const char* why = nullptr;
      if (!mla_call_supported(vec3, op, MPI_COMM_WORLD, &why))
        local.Fail("mla_call_supported(contiguous floats, " + opname + ") = 0: " + (why ? why : ""));
    }
    for (int count : {1, 5, 333}) {
      std::vector<float> send(3 * count), ref(3 * count);
      Rng rng = MakeRng(0x5645433300ULL + count, g_rank);
      for (float& f : send) f = static_cast<float>(Uni(rng, -9, 9));
      PMPI_Allreduce(send.data(), ref.data(), count, vec3, op, MPI_COMM_WORLD);
      for (const Variant& v : AllVariants(MPI_COMM_WORLD)) {
        for (int in_place = 0; in_place <= 1; ++in_place) {
          std::vector<float> recv = in_place ? send : std::vector<float>(3 * count, -0.5f);
          mla_stats b, a;
          mla_get_stats(&b);
          int rc = Call(v, in_place ? MPI_IN_PLACE : send.data(), recv.data(), count, vec3, op, MPI_COMM_WORLD);
          mla_get_stats(&a);
          std::string what = "contiguous(3 x MPI_FLOAT) " + opname + " count=" + std::to_string(count) + " " + v.name +
                             (in_place ? " MPI_IN_PLACE" : "");
          if (rc != MPI_SUCCESS || recv != ref) local.Fail(what + ": wrong result");
          if (v.kind == Variant::kWith && v.choice.algo != MLA_ALGO_PASSTHROUGH) {
            ExpectRanMultilane(b, a, v.choice.algo, MPI_COMM_WORLD, vec3, op, what, local);
            int tsize = 0;
            MPI_Type_size(vec3, &tsize);
            uint64_t db = a.bytes_by_algo[v.choice.algo] - b.bytes_by_algo[v.choice.algo];
            if (mla_enabled() && AlgoCanRun(v.choice.algo, vec3, op, MPI_COMM_WORLD) &&
                db != static_cast<uint64_t>(tsize) * count)
              local.Fail(what + ": bytes_by_algo moved by " + std::to_string(db));
          }
        }
      }
    }
  });
  EXPECT_ALL_RANKS_OK(local);
}

TEST(DerivedTypes, NonContiguousVectorGoesToPmpi) {
  Local local;
  // 2 ints with a hole of one int between them: extent 3 ints.
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  ForEachDerivedTypeOp(vec, &UserVectorSum, [&](MPI_Op op, const std::string& opname) {
    {
      const char* why = nullptr;
      if (mla_call_supported(vec, op, MPI_COMM_WORLD, &why))
        local.Fail("mla_call_supported(MPI_Type_vector, " + opname + ") = 1");
    }
    for (int count : {1, 7, 200}) {
      const int n = 3 * count;
      std::vector<int> send(n), ref(n, -99);
      for (int i = 0; i < n; ++i) send[i] = (i % 3 == 1) ? 777 + g_rank : (g_rank + 1) * (i + 1);
      PMPI_Allreduce(send.data(), ref.data(), count, vec, op, MPI_COMM_WORLD);
      for (int e = 0; e < count; ++e) {
        long s0 = 0, s2 = 0;
        for (int r = 0; r < g_size; ++r) {
          s0 += (r + 1) * (3 * e + 1);
          s2 += (r + 1) * (3 * e + 3);
        }
        if (ref[3 * e] != s0 || ref[3 * e + 2] != s2) {
          local.Fail("PMPI_Allreduce on the vector type gives a wrong sum (test bug?)");
          break;
        }
      }
      for (const Variant& v : AllVariants(MPI_COMM_WORLD)) {
        std::vector<int> recv(n, -99);  // same fill as ref: holes must match too
        mla_stats b, a;
        mla_get_stats(&b);
        int rc = Call(v, send.data(), recv.data(), count, vec, op, MPI_COMM_WORLD);
        mla_get_stats(&a);
        std::string what = "vector(2,1,2,MPI_INT) " + opname + " count=" + std::to_string(count) + " " + v.name;
        if (rc != MPI_SUCCESS || recv != ref) {
          int i = 0;
          while (i < n && recv[i] == ref[i]) ++i;
          local.Fail(what + ": differs from PMPI_Allreduce at int " + std::to_string(i) +
                     (i < n ? ": " + std::to_string(recv[i]) + " vs " + std::to_string(ref[i]) : std::string()));
        }
        if (v.kind == Variant::kWith && v.choice.algo != MLA_ALGO_PASSTHROUGH)
          ExpectUnsupported(b, a, v.choice.algo, what, local);
      }
    }
  });
  EXPECT_ALL_RANKS_OK(local);
}

}  // namespace
}  // namespace mlatest
