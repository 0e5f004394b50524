// allreduce_bench.cc: mlallreduce_bench, the allreduce benchmark of multilane.
//
// For each message size it times the system MPI (PMPI_Allreduce, the "mpi"
// baseline) and each requested libmlallreduce algorithm side by side, checks
// the results, and prints one row per (size, algorithm) in the style of
// nccl-tests.  docs/mlallreduce_bench.md describes the options and the columns.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/memkind.h"
#include "mlallreduce.h"
#include "benchmarks/options.h"
#ifdef MLABENCH_HAVE_SYSALGO
#include "sysalgo/system_allreduce.h"
#endif
#include "benchmarks/validate.h"
#include "vocab/mpi_families.h"
#include "vocab/utc_time.h"

extern char** environ;

namespace mlabench {
namespace {

// Everything the benchmark's own communication uses goes through PMPI_* or
// calls the library does not intercept, so that the library's counters and
// decisions see only the measured calls.
const MPI_Comm kComm = MPI_COMM_WORLD;

// What the run knows about itself (the output header and the JSON metadata).
struct RunInfo {
  int rank = 0;
  int nranks = 1;
  int local_rank = 0;  // rank on its physical host
  mla_layout layout{};
  bool layout_ok = false;
  int hosts = 1;            // physical hosts (MPI_COMM_TYPE_SHARED)
  std::string host_ranges;  // "a (ranks 0-3), b (ranks 4-7)", rank 0 only
  std::string mpi_version;  // first line of MPI_Get_library_version
  std::string hostname;
  std::string date;  // UTC, ISO 8601
  std::string command_line;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> variables;  // MULTILANE_*, sorted
  bool variables_consistent = true;
  bool library_enabled = false;
  std::string library_version;
  bool supported = false;  // mla_call_supported for (type, op, comm)
  std::string unsupported_reason;
  std::string memory;             // MemKind::describe()
  std::string system_algorithms;  // "Open MPI coll/tuned: ring ...": what mpi:NAME can name
};

// One row of the table.
struct Row {
  uint64_t bytes = 0;
  uint64_t count = 0;
  std::string algo;
  int iters = 0;
  int warmup = 0;
  double time_us = 0;
  double algbw = 0;
  double busbw = 0;
  bool checked = false;
  uint64_t wrong = 0;
  bool has_vs_mpi = false;
  double vs_mpi = 0;
  bool has_vs_best = false;
  double vs_best = 0;        // algbw ratio to the mpi-best row of the same size
  std::string ran_as;        // what the library's counters say ran (mpi-best: which mpi row won)
  uint64_t calls = 0;        // calls the library counted (checked + warm-up + timed)
  uint64_t unsupported = 0;  // of which went to PMPI_Allreduce as unsupported
};

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-+=/.,:@%") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::vector<std::pair<std::string, std::string>> multilane_variables() {
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = environ; e && *e; ++e) {
    if (strncmp(*e, "MULTILANE_", 10) != 0) continue;
    const char* eq = strchr(*e, '=');
    if (!eq) continue;
    vars.emplace_back(std::string(*e, eq - *e), std::string(eq + 1));
  }
  std::sort(vars.begin(), vars.end());
  return vars;
}

// Same value on every rank of comm?
bool same_on_all_ranks(uint64_t v, MPI_Comm comm = kComm) {
  uint64_t in[2] = {v, ~v}, out[2];
  PMPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, comm);
  return out[0] == ~out[1];  // max == min
}

// Broadcasts bytes from rank 0 in pieces that fit an int count.
void bcast_bytes(void* p, size_t bytes, MPI_Comm comm = kComm) {
  const size_t kPiece = size_t{1} << 30;
  for (size_t off = 0; off < bytes; off += kPiece) {
    size_t n = std::min(kPiece, bytes - off);
    MPI_Bcast(static_cast<char*>(p) + off, static_cast<int>(n), MPI_BYTE, 0, comm);
  }
}

// Size and rank of a communicator that may be MPI_COMM_NULL (1 and 0 then).
int comm_size(MPI_Comm comm) {
  int n = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &n);
  return n;
}
int comm_rank(MPI_Comm comm) {
  int r = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &r);
  return r;
}

// Hostnames of all ranks as "host (ranks a-b), ..." (rank 0 gets the text).
std::string gather_host_ranges(const RunInfo& info, int* hosts) {
  const int kLen = 256;
  char mine[kLen] = {0};
  snprintf(mine, kLen, "%s", info.hostname.c_str());
  std::vector<char> all(info.rank == 0 ? static_cast<size_t>(kLen) * info.nranks : 1);
  MPI_Gather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, 0, kComm);

  int leader = info.local_rank == 0, nleaders = 0;
  PMPI_Allreduce(&leader, &nleaders, 1, MPI_INT, MPI_SUM, kComm);
  *hosts = nleaders;

  if (info.rank != 0) return "";
  std::string text;
  int start = 0;
  for (int r = 1; r <= info.nranks; ++r) {
    if (r < info.nranks && strcmp(&all[r * kLen], &all[start * kLen]) == 0) continue;
    if (!text.empty()) text += ", ";
    text += &all[start * kLen];
    text += r - 1 == start ? " (rank " + std::to_string(start) + ")"
                           : " (ranks " + std::to_string(start) + "-" + std::to_string(r - 1) + ")";
    start = r;
  }
  return text;
}

