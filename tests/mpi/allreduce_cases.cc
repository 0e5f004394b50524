// allreduce_cases.cc: the type cases, variants and case runner of
// allreduce_mpi_test (allreduce_cases.h).

#include "allreduce_cases.h"

#include <algorithm>
#include <cstdio>

namespace mlatest {

namespace {

const std::vector<MPI_Op> kIntOps = {MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                                     MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
const std::vector<MPI_Op> kMultiLangOps = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_BAND, MPI_BOR, MPI_BXOR};
const std::vector<MPI_Op> kFloatOps = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
const std::vector<MPI_Op> kComplexOps = {MPI_SUM, MPI_PROD};
const std::vector<MPI_Op> kLocOps = {MPI_MINLOC, MPI_MAXLOC};

}  // namespace

std::vector<TypeCase> IntegerCases() {
  return {
      Make<IntKind<signed char>>("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, kIntOps),
      Make<IntKind<unsigned char>>("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, kIntOps),
      Make<IntKind<short>>("MPI_SHORT", MPI_SHORT, kIntOps),
      Make<IntKind<unsigned short>>("MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, kIntOps),
      Make<IntKind<int>>("MPI_INT", MPI_INT, kIntOps),
      Make<IntKind<unsigned>>("MPI_UNSIGNED", MPI_UNSIGNED, kIntOps),
      Make<IntKind<long>>("MPI_LONG", MPI_LONG, kIntOps),
      Make<IntKind<unsigned long>>("MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, kIntOps),
      Make<IntKind<long long>>("MPI_LONG_LONG", MPI_LONG_LONG, kIntOps),
      Make<IntKind<unsigned long long>>("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, kIntOps),
      Make<IntKind<int8_t>>("MPI_INT8_T", MPI_INT8_T, kIntOps),
      Make<IntKind<int16_t>>("MPI_INT16_T", MPI_INT16_T, kIntOps),
      Make<IntKind<int32_t>>("MPI_INT32_T", MPI_INT32_T, kIntOps),
      Make<IntKind<int64_t>>("MPI_INT64_T", MPI_INT64_T, kIntOps),
      Make<IntKind<uint8_t>>("MPI_UINT8_T", MPI_UINT8_T, kIntOps),
      Make<IntKind<uint16_t>>("MPI_UINT16_T", MPI_UINT16_T, kIntOps),
      Make<IntKind<uint32_t>>("MPI_UINT32_T", MPI_UINT32_T, kIntOps),
      Make<IntKind<uint64_t>>("MPI_UINT64_T", MPI_UINT64_T, kIntOps),
      Make<IntKind<MPI_Aint>>("MPI_AINT", MPI_AINT, kMultiLangOps),
      Make<IntKind<MPI_Offset>>("MPI_OFFSET", MPI_OFFSET, kMultiLangOps),
      Make<IntKind<MPI_Count>>("MPI_COUNT", MPI_COUNT, kMultiLangOps),
  };
}

std::vector<TypeCase> ByteBoolCases() {
  return {
      Make<IntKind<unsigned char>>("MPI_BYTE", MPI_BYTE, {MPI_BAND, MPI_BOR, MPI_BXOR}),
      Make<BoolKind>("MPI_C_BOOL", MPI_C_BOOL, {MPI_LAND, MPI_LOR, MPI_LXOR}),
  };
}

std::vector<TypeCase> FloatCases() {
  return {
      Make<FloatKind<float>>("MPI_FLOAT", MPI_FLOAT, kFloatOps),
      Make<FloatKind<double>>("MPI_DOUBLE", MPI_DOUBLE, kFloatOps),
      Make<FloatKind<long double>>("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, kFloatOps),
  };
}

std::vector<TypeCase> ComplexCases() {
  return {
      Make<ComplexKind<float>>("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, kComplexOps),
      Make<ComplexKind<double>>("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, kComplexOps),
      Make<ComplexKind<long double>>("MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, kComplexOps),
  };
}

std::vector<TypeCase> PairCases() {
  return {
      Make<PairKind<int>>("MPI_2INT", MPI_2INT, kLocOps),
      Make<PairKind<float>>("MPI_FLOAT_INT", MPI_FLOAT_INT, kLocOps),
      Make<PairKind<double>>("MPI_DOUBLE_INT", MPI_DOUBLE_INT, kLocOps),
      Make<PairKind<long>>("MPI_LONG_INT", MPI_LONG_INT, kLocOps),
      Make<PairKind<short>>("MPI_SHORT_INT", MPI_SHORT_INT, kLocOps),
      Make<PairKind<long double>>("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, kLocOps),
  };
}

bool MpiAccepts(MPI_Datatype dt, MPI_Op op) {
  static MPI_Comm probe = MPI_COMM_NULL;
  if (probe == MPI_COMM_NULL) {
    MPI_Comm_dup(MPI_COMM_SELF, &probe);
    MPI_Comm_set_errhandler(probe, MPI_ERRORS_RETURN);
  }
  alignas(64) unsigned char in[64] = {0}, out[64] = {0};
  return PMPI_Allreduce(in, out, 1, dt, op, probe) == MPI_SUCCESS;
}

void UserVectorSum(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int e = 0; e < *len; ++e) {
    b[3 * e] += a[3 * e];
    b[3 * e + 2] += a[3 * e + 2];
  }
}

std::string ChoiceName(const mla_choice& c) {
  std::ostringstream o;
  o << mla_algo_name(c.algo) << "(lanes=" << c.lanes << ",chunk=" << c.chunk_bytes << ")";
  return o.str();
}

mla_choice MakeChoice(mla_algo algo, int lanes, uint64_t chunk) {
  mla_choice c;
  std::memset(&c, 0, sizeof c);
  c.algo = algo;
  c.lanes = lanes;
  c.chunk_bytes = chunk;
  return c;
}

Variant With(mla_algo algo, int lanes, uint64_t chunk) {
  Variant v{Variant::kWith, MakeChoice(algo, lanes, chunk), ""};
  v.name = "mla_allreduce_with " + ChoiceName(v.choice);
  return v;
}

namespace {
constexpr uint64_t kSmallChunk = 100;  // bytes; not a multiple of most extents
}  // namespace

std::vector<Variant> AllVariants(MPI_Comm comm, bool tiny_chunk) {
  int rpn = MinRanksPerNode(comm);
  int fewer = std::max(1, rpn / 2);
  std::vector<Variant> vs;
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) {
    mla_algo algo = static_cast<mla_algo>(a);
    vs.push_back(With(algo, 0, 0));
    vs.push_back(With(algo, fewer, 0));
    vs.push_back(With(algo, 0, kSmallChunk));
    if (algo == MLA_ALGO_LANE) vs.push_back(With(algo, fewer, kSmallChunk));
  }
  if (tiny_chunk) {
    vs.push_back(With(MLA_ALGO_LANE, 0, 1));
    vs.push_back(With(MLA_ALGO_SPLIT, 0, 1));
  }
  vs.push_back(Variant{Variant::kIntercepted, {}, "MPI_Allreduce (intercepted)"});
  vs.push_back(Variant{Variant::kMlaAllreduce, {}, "mla_allreduce"});
  return vs;
}

std::vector<Variant> MultilaneVariants() {
  return {With(MLA_ALGO_LANE, 0, 0), With(MLA_ALGO_HIER, 0, 0), With(MLA_ALGO_SPLIT, 0, 0)};
}

int Call(const Variant& v, const void* s, void* r, int n, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  switch (v.kind) {
    case Variant::kWith:
      return mla_allreduce_with(s, r, n, dt, op, comm, &v.choice);
    case Variant::kIntercepted:
      return MPI_Allreduce(s, r, n, dt, op, comm);
    case Variant::kMlaAllreduce:
      return mla_allreduce(s, r, n, dt, op, comm);
  }
  return MPI_ERR_OTHER;
}

int VariantAlgo(const Variant& v) {
  return v.kind == Variant::kWith ? static_cast<int>(v.choice.algo) : InterceptedAlgo();
}

std::string CheckStatsDelta(const mla_stats& b, const mla_stats& a, int algo, bool can_run, MPI_Datatype dt,
                            int count) {
  if (!mla_enabled()) return "";
  std::ostringstream o;
  if (a.calls - b.calls != 1) o << "calls moved by " << (a.calls - b.calls) << " (want 1); ";
  if (algo < 0) return o.str();
  int tsize = 0;
  MPI_Type_size(dt, &tsize);
  uint64_t bytes = static_cast<uint64_t>(tsize) * static_cast<uint64_t>(count);
  auto d_algo = [&](int k) { return a.calls_by_algo[k] - b.calls_by_algo[k]; };
  auto d_bytes = [&](int k) { return a.bytes_by_algo[k] - b.bytes_by_algo[k]; };
  uint64_t d_unsup = a.unsupported - b.unsupported;
  if (algo == MLA_ALGO_PASSTHROUGH || can_run) {
    if (d_algo(algo) != 1 || d_unsup != 0)
      o << "want " << mla_algo_name(static_cast<mla_algo>(algo)) << "+1 unsupported+0, got "
        << mla_algo_name(static_cast<mla_algo>(algo)) << "+" << d_algo(algo) << " unsupported+" << d_unsup << "; ";
    else if (d_bytes(algo) != bytes)
      o << "bytes_by_algo[" << mla_algo_name(static_cast<mla_algo>(algo)) << "] moved by " << d_bytes(algo) << " (want "
        << bytes << "); ";
  } else {
    if (d_unsup != 1 || d_algo(algo) != 0)
      o << "want unsupported+1 (call goes to PMPI), got unsupported+" << d_unsup << " "
        << mla_algo_name(static_cast<mla_algo>(algo)) << "+" << d_algo(algo) << "; ";
  }
  return o.str();
}

void ExpectRanMultilane(const mla_stats& b, const mla_stats& a, mla_algo algo, MPI_Comm comm, MPI_Datatype dt,
                        MPI_Op op, const std::string& what, Local& local) {
  if (!mla_enabled()) return;
  uint64_t d_algo = a.calls_by_algo[algo] - b.calls_by_algo[algo];
  uint64_t d_uns = a.unsupported - b.unsupported;
  if (AlgoCanRun(algo, dt, op, comm)) {
    if (d_algo != 1 || d_uns != 0)
      local.Fail(what + ": must run " + mla_algo_name(algo) + " (want " + mla_algo_name(algo) +
                 "+1 unsupported+0, got +" + std::to_string(d_algo) + " unsupported+" + std::to_string(d_uns) + ")");
  } else if (d_uns != 1 || d_algo != 0) {
    local.Fail(what + ": cannot run here (layout or one rank): want unsupported+1, got +" + std::to_string(d_uns));
  }
}

void ExpectUnsupported(const mla_stats& b, const mla_stats& a, mla_algo algo, const std::string& what, Local& local) {
  if (!mla_enabled()) return;
  uint64_t d_algo = a.calls_by_algo[algo] - b.calls_by_algo[algo];
  uint64_t d_uns = a.unsupported - b.unsupported;
  if (d_uns != 1 || d_algo != 0)
    local.Fail(what + ": must go to PMPI_Allreduce as unsupported (want unsupported+1 " + mla_algo_name(algo) +
               "+0, got unsupported+" + std::to_string(d_uns) + " +" + std::to_string(d_algo) + ")");
}

void RunCase(MPI_Comm comm, const TypeCase& tc, MPI_Op op, int count, const std::vector<Variant>& variants,
             const CaseOptions& opt, Local& local) {
  const size_t bytes = tc.extent * static_cast<size_t>(count);
  Rng rng = MakeRng(opt.salt ^ HashString(tc.name) ^ (HashString(OpName(op)) << 1) ^
                        static_cast<uint64_t>(count) * 0x9e3779b97f4a7c15ULL,
                    CommRank(comm));
  Buf send(bytes);
  send.FillRandom(rng);  // padding bytes stay random
  tc.fill(op, rng, send.data(), count);
  const Buf send_copy(send);

  Buf ref(bytes);
  ref.FillRandom(rng);
  int rc = PMPI_Allreduce(send.data(), ref.data(), count, tc.type, op, comm);
  if (rc != MPI_SUCCESS) {
    local.Fail("PMPI_Allreduce reference failed for " + tc.name);
    return;
  }
  bool can_run[MLA_ALGO_COUNT];
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) can_run[a] = AlgoCanRun(a, tc.type, op, comm);
  const std::string where = tc.name + " " + OpName(op) + " count=" + std::to_string(count) + " comm=" + CommName(comm);

  for (const Variant& v : variants) {
    for (int in_place = 0; in_place <= (opt.in_place ? 1 : 0); ++in_place) {
      Buf recv(bytes);
      if (in_place)
        recv = send;
      else
        recv.Fill(0xCD);
      mla_stats before, after;
      mla_get_stats(&before);
      rc = Call(v, in_place ? MPI_IN_PLACE : send.data(), recv.data(), count, tc.type, op, comm);
      mla_get_stats(&after);
      std::string what = where + " " + v.name + (in_place ? " MPI_IN_PLACE" : "");
      if (rc != MPI_SUCCESS) {
        local.Fail(what + ": returned " + std::to_string(rc));
        continue;
      }
      for (int i = 0; i < count; ++i) {
        const unsigned char* got = recv.data() + i * tc.extent;
        const unsigned char* want = ref.data() + i * tc.extent;
        if (!tc.equal(got, want)) {
          local.Fail(what + ": element " + std::to_string(i) + " is " + tc.show(got) + ", PMPI_Allreduce gives " +
                     tc.show(want));
          break;
        }
      }
      if (!in_place && !send.SameBytes(send_copy)) local.Fail(what + ": sendbuf was modified");
      if (opt.check_stats && count > 0) {
        const int algo = VariantAlgo(v);
        std::string s = CheckStatsDelta(before, after, algo, algo >= 0 && can_run[algo], tc.type, count);
        if (!s.empty()) local.Fail(what + ": stats: " + s);
      }
    }
  }
}

namespace {

// The ops of `tc` that RunTypeMatrix runs: all of them, or with
// MLA_TEST_TYPE_MATRIX=cover (layouts of more than 2 ranks, slow where ranks
// outnumber cores) a covering set: each op the first time a type offers it,
// else one op per type in turn, so every type and every op still runs.
std::vector<MPI_Op> OpsToRun(const TypeCase& tc, size_t index, std::vector<MPI_Op>* done) {
  const char* mode = std::getenv("MLA_TEST_TYPE_MATRIX");
  if (mode == nullptr || std::string(mode) != "cover" || tc.ops.empty()) return tc.ops;
  std::vector<MPI_Op> ops;
  for (MPI_Op op : tc.ops)
    if (std::find(done->begin(), done->end(), op) == done->end()) ops.push_back(op);
  if (ops.empty()) ops.push_back(tc.ops[index % tc.ops.size()]);
  done->insert(done->end(), ops.begin(), ops.end());
  return ops;
}

}  // namespace

void RunTypeMatrix(const std::vector<TypeCase>& cases, MPI_Comm comm, int count, Local& local) {
  std::vector<Variant> variants = AllVariants(comm, /*tiny_chunk=*/true);
  std::vector<MPI_Op> done;
  for (size_t index = 0; index < cases.size(); ++index) {
    const TypeCase& tc = cases[index];
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(tc.type, &lb, &extent);
    if (static_cast<size_t>(extent) != tc.extent) {
      local.Fail(tc.name + ": MPI extent " + std::to_string(extent) + " != sizeof " + std::to_string(tc.extent) +
                 " (test bug)");
      continue;
    }
    for (MPI_Op op : OpsToRun(tc, index, &done)) {
      if (!MpiAccepts(tc.type, op)) {
        if (g_rank == 0)
          std::printf("[   INFO   ] system MPI rejects %s with %s: skipped\n", tc.name.c_str(), OpName(op).c_str());
        continue;
      }
      // Predefined types with predefined ops are what the library is for:
      // they must be supported on every intracommunicator of 2 or more ranks.
      if (!IsInter(comm) && CommSize(comm) >= 2 && !mla_call_supported(tc.type, op, comm, nullptr)) {
        const char* why = "";
        mla_call_supported(tc.type, op, comm, &why);
        local.Fail(tc.name + " " + OpName(op) + ": mla_call_supported says 0 (" + std::string(why ? why : "") + ")");
      }
      RunCase(comm, tc, op, count, variants, CaseOptions{}, local);
    }
  }
}
}  // namespace mlatest