// This rank's rank among the ranks of its host, and their number (*local_size).
int local_rank_of(int rank, int* local_size) {
  MPI_Comm shared;
  MPI_Comm_split_type(kComm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  int local = 0;
  MPI_Comm_rank(shared, &local);
  MPI_Comm_size(shared, local_size);
  MPI_Comm_free(&shared);
  return local;
}

// The benchmark's buffers and the host view of them.
struct Buffers {
  MemKind* kind = nullptr;
  std::unique_ptr<Buffer> send, recv;
  std::vector<unsigned char> stage;  // only when the kind is not host-accessible

  // A host pointer to the first bytes of buf (staged when needed; valid until
  // the next call).
  const void* host_view(const Buffer& buf, size_t bytes) {
    if (kind->host_accessible()) return buf.get();
    kind->to_host(stage.data(), buf.get(), bytes);
    return stage.data();
  }

  void fill_send(const Reference& ref, size_t count, size_t bytes) {
    if (kind->host_accessible()) {
      ref.fill(send->get(), count);
    } else {
      ref.fill(stage.data(), count);
      kind->to_device(send->get(), stage.data(), bytes);
    }
  }
};

// The measured call for one algorithm.
struct Caller {
  AlgoSpec spec;
  mla_choice choice{};
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  DataType dtype = DataType::kFloat;
  RedOp redop = RedOp::kSum;
  MemKind* kind = nullptr;
  MPI_Comm per_gpu = MPI_COMM_NULL;  // one rank per GPU, for mpi-1pg and nccl
  MPI_Comm system = MPI_COMM_NULL;   // mpi:NAME: the communicator its algorithm runs on
  mutable std::string why;           // why a call failed, when the kind knows

  // Whether this rank takes part in the call (mpi-1pg and nccl: GPU leaders).
  bool participates() const {
    if (spec.kind == AlgoSpec::Kind::kMpiPerGpu || spec.kind == AlgoSpec::Kind::kNccl) return per_gpu != MPI_COMM_NULL;
    return true;
  }

  int operator()(const void* send, void* recv, int count) const {
    switch (spec.kind) {
      case AlgoSpec::Kind::kMpi:
        return kind->system_allreduce(send, recv, count, type, op, kComm);
      case AlgoSpec::Kind::kMpiAlgo:
        return kind->system_allreduce(send, recv, count, type, op, system);
      case AlgoSpec::Kind::kMpiBest:
        return MPI_ERR_OTHER;  // run_best measures its parts
      case AlgoSpec::Kind::kAuto:
        return mla_allreduce(send, recv, count, type, op, kComm);
      case AlgoSpec::Kind::kMpiPerGpu:
        return kind->system_allreduce(send, recv, count, type, op, per_gpu);
      case AlgoSpec::Kind::kNccl: {
        int rc = kind->nccl_allreduce(send, recv, count, dtype, redop, per_gpu, &why);
        if (spec.blocking) kind->synchronize();
        return rc;
      }
      case AlgoSpec::Kind::kLibrary:
        break;
    }
    return mla_allreduce_with(send, recv, count, type, op, kComm, &choice);
  }
};

// The system MPI's own algorithms (mpi:NAME, mpi-best); none in the
// simulation build, which has no MPI_T.
#ifdef MLABENCH_HAVE_SYSALGO
using SystemAllreduce = mlsys::SystemAllreduce;
#else
struct SystemAllreduce {
  const std::vector<std::string>& names() const { return none_; }
  std::string why_none() const { return "this build has no access to the system's algorithms (MPI_T)"; }
  std::string mechanism() const { return ""; }
  bool Applies(const std::string&, long, long, int, bool) const { return false; }
  MPI_Comm Select(const std::string&, MPI_Comm, std::string* error) {
    *error = why_none();
    return MPI_COMM_NULL;
  }
  void Release() {}
  std::vector<std::string> none_;
};
#endif

class Bench {
 public:
  Bench(const Options& opt, RunInfo& info, Buffers& bufs, MPI_Comm per_gpu, SystemAllreduce& system)
      : opt_(opt),
        info_(info),
        bufs_(bufs),
        system_(system),
        ref_(opt.type, opt.op, info.nranks, info.rank),
        per_gpu_ref_(opt.type, opt.op, comm_size(per_gpu), comm_rank(per_gpu)),
        per_gpu_(per_gpu),
        esize_(type_size(opt.type)) {}

  // Runs every size and algorithm, printing rows as each size completes;
  // `notes` start the run's notes.  Returns the total number of wrong values
  // (0 when unchecked).
  uint64_t run(const std::vector<std::string>& notes);

  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  Caller make_caller(const AlgoSpec& spec) const;
  Row run_one(const AlgoSpec& spec, uint64_t count, int iters, int warmup);
  Row run_best(const AlgoSpec& spec, uint64_t count, int iters, int warmup, size_t first);
  uint64_t check_call(size_t count, const Reference& ref, MPI_Comm comm);
  double time_batch(const Caller& call, int n, size_t bytes, int iters, int warmup, bool active, int* failed);
  void count_calls(const AlgoSpec& spec, const mla_stats& before, const mla_stats& after, Row* row);
  void make_notes(size_t nsizes);
  void print_group(size_t first);

  const Options& opt_;
  RunInfo& info_;
  Buffers& bufs_;
  SystemAllreduce& system_;
  Reference ref_;
  Reference per_gpu_ref_;  // data and results of mpi-1pg and nccl (GPU leaders)
  MPI_Comm per_gpu_;
  size_t esize_;
  std::vector<Row> rows_;
  std::vector<std::string> notes_;
};

// The wrong values of the last call's result (compared with rank 0's too
// where the ranks disagree) plus the send elements it changed (then
// written again, to keep later runs meaningful).  Collective over comm.
uint64_t Bench::check_call(size_t count, const Reference& ref, MPI_Comm comm) {
  const size_t bytes = count * esize_;
  uint64_t changed = ref.count_send_changed(bufs_.host_view(*bufs_.send, bytes), count);
  if (changed) bufs_.fill_send(ref, count, bytes);
  const void* res = bufs_.host_view(*bufs_.recv, bytes);
  if (same_on_all_ranks(hash_bytes(res, bytes), comm)) return changed + ref.count_wrong(res, nullptr, count);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<unsigned char> rank0(bytes);
  if (rank == 0) memcpy(rank0.data(), res, bytes);
  bcast_bytes(rank0.data(), bytes, comm);
  return changed + ref.count_wrong(res, rank0.data(), count);
}

// `warmup` untimed calls, then `iters` timed ones, on the ranks `active`
// (every rank meets at the barrier); returns the slowest rank's mean
// seconds per call and adds the calls that failed to *failed.
double Bench::time_batch(const Caller& call, int n, size_t bytes, int iters, int warmup, bool active, int* failed) {
  MemKind* kind = bufs_.kind;
  void* send = bufs_.send->get();
  void* recv = bufs_.recv->get();
  if (active) {
    kind->set_bytes(recv, kPoisonByte, bytes);
    for (int i = 0; i < warmup; ++i) *failed += call(send, recv, n) != MPI_SUCCESS;
    kind->synchronize();
  }
  MPI_Barrier(kComm);
  double t0 = MPI_Wtime();
  if (active) {
    for (int i = 0; i < iters; ++i) *failed += call(send, recv, n) != MPI_SUCCESS;
    kind->synchronize();
  }
  double mean = active ? (MPI_Wtime() - t0) / iters : 0, max_mean = 0;
  PMPI_Allreduce(&mean, &max_mean, 1, MPI_DOUBLE, MPI_MAX, kComm);
  return max_mean;
}

void Bench::count_calls(const AlgoSpec& spec, const mla_stats& before, const mla_stats& after, Row* row) {
  if (spec.kind == AlgoSpec::Kind::kMpi || spec.kind == AlgoSpec::Kind::kMpiPerGpu ||
      spec.kind == AlgoSpec::Kind::kNccl || spec.kind == AlgoSpec::Kind::kMpiAlgo) {
    row->ran_as = spec.name;
    return;
  }
  row->calls = after.calls - before.calls;
  row->unsupported = after.unsupported - before.unsupported;
  std::string ran;
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) {
    uint64_t n = after.calls_by_algo[a] - before.calls_by_algo[a];
    if (n == 0) continue;
    if (!ran.empty()) ran += "+";
    ran += mla_algo_name(static_cast<mla_algo>(a));
    if (n != row->calls) ran += "(" + std::to_string(n) + ")";
  }
  row->ran_as = ran.empty() ? "?" : ran;
}

namespace {
std::string size_list(const std::vector<uint64_t>& sizes, size_t nsizes) {
  if (sizes.size() == nsizes) return "at every size";
  std::string text = "at";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : " ") + std::to_string(sizes[i]);
  return text + " B";
}
}  // namespace

void Bench::make_notes(size_t nsizes) {
  for (const AlgoSpec& spec : opt_.algos) {
    if (spec.kind == AlgoSpec::Kind::kMpi || spec.kind == AlgoSpec::Kind::kMpiPerGpu ||
        spec.kind == AlgoSpec::Kind::kNccl || spec.kind == AlgoSpec::Kind::kMpiAlgo)
      continue;
    std::vector<uint64_t> all_unsupported, uncounted;
    std::string auto_line;
    std::string last_choice;
    uint64_t first = 0, last = 0;
    auto flush_auto = [&]() {
      if (last_choice.empty()) return;
      auto_line += (auto_line.empty() ? "" : ", ") + last_choice + " (" + std::to_string(first) +
                   (first == last ? "" : " .. " + std::to_string(last)) + " B)";
    };
    for (const Row& r : rows_) {
      if (r.algo != spec.name) continue;
      const std::string where = spec.name + " at " + std::to_string(r.bytes) + " B: ";
      if (r.calls == 0 && spec.kind != AlgoSpec::Kind::kMpiBest) {
        uncounted.push_back(r.bytes);
      } else if (spec.kind == AlgoSpec::Kind::kAuto || spec.kind == AlgoSpec::Kind::kMpiBest) {
        if (r.ran_as != last_choice) {
          flush_auto();
          last_choice = r.ran_as;
          first = r.bytes;
        }
        last = r.bytes;
      } else if (r.unsupported == r.calls) {
        all_unsupported.push_back(r.bytes);
      } else if (r.unsupported > 0) {
        notes_.push_back(where + std::to_string(r.unsupported) + " of " + std::to_string(r.calls) +
                         " calls went to PMPI_Allreduce as unsupported");
      } else if (r.ran_as != spec.name) {
        notes_.push_back(where + "the library's counters say it ran as " + r.ran_as);
      }
    }
    flush_auto();
    if (!auto_line.empty()) notes_.push_back(spec.name + " ran: " + auto_line);
    if (!all_unsupported.empty())
      notes_.push_back(spec.name + ": every call went to PMPI_Allreduce as unsupported " +
                       size_list(all_unsupported, nsizes) +
                       (info_.unsupported_reason.empty() ? "" : " (" + info_.unsupported_reason + ")"));
    if (!uncounted.empty())
      notes_.push_back(spec.name + ": mla_get_stats counted no calls " + size_list(uncounted, nsizes));
  }
}

Caller Bench::make_caller(const AlgoSpec& spec) const {
  Caller call;
  call.spec = spec;
  call.choice.algo = spec.algo;
  call.choice.lanes = opt_.lanes;
  call.choice.chunk_bytes = opt_.chunk_bytes;
  call.choice.transport = spec.transport;
  call.type = mpi_datatype(opt_.type);
  call.op = mpi_op(opt_.op);
  call.dtype = opt_.type;
  call.redop = opt_.op;
  call.kind = bufs_.kind;
  call.per_gpu = per_gpu_;
  if (spec.kind == AlgoSpec::Kind::kMpiAlgo) {
    std::string error;
    call.system = system_.Select(spec.system_algo, kComm, &error);
    if (call.system == MPI_COMM_NULL) call.why = error;
  }
  return call;
}

Row Bench::run_one(const AlgoSpec& spec, uint64_t count, int iters, int warmup) {
  const Caller call = make_caller(spec);
  const size_t bytes = count * esize_;
  Row row;
  row.bytes = bytes;
  row.count = count;
  row.algo = spec.name;
  row.checked = opt_.check;
  if (spec.kind == AlgoSpec::Kind::kMpiAlgo && call.system == MPI_COMM_NULL) {
    // The MPI refused the choice (checked at the start; rare): no call is made.
    if (info_.rank == 0)
      fprintf(stderr, "mlallreduce_bench: %s at %zu B: %s\n", spec.name.c_str(), bytes, call.why.c_str());
    row.wrong = count;
    return row;
  }
  // mpi-1pg and nccl run on one rank per GPU, with their own data; the other
  // ranks wait at the barriers.
  const bool per_gpu_row = spec.kind == AlgoSpec::Kind::kMpiPerGpu || spec.kind == AlgoSpec::Kind::kNccl;
  const bool active = call.participates();
  const Reference& ref = per_gpu_row ? per_gpu_ref_ : ref_;
  const MPI_Comm comm = per_gpu_row ? (active ? per_gpu_ : MPI_COMM_SELF) : kComm;
  const int comm_ranks = per_gpu_row ? comm_size(per_gpu_) : info_.nranks;
  const int n = static_cast<int>(count);

  mla_stats before, after;
  mla_get_stats(&before);
  uint64_t wrong = 0;
  int failed_calls = 0;
  if (per_gpu_row && active) bufs_.fill_send(ref, count, bytes);

  // One checked call, outside the timed loop; its time sizes the batch (-T).
  double t_checked = 0;
  if (active) {
    bufs_.kind->set_bytes(bufs_.recv->get(), kPoisonByte, bytes);
    bufs_.kind->synchronize();
    double t = MPI_Wtime();
    failed_calls += call(bufs_.send->get(), bufs_.recv->get(), n) != MPI_SUCCESS;
    bufs_.kind->synchronize();
    t_checked = MPI_Wtime() - t;
    if (opt_.check) wrong += check_call(count, ref, comm);
  }
  if (opt_.batch_seconds > 0) {
    double t_max = 0;
    PMPI_Allreduce(&t_checked, &t_max, 1, MPI_DOUBLE, MPI_MAX, kComm);
    if (t_max > 0) {
      const double fit = opt_.batch_seconds / t_max;
      if (fit < iters) iters = std::max(3, static_cast<int>(fit));
      warmup = std::min(warmup, std::max(1, iters / 10));
    }
  }
  row.iters = iters;
  row.warmup = warmup;
  const double max_mean = time_batch(call, n, bytes, iters, warmup, active, &failed_calls);
  mla_get_stats(&after);

  // The last timed result too.
  if (opt_.check && active) wrong += check_call(count, ref, comm);
  if (failed_calls) {
    fprintf(stderr, "mlallreduce_bench: rank %d: %d calls of %s at %zu B returned an MPI error%s%s\n", info_.rank,
            failed_calls, spec.name.c_str(), bytes, call.why.empty() ? "" : ": ", call.why.c_str());
    wrong += count;
  }
  uint64_t total_wrong = 0;
  PMPI_Allreduce(&wrong, &total_wrong, 1, MPI_UINT64_T, MPI_SUM, kComm);
  if (per_gpu_row && active) bufs_.fill_send(ref_, count, bytes);  // back to the run's data

  row.time_us = max_mean * 1e6;
  row.algbw = max_mean > 0 ? static_cast<double>(bytes) / max_mean / 1e9 : 0;
  row.busbw = row.algbw * 2.0 * (comm_ranks - 1) / comm_ranks;
  row.wrong = total_wrong;
  count_calls(spec, before, after, &row);
  if (spec.kind == AlgoSpec::Kind::kMpiAlgo) system_.Release();
  return row;
}

// mpi-best: each of the system's algorithms that applies at this size,
// measured (and checked) as mpi:NAME, beside this size's mpi row when the
// run has one; the fastest gives the row, ran_as says which, and #wrong
// counts every algorithm's wrong values.
Row Bench::run_best(const AlgoSpec& spec, uint64_t count, int iters, int warmup, size_t first) {
  Row best;
  bool have = false;
  uint64_t wrong = 0;
  for (size_t i = first; i < rows_.size(); ++i)
    if (rows_[i].algo == "mpi" && rows_[i].time_us > 0) {
      best = rows_[i];
      have = true;
    }
  for (const std::string& name : system_.names()) {
    if (!system_.Applies(name, static_cast<long>(count), static_cast<long>(count * esize_), info_.nranks, true))
      continue;
    AlgoSpec one;
    one.kind = AlgoSpec::Kind::kMpiAlgo;
    one.system_algo = name;
    one.name = "mpi:" + name;
    Row r = run_one(one, count, iters, warmup);
    wrong += r.wrong;
    if (!have || (r.time_us > 0 && r.time_us < best.time_us)) {
      best = r;
      have = true;
    }
  }
  best.algo = spec.name;
  best.ran_as = have ? best.ran_as : "-";
  best.wrong = wrong;  // the mpi row counts its own
  best.has_vs_mpi = false;
  return best;
}

void print_table_header() {
  printf("#\n");
  printf("#%11s %12s %7s %6s %12s %11s %8s %8s %7s %7s %7s\n", "size", "count", "type", "redop", "algo", "time_us",
         "algbw", "busbw", "#wrong", "vs_mpi", "vs_best");
  printf("#%11s %12s %7s %6s %12s %11s %8s %8s %7s %7s %7s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
         "(GB/s)", "", "(x)", "(x)");
}

void Bench::print_group(size_t first) {
  // vs_mpi: busbw ratio to the mpi row of the same size (equal to the algbw
  // ratio, which stays defined on one rank where busbw is 0).
  // vs_best: the same against the mpi-best row (the system's best).
  const Row *mpi = nullptr, *best = nullptr;
  for (size_t i = first; i < rows_.size(); ++i) {
    if (rows_[i].algo == "mpi") mpi = &rows_[i];
    if (rows_[i].algo == "mpi-best") best = &rows_[i];
  }
  for (size_t i = first; i < rows_.size(); ++i) {
    Row& r = rows_[i];
    if (mpi && mpi->algbw > 0) {
      r.has_vs_mpi = true;
      r.vs_mpi = r.algbw / mpi->algbw;
    }
    if (best && best->algbw > 0) {
      r.has_vs_best = true;
      r.vs_best = r.algbw / best->algbw;
    }
  }
  if (info_.rank != 0) return;
  for (size_t i = first; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    char wrong[32], vs[32], vs_best[32];
    if (r.checked)
      snprintf(wrong, sizeof wrong, "%" PRIu64, r.wrong);
    else
      snprintf(wrong, sizeof wrong, "N/A");
    if (r.has_vs_mpi)
      snprintf(vs, sizeof vs, "%.2f", r.vs_mpi);
    else
      snprintf(vs, sizeof vs, "-");
    if (r.has_vs_best)
      snprintf(vs_best, sizeof vs_best, "%.2f", r.vs_best);
    else
      snprintf(vs_best, sizeof vs_best, "-");
    printf("%12" PRIu64 " %12" PRIu64 " %7s %6s %12s %11.2f %8.3f %8.3f %7s %7s %7s\n", r.bytes, r.count,
           type_name(opt_.type), op_name(opt_.op), r.algo.c_str(), r.time_us, r.algbw, r.busbw, wrong, vs, vs_best);
  }
  fflush(stdout);
}

uint64_t Bench::run(const std::vector<std::string>& notes) {
  notes_ = notes;
  std::vector<uint64_t> counts;
  for (uint64_t size = opt_.min_bytes;; size *= opt_.factor) {
    counts.push_back(size / esize_);
    if (size > opt_.max_bytes / opt_.factor) break;
  }

  // A few untimed calls of every algorithm at the smallest and the largest
  // size first, so that connection setup and the library's per-communicator
  // set-up do not land in the first rows.
  for (uint64_t count : {counts.front(), counts.back()}) {
    bufs_.fill_send(ref_, count, count * esize_);
    for (const AlgoSpec& spec : opt_.algos) {
      // The system's algorithms warm up in their own rows (a choice is a
      // communicator, or variables set for the row's calls).
      if (spec.kind == AlgoSpec::Kind::kMpiAlgo || spec.kind == AlgoSpec::Kind::kMpiBest) continue;
      Caller call = make_caller(spec);
      if (!call.participates()) continue;
      for (int i = 0; i < 2; ++i) call(bufs_.send->get(), bufs_.recv->get(), static_cast<int>(count));
    }
    bufs_.kind->synchronize();
  }

  uint64_t total_wrong = 0;
  for (uint64_t count : counts) {
    const uint64_t bytes = count * esize_;
    const int iters = iters_for(opt_, bytes);
    const int warmup = warmup_for(opt_, iters);
    bufs_.fill_send(ref_, count, bytes);
    size_t first = rows_.size();
    for (const AlgoSpec& spec : opt_.algos) {
      rows_.push_back(spec.kind == AlgoSpec::Kind::kMpiBest ? run_best(spec, count, iters, warmup, first)
                                                            : run_one(spec, count, iters, warmup));
      total_wrong += rows_.back().wrong;
    }
    print_group(first);
  }
  make_notes(counts.size());
  return total_wrong;
}

void print_header(const Options& opt, const RunInfo& info) {
  printf("# mlallreduce_bench: multilane allreduce benchmark, libmlallreduce %s (%s)\n", info.library_version.c_str(),
         info.library_enabled ? "enabled" : "DISABLED: passes every call to MPI");
  printf("# command: %s\n", info.command_line.c_str());
  printf("# date: %s  host: %s\n", info.date.c_str(), info.hostname.c_str());
  printf("# MPI: %s\n", info.mpi_version.c_str());
  if (!info.system_algorithms.empty()) printf("# system algorithms (mpi:NAME): %s\n", info.system_algorithms.c_str());
  if (info.layout_ok) {
    printf("# layout: %d ranks, %d nodes, %d ranks per node, %d ranks per GPU%s\n", info.layout.size, info.layout.nodes,
           info.layout.ranks_per_node, info.layout.ranks_per_gpu, info.layout.regular ? "" : " (irregular)");
  } else {
    printf("# layout: %d ranks (mla_comm_layout failed)\n", info.nranks);
  }
  printf("# hosts: %d: %s\n", info.hosts, info.host_ranges.c_str());
  if (info.variables.empty()) printf("# MULTILANE_* variables: none\n");
  for (const auto& v : info.variables) printf("#   %s=%s\n", v.first.c_str(), v.second.c_str());
  if (!info.variables_consistent)
    printf("# WARNING: the MULTILANE_* variables differ across ranks (rank 0's are shown)\n");
  std::string algos;
  for (const AlgoSpec& a : opt.algos) algos += (algos.empty() ? "" : ",") + a.name;
  printf("# sizes %" PRIu64 " .. %" PRIu64 " B, x%" PRIu64 "; type %s; op %s; memory %s\n", opt.min_bytes,
         opt.max_bytes, opt.factor, type_name(opt.type), op_name(opt.op), info.memory.c_str());
  printf("# algorithms %s; lanes %d%s; chunk %" PRIu64 " B%s\n", algos.c_str(), opt.lanes,
         opt.lanes == 0 ? " (all)" : "", opt.chunk_bytes, opt.chunk_bytes == 0 ? " (library default)" : "");
  std::string iters = opt.iters > 0 ? std::to_string(opt.iters) : "scaled to size";
  std::string warmup = opt.warmup >= 0 ? std::to_string(opt.warmup) : "iters/10, >= 2";
  printf("# iterations %s; warm-up %s; check %s\n", iters.c_str(), warmup.c_str(), opt.check ? "on" : "off");
  if (info.supported && info.layout_ok && !info.layout.regular)
    printf(
        "# NOTE: %s; the library runs its algorithms folded onto a regular core (host memory) or "
        "passes them to PMPI_Allreduce (device memory)\n",
        info.unsupported_reason.c_str());
  if (!info.supported)
    printf("# NOTE: libmlallreduce cannot run %s/%s here (%s): its algorithms will pass to PMPI_Allreduce\n",
           type_name(opt.type), op_name(opt.op), info.unsupported_reason.c_str());
}

// The mean busbw of an algorithm's rows (nccl-tests' "Avg bus bandwidth").
double average_busbw(const Bench& bench, const std::string& algo) {
  double sum = 0;
  int n = 0;
  for (const Row& r : bench.rows())
    if (r.algo == algo) {
      sum += r.busbw;
      ++n;
    }
  return n ? sum / n : 0.0;
}

void print_summary(const Options& opt, const Bench& bench, uint64_t total_wrong,
                   const std::vector<std::string>& notes) {
  printf("#\n");
  for (const std::string& n : notes) printf("# note: %s\n", n.c_str());
  if (opt.check)
    printf("# Out of bounds values : %" PRIu64 " %s\n", total_wrong, total_wrong ? "FAILED" : "OK");
  else
    printf("# Out of bounds values : N/A (check off)\n");
  size_t width = 0;
  for (const AlgoSpec& a : opt.algos) width = std::max(width, a.name.size());
  for (const AlgoSpec& a : opt.algos) {
    printf("# Avg bus bandwidth %-*s : %.3f GB/s\n", static_cast<int>(width + 2), ("(" + a.name + ")").c_str(),
           average_busbw(bench, a.name));
  }
  printf("#\n");
  fflush(stdout);
}

using Json = nlohmann::ordered_json;  // members in the order written

// The run: who, where, with which settings (docs/mlallreduce_bench.md "JSON").
Json run_json(const Options& opt, const RunInfo& info) {
  Json j = {{"benchmark", "mlallreduce_bench"},
            {"library_version", info.library_version},
            {"library_enabled", info.library_enabled},
            {"date", info.date},
            {"hostname", info.hostname},
            {"command_line", info.command_line},
            {"argv", info.argv},
            {"mpi_version", info.mpi_version},
            {"ranks", info.nranks},
            {"hosts", info.hosts},
            {"host_ranks", info.host_ranges}};
  j["layout"] = nullptr;
  if (info.layout_ok)
    j["layout"] = {{"size", info.layout.size},
                   {"nodes", info.layout.nodes},
                   {"ranks_per_node", info.layout.ranks_per_node},
                   {"ranks_per_gpu", info.layout.ranks_per_gpu},
                   {"regular", info.layout.regular != 0}};
  j["variables"] = Json::object();
  for (const auto& v : info.variables) j["variables"][v.first] = v.second;
  j["variables_consistent"] = info.variables_consistent;
  Json algos = Json::array();
  for (const AlgoSpec& a : opt.algos) algos.push_back(a.name);
  j["parameters"] = {{"min_bytes", opt.min_bytes},
                     {"max_bytes", opt.max_bytes},
                     {"factor", opt.factor},
                     {"type", type_name(opt.type)},
                     {"redop", op_name(opt.op)},
                     {"algos", algos},
                     {"lanes", opt.lanes},
                     {"chunk_bytes", opt.chunk_bytes},
                     {"warmup", opt.warmup >= 0 ? Json(opt.warmup) : Json(nullptr)},
                     {"iters", opt.iters > 0 ? Json(opt.iters) : Json(nullptr)},
                     {"check", opt.check},
                     {"memory", opt.memory},
                     {"system_algorithms", info.system_algorithms},
                     {"multilane_supported", info.supported}};
  return j;
}

// A measured figure to 9 significant digits (what the timers resolve), null
// when not finite.
Json figure(double v) {
  if (!std::isfinite(v)) return nullptr;
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return std::strtod(text, nullptr);
}

// One row of the table; what was not measured is null.
Json row_json(const Options& opt, const Row& r) {
  const auto known = [](bool has, double v) { return has ? figure(v) : Json(nullptr); };
  return {{"size", r.bytes},
          {"count", r.count},
          {"type", type_name(opt.type)},
          {"redop", op_name(opt.op)},
          {"algo", r.algo},
          {"time_us", figure(r.time_us)},
          {"algbw", figure(r.algbw)},
          {"busbw", figure(r.busbw)},
          {"wrong", r.checked ? Json(r.wrong) : Json(nullptr)},
          {"vs_mpi", known(r.has_vs_mpi, r.vs_mpi)},
          {"vs_best", known(r.has_vs_best, r.vs_best)},
          {"iters", r.iters},
          {"warmup", r.warmup},
          {"ran_as", r.ran_as}};
}

// Writes the run, its rows and its summary to f: one member of the document
// a line, and the elements of its arrays one a line.
bool write_json(FILE* f, const Options& opt, const RunInfo& info, const Bench& bench, uint64_t total_wrong) {
  Json doc = run_json(opt, info);
  doc["results"] = Json::array();
  for (const Row& r : bench.rows()) doc["results"].push_back(row_json(opt, r));
  Json busbw = Json::object();
  for (const AlgoSpec& a : opt.algos) busbw[a.name] = figure(average_busbw(bench, a.name));
  doc["summary"] = {
      {"out_of_bounds", opt.check ? Json(total_wrong) : Json(nullptr)}, {"avg_busbw", busbw}, {"notes", bench.notes()}};
  std::string text = "{";
  for (auto m = doc.begin(); m != doc.end(); ++m) {
    text += std::string(m == doc.begin() ? "" : ",") + "\n  " + Json(m.key()).dump() + ": ";
    if (!m->is_array() || m->empty()) {
      text += m->dump(-1, ' ', false, Json::error_handler_t::replace);
      continue;
    }
    for (size_t i = 0; i < m->size(); ++i)
      text += std::string(i == 0 ? "[" : ",") + "\n    " + (*m)[i].dump(-1, ' ', false, Json::error_handler_t::replace);
    text += "\n  ]";
  }
  text += "\n}\n";
  return fputs(text.c_str(), f) >= 0 && !ferror(f);
}

// Ends the run everywhere with status; rank 0 prints message to stderr first.
int finish(int rank, int status, const std::string& message) {
  if (rank == 0 && !message.empty()) fprintf(stderr, "mlallreduce_bench: %s\n", message.c_str());
  MPI_Finalize();
  return status;
}

// Checks the mpi:NAME and mpi-best rows against the algorithms the system
// offers: without -a, mpi-best is dropped when there are none (a note says
// why); a row given with -a that the MPI cannot give is an error (message).
bool check_system_rows(Options* opt, const SystemAllreduce& system, std::vector<std::string>* notes,
                       std::string* message) {
  std::vector<AlgoSpec> kept;
  for (const AlgoSpec& spec : opt->algos) {
    const bool named = spec.kind == AlgoSpec::Kind::kMpiAlgo;
    if (!named && spec.kind != AlgoSpec::Kind::kMpiBest) {
      kept.push_back(spec);
      continue;
    }
    const auto& names = system.names();
    if (named && std::find(names.begin(), names.end(), spec.system_algo) == names.end()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      *message = "-a " + spec.name + ": '" + spec.system_algo + "' is not an allreduce algorithm this MPI lets a job " +
                 "choose; " + (names.empty() ? system.why_none() : "choose one of: " + list);
      return false;
    }
    if (names.empty() && !opt->algos_default) {
      *message = "-a mpi-best: " + system.why_none();
      return false;
    }
    if (names.empty()) {
      notes->push_back("mpi-best left out: " + system.why_none());
      continue;
    }
    kept.push_back(spec);
  }
  opt->algos = kept;
  return true;
}

// Opens -J's file on rank 0 before the run, so that a bad path fails first;
// false (with *error) on every rank when it cannot be written.
bool open_json(const Options& opt, int rank, FILE** json, std::string* error) {
  int json_ok = 1;
  if (rank == 0 && !opt.json_path.empty()) {
    *json = fopen(opt.json_path.c_str(), "w");
    if (!*json) {
      json_ok = 0;
      *error = "-J: cannot write '" + opt.json_path + "': " + strerror(errno) + "; give a file in a writable folder";
    }
  }
  MPI_Bcast(&json_ok, 1, MPI_INT, 0, kComm);
  return json_ok != 0;
}

// The run's facts for the header and the JSON: host, date, command line,
// MPI, multilane variables, layout and whether the library serves the call;
// *local_size: the ranks of this host.  Collective.
void collect_run_info(int argc, char** argv, const Options& opt, RunInfo* info, int* local_size) {
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  info->hostname = name;
  info->date = mla::UtcNow();
  for (int i = 0; i < argc; ++i) {
    info->argv.push_back(argv[i]);
    info->command_line += (i ? " " : "") + shell_quote(argv[i]);
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int version_len = 0;
  MPI_Get_library_version(version, &version_len);
  info->mpi_version = mla::MpiVersionKey(std::string(version, static_cast<size_t>(version_len)));
  info->variables = multilane_variables();
  {
    std::string joined;
    for (const auto& v : info->variables) joined += v.first + "=" + v.second + "\n";
    info->variables_consistent = same_on_all_ranks(hash_bytes(joined.data(), joined.size()));
  }
  info->local_rank = local_rank_of(info->rank, local_size);
  info->host_ranges = gather_host_ranges(*info, &info->hosts);
  info->layout_ok = mla_comm_layout(kComm, &info->layout) == MPI_SUCCESS;
  info->library_enabled = mla_enabled() != 0;
  info->library_version = mla_version();
  const char* reason = nullptr;
  info->supported = mla_call_supported(mpi_datatype(opt.type), mpi_op(opt.op), kComm, &reason) != 0;
  info->unsupported_reason = reason ? reason : "";
  if (info->supported && info->layout_ok && !info->layout.regular)
    info->unsupported_reason = "irregular layout: nodes hold different numbers of ranks";
}

// The communicator of the first rank on each GPU of each host (MPI_COMM_NULL
// on the others); *ranks_per_gpu: the ranks that share this rank's GPU.
MPI_Comm per_gpu_comm(const MemKind& kind, int rank, int* ranks_per_gpu) {
  MPI_Comm shared, same_gpu, per_gpu = MPI_COMM_NULL;
  MPI_Comm_split_type(kComm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  MPI_Comm_split(shared, kind.device() + 1, rank, &same_gpu);
  int gpu_rank = 0;
  MPI_Comm_rank(same_gpu, &gpu_rank);
  MPI_Comm_size(same_gpu, ranks_per_gpu);
  MPI_Comm_split(kComm, gpu_rank == 0 ? 0 : MPI_UNDEFINED, rank, &per_gpu);
  MPI_Comm_free(&same_gpu);
  MPI_Comm_free(&shared);
  return per_gpu;
}

int bench_main(int argc, char** argv) {
#ifdef MLABENCH_HAVE_SYSALGO
  mlsys::PrepareBeforeInit();  // Open MPI: lets mpi:NAME force coll/tuned's algorithms
#endif
  MPI_Init(&argc, &argv);
  RunInfo info;
  MPI_Comm_rank(kComm, &info.rank);
  MPI_Comm_size(kComm, &info.nranks);

  Options opt;
  std::string error;
  switch (parse_options(argc, argv, &opt, &error)) {
    case ParseStatus::kHelp:
      if (info.rank == 0) fputs(usage_text(argv[0]).c_str(), stdout);
      return finish(info.rank, 0, "");
    case ParseStatus::kError:
      return finish(info.rank, 2, error + "\n(run mlallreduce_bench -h for the options)");
    case ParseStatus::kRun:
      break;
  }

  // Open the JSON file early so that a bad path fails before the run.
  FILE* json = nullptr;
  if (!open_json(opt, info.rank, &json, &error)) return finish(info.rank, 2, error);

  int local_size = 1;
  collect_run_info(argc, argv, opt, &info, &local_size);

  // Buffers of the largest size.
  std::string kind_error;
  std::unique_ptr<MemKind> kind = make_memkind(opt.memory, info.local_rank, local_size, &kind_error);
  int kind_ok = kind != nullptr, all_kind_ok = 0;
  PMPI_Allreduce(&kind_ok, &all_kind_ok, 1, MPI_INT, MPI_MIN, kComm);
  if (!all_kind_ok)
    return finish(info.rank, 1, "-m " + opt.memory + ": " + (kind_error.empty() ? "failed on some rank" : kind_error));

  // One rank per GPU (the first on each GPU of each host) for mpi-1pg and nccl.
  int ranks_per_gpu = 1;
  MPI_Comm per_gpu = per_gpu_comm(*kind, info.rank, &ranks_per_gpu);
  const size_t esize = type_size(opt.type);
  const size_t max_bytes = (opt.max_bytes / esize) * esize;
  Buffers bufs;
  bufs.kind = kind.get();
  bufs.send = std::make_unique<Buffer>(kind.get(), max_bytes);
  bufs.recv = std::make_unique<Buffer>(kind.get(), max_bytes);
  if (!kind->host_accessible()) bufs.stage.resize(max_bytes);
  int alloc_ok = bufs.send->ok() && bufs.recv->ok(), all_ok = 0;
  PMPI_Allreduce(&alloc_ok, &all_ok, 1, MPI_INT, MPI_MIN, kComm);
  if (!all_ok)
    return finish(info.rank, 1,
                  "cannot allocate 2 x " + std::to_string(max_bytes) + " bytes of " + opt.memory +
                      " memory on some rank; lower -e or run fewer ranks per node");
  info.memory = kind->describe();

  // The system's own algorithms (mpi:NAME, mpi-best); freed before MPI_Finalize.
  auto system = std::make_unique<SystemAllreduce>();
  std::vector<std::string> system_notes;
  if (!check_system_rows(&opt, *system, &system_notes, &error)) {
    system.reset();
    return finish(info.rank, 2, error);
  }
  if (!system->names().empty()) {
    info.system_algorithms = system->mechanism() + ":";
    for (const std::string& n : system->names()) info.system_algorithms += " " + n;
  }

  if (info.rank == 0) {
    print_header(opt, info);
    print_table_header();
    fflush(stdout);
    if (kind->device() >= 0)
      printf("# device buffers: %d rank(s) per GPU; mpi-1pg and nccl run on the first rank of each GPU\n",
             ranks_per_gpu);
  }
  Bench bench(opt, info, bufs, per_gpu, *system);
  uint64_t total_wrong = bench.run(system_notes);

  int status = total_wrong > 0 ? 1 : 0;
  if (info.rank == 0) {
    print_summary(opt, bench, total_wrong, bench.notes());
    if (json) {
      bool ok = write_json(json, opt, info, bench, total_wrong);
      ok = fclose(json) == 0 && ok;
      if (!ok) {
        fprintf(stderr, "mlallreduce_bench: -J: writing '%s' failed\n", opt.json_path.c_str());
        status = 1;
      }
    }
  }
  bufs.send.reset();
  bufs.recv.reset();
  kind.reset();
  system.reset();
  if (per_gpu != MPI_COMM_NULL) MPI_Comm_free(&per_gpu);
  return finish(info.rank, status, "");
}

}  // namespace
}  // namespace mlabench

int main(int argc, char** argv) { return mlabench::bench_main(argc, argv); }
