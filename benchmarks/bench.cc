// bench.cc: the measurement (bench.h).
//
// Everything the benchmark's own communication uses goes through PMPI_* or
// calls the library does not intercept, so that the library's counters and
// decisions see only the measured calls.
#include "benchmarks/bench.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "benchmarks/bound.h"
#include "vocab/algo_names.h"

namespace mlabench {
namespace {

// Whether the rows of this kind run on one rank per GPU (mpi-1pg, nccl).
bool on_gpu_leaders(AlgoSpec::Kind kind) { return kind == AlgoSpec::Kind::kMpiPerGpu || kind == AlgoSpec::Kind::kNccl; }

// Whether the library's counters say what the rows of this kind ran.
bool counted(AlgoSpec::Kind kind) {
  return kind == AlgoSpec::Kind::kAuto || kind == AlgoSpec::Kind::kLibrary || kind == AlgoSpec::Kind::kMpiBest;
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

// The communicator of the first rank on each GPU of each host (MPI_COMM_NULL
// on the others); *ranks_per_gpu: the ranks that share this rank's GPU.
MPI_Comm per_gpu_comm(int device, int rank, int* ranks_per_gpu) {
  MPI_Comm shared, same_gpu, per_gpu = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  MPI_Comm_split(shared, device + 1, rank, &same_gpu);
  int gpu_rank = 0;
  MPI_Comm_rank(same_gpu, &gpu_rank);
  MPI_Comm_size(same_gpu, ranks_per_gpu);
  MPI_Comm_split(MPI_COMM_WORLD, gpu_rank == 0 ? 0 : MPI_UNDEFINED, rank, &per_gpu);
  MPI_Comm_free(&same_gpu);
  MPI_Comm_free(&shared);
  return per_gpu;
}

std::string size_list(const std::vector<uint64_t>& sizes, size_t nsizes) {
  if (sizes.size() == nsizes) return "at every size";
  std::string text = "at";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : " ") + std::to_string(sizes[i]);
  return text + " B";
}

}  // namespace

// The measured call of one algorithm: the library's choice and the
// communicator it runs on (MPI_COMM_NULL where this rank takes no part, or
// where the MPI refused mpi:NAME; `why` then says why).
struct Bench::Caller {
  const AlgoSpec* spec = nullptr;
  mla_choice choice{};
  MPI_Comm comm = MPI_COMM_WORLD;
  std::string why;  // why a call failed, when the kind knows
};

Bench::Bench(const Options& opt, const RunInfo& info, MemKind* kind, size_t bytes, SystemAllreduce& system)
    : opt_(opt),
      info_(info),
      kind_(kind),
      system_(system),
      type_(mpi_datatype(opt.type)),
      op_(mpi_op(opt.op)),
      esize_(type_size(opt.type)),
      send_(kind->alloc(bytes)),
      recv_(kind->alloc(bytes)),
      stage_(kind->host_accessible() ? 0 : bytes),
      per_gpu_(per_gpu_comm(kind->device(), info.rank, &ranks_per_gpu_)),
      per_gpu_ranks_(comm_size(per_gpu_)),
      ref_(opt.type, opt.op, info.nranks, info.rank),
      per_gpu_ref_(opt.type, opt.op, per_gpu_ranks_, comm_rank(per_gpu_)) {}

Bench::~Bench() {
  if (send_) kind_->release(send_);
  if (recv_) kind_->release(recv_);
  if (per_gpu_ != MPI_COMM_NULL) MPI_Comm_free(&per_gpu_);
}

Bench::Caller Bench::make_caller(const AlgoSpec& spec) const {
  Caller c;
  c.spec = &spec;
  c.choice.algo = spec.algo;
  c.choice.lanes = opt_.lanes;
  c.choice.chunk_bytes = opt_.chunk_bytes;
  c.choice.transport = spec.transport;
  if (on_gpu_leaders(spec.kind)) c.comm = per_gpu_;
  if (spec.kind == AlgoSpec::Kind::kMpiAlgo) c.comm = system_.Select(spec.system_algo, MPI_COMM_WORLD, &c.why);
  return c;
}

int Bench::call(Caller& c, int count) {
  switch (c.spec->kind) {
    case AlgoSpec::Kind::kMpi:
    case AlgoSpec::Kind::kMpiAlgo:
    case AlgoSpec::Kind::kMpiPerGpu:
      return kind_->system_allreduce(send_, recv_, count, type_, op_, c.comm);
    case AlgoSpec::Kind::kAuto:
      return mla_allreduce(send_, recv_, count, type_, op_, c.comm);
    case AlgoSpec::Kind::kLibrary:
      return mla_allreduce_with(send_, recv_, count, type_, op_, c.comm, &c.choice);
    case AlgoSpec::Kind::kNccl: {
      const int rc = kind_->nccl_allreduce(send_, recv_, count, opt_.type, opt_.op, c.comm, &c.why);
      if (c.spec->blocking) kind_->synchronize();
      return rc;
    }
    case AlgoSpec::Kind::kMpiBest:
      break;  // run_best measures its parts
  }
  return MPI_ERR_OTHER;
}

// A host pointer to the first `bytes` of buf: buf itself where the kind is
// host accessible, else stage_ with a copy (valid until the next call).
const void* Bench::host_view(const void* buf, size_t bytes) {
  if (kind_->host_accessible()) return buf;
  kind_->copy(stage_.data(), buf, bytes);
  return stage_.data();
}

// Writes ref's send data for `count` elements into the send buffer.
void Bench::fill_send(const Reference& ref, size_t count) {
  if (kind_->host_accessible()) return ref.fill(send_, count);
  ref.fill(stage_.data(), count);
  kind_->copy(send_, stage_.data(), count * esize_);
}

// The wrong values of the last call's result (compared with rank 0's too
// where the ranks disagree) plus the send elements it changed (then
// written again, to keep later runs meaningful).  Collective over comm.
uint64_t Bench::check_call(size_t count, const Reference& ref, MPI_Comm comm) {
  const size_t bytes = count * esize_;
  uint64_t changed = ref.count_send_changed(host_view(send_, bytes), count);
  if (changed) fill_send(ref, count);
  const void* res = host_view(recv_, bytes);
  if (same_on_all_ranks(hash_bytes(res, bytes), comm)) return changed + ref.count_wrong(res, nullptr, count);
  std::vector<unsigned char> rank0(bytes);
  if (comm_rank(comm) == 0) memcpy(rank0.data(), res, bytes);
  MPI_Bcast(rank0.data(), static_cast<int>(count), type_, 0, comm);  // count <= INT_MAX (options.cc)
  return changed + ref.count_wrong(res, rank0.data(), count);
}

// `warmup` untimed calls, then `iters` timed ones, on the ranks `active`
// (every rank meets at the barrier); returns the slowest rank's mean
// seconds per call and adds the calls that failed to *failed.
double Bench::time_batch(Caller& c, int n, size_t bytes, int iters, int warmup, bool active, int* failed) {
  if (active) {
    kind_->set_bytes(recv_, kPoisonByte, bytes);
    for (int i = 0; i < warmup; ++i) *failed += call(c, n) != MPI_SUCCESS;
    kind_->synchronize();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (active) {
    for (int i = 0; i < iters; ++i) *failed += call(c, n) != MPI_SUCCESS;
    kind_->synchronize();
  }
  double mean = active ? (MPI_Wtime() - t0) / iters : 0, max_mean = 0;
  PMPI_Allreduce(&mean, &max_mean, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max_mean;
}

// -T: fewer iterations where one call (`seconds` on the slowest rank) says
// the batch would take longer.
void Bench::fit_batch(double seconds, int* iters, int* warmup) {
  if (opt_.batch_seconds <= 0 || seconds <= 0) return;
  const double fit = opt_.batch_seconds / seconds;
  if (fit < *iters) *iters = std::max(3, static_cast<int>(fit));
  *warmup = std::min(*warmup, std::max(1, *iters / 10));
}

Counters Counted() {
  Counters c;
  mla_get_stats(&c.stats);
  const char* name = nullptr;
  for (int i = 0;; ++i) {
    const long long n = mla_system_algo_calls(i, &name);
    if (n < 0) break;
    c.system[name] = static_cast<uint64_t>(n);
  }
  return c;
}

void Bench::count_calls(const AlgoSpec& spec, const Counters& before, const Counters& after, Row* row) {
  if (!counted(spec.kind)) {
    row->ran_as = spec.name;
    return;
  }
  row->calls = after.stats.calls - before.stats.calls;
  row->unsupported = after.stats.unsupported - before.stats.unsupported;
  std::vector<std::pair<std::string, uint64_t>> parts;
  uint64_t by_system = 0;  // passthrough calls a profile's mpi=NAME ran: shown as mpi:NAME
  for (const auto& [name, n] : after.system) {
    const auto was = before.system.find(name);
    const uint64_t d = n - (was == before.system.end() ? 0 : was->second);
    if (d > 0) parts.emplace_back("mpi:" + name, d);
    by_system += d;
  }
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) {
    const uint64_t n = after.stats.calls_by_algo[a] - before.stats.calls_by_algo[a];
    if (a == MLA_ALGO_PASSTHROUGH && n > by_system) parts.insert(parts.begin(), {"passthrough", n - by_system});
    if (a != MLA_ALGO_PASSTHROUGH && n > 0) parts.emplace_back(mla::AlgoName(static_cast<mla_algo>(a)), n);
  }
  std::string ran;
  for (const auto& [name, n] : parts)
    ran += (ran.empty() ? "" : "+") + name + (n != row->calls ? "(" + std::to_string(n) + ")" : "");
  row->ran_as = ran.empty() ? "?" : ran;
}

void Bench::make_notes(size_t nsizes) {
  for (const AlgoSpec& spec : opt_.algos) {
    if (!counted(spec.kind)) continue;
    const bool chooses = spec.kind == AlgoSpec::Kind::kAuto || spec.kind == AlgoSpec::Kind::kMpiBest;
    std::vector<uint64_t> all_unsupported, uncounted;
    struct Span {
      std::string ran;
      uint64_t first, last;
    };
    std::vector<Span> spans;  // auto, mpi-best: what ran, over which sizes (none: not said)
    for (const Row& r : rows_) {
      if (r.algo != spec.name) continue;
      const std::string where = spec.name + " at " + std::to_string(r.bytes) + " B: ";
      if (r.calls == 0 && spec.kind != AlgoSpec::Kind::kMpiBest) {
        uncounted.push_back(r.bytes);
      } else if (chooses) {
        if ((spans.empty() ? "" : spans.back().ran) != r.ran_as) spans.push_back({r.ran_as, r.bytes, r.bytes});
        if (!spans.empty()) spans.back().last = r.bytes;
      } else if (r.unsupported == r.calls) {
        all_unsupported.push_back(r.bytes);
      } else if (r.unsupported > 0) {
        notes_.push_back(where + std::to_string(r.unsupported) + " of " + std::to_string(r.calls) +
                         " calls went to PMPI_Allreduce as unsupported");
      } else if (r.ran_as != spec.name) {
        notes_.push_back(where + "the library's counters say it ran as " + r.ran_as);
      }
    }
    std::string ran;
    for (const Span& s : spans)
      if (!s.ran.empty())
        ran += (ran.empty() ? "" : ", ") + s.ran + " (" + std::to_string(s.first) +
               (s.first == s.last ? "" : " .. " + std::to_string(s.last)) + " B)";
    if (!ran.empty()) notes_.push_back(spec.name + " ran: " + ran);
    if (!all_unsupported.empty())
      notes_.push_back(spec.name + ": every call went to PMPI_Allreduce as unsupported " +
                       size_list(all_unsupported, nsizes) +
                       (info_.unsupported_reason.empty() ? "" : " (" + info_.unsupported_reason + ")"));
    if (!uncounted.empty())
      notes_.push_back(spec.name + ": mla_get_stats counted no calls " + size_list(uncounted, nsizes));
  }
}

Row Bench::run_one(const AlgoSpec& spec, uint64_t count, int iters, int warmup) {
  Caller caller = make_caller(spec);
  const size_t bytes = count * esize_;
  Row row;
  row.bytes = bytes;
  row.count = count;
  row.algo = spec.name;
  row.checked = opt_.check;
  if (spec.kind == AlgoSpec::Kind::kMpiAlgo && caller.comm == MPI_COMM_NULL) {
    // The MPI refused the choice (checked at the start; rare): no call is made.
    if (info_.rank == 0)
      fprintf(stderr, "mlallreduce_bench: %s at %zu B: %s\n", spec.name.c_str(), bytes, caller.why.c_str());
    row.wrong = count;
    return row;
  }
  // mpi-1pg and nccl run on one rank per GPU, with their own data; the other
  // ranks wait at the barriers.
  const bool per_gpu_row = on_gpu_leaders(spec.kind);
  const bool active = caller.comm != MPI_COMM_NULL;
  const Reference& ref = per_gpu_row ? per_gpu_ref_ : ref_;
  const MPI_Comm check_comm = per_gpu_row ? (active ? per_gpu_ : MPI_COMM_SELF) : MPI_COMM_WORLD;
  const int n = static_cast<int>(count);
  const Counters before = Counted();
  uint64_t wrong = 0;
  int failed_calls = 0;
  if (per_gpu_row && active) fill_send(ref, count);
  // One checked call, outside the timed loop; its time sizes the batch (-T).
  fit_batch(time_batch(caller, n, bytes, 1, 0, active, &failed_calls), &iters, &warmup);
  if (opt_.check && active) wrong += check_call(count, ref, check_comm);
  row.iters = iters;
  row.warmup = warmup;
  const double max_mean = time_batch(caller, n, bytes, iters, warmup, active, &failed_calls);
  const Counters after = Counted();
  if (opt_.check && active) wrong += check_call(count, ref, check_comm);  // the last timed result too
  if (failed_calls) {
    fprintf(stderr, "mlallreduce_bench: rank %d: %d calls of %s at %zu B returned an MPI error%s%s\n", info_.rank,
            failed_calls, spec.name.c_str(), bytes, caller.why.empty() ? "" : ": ", caller.why.c_str());
    wrong += count;
  }
  PMPI_Allreduce(&wrong, &row.wrong, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (per_gpu_row && active) fill_send(ref_, count);  // back to the run's data
  const int comm_ranks = per_gpu_row ? per_gpu_ranks_ : info_.nranks;
  row.time_us = max_mean * 1e6;
  row.algbw = max_mean > 0 ? static_cast<double>(bytes) / max_mean / 1e9 : 0;
  row.busbw = row.algbw * 2.0 * (comm_ranks - 1) / comm_ranks;
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
  best.vs_mpi.reset();
  return best;
}

// The node's memory bound at this size in microseconds (bound.h), measured
// with the rows' iterations on this run's buffers; none for device memory.
// Collective over MPI_COMM_WORLD.
std::optional<double> Bench::bound_us(uint64_t count, int iters, int warmup) {
  if (kind_->device() >= 0 || !kind_->host_accessible()) return std::nullopt;
  return BoundSeconds(recv_, send_, count * esize_, info_.local_size, iters, warmup) * 1e6;
}

// The ratios of a size's rows (from `first`), and the rows printed on rank 0.
// vs_mpi: the busbw ratio to the mpi row of the same size (equal to the
// algbw ratio, which stays defined on one rank where busbw is 0); vs_best:
// the same against the mpi-best row (the system's best); vs_bound: the
// node's memory bound's time over the row's.
void Bench::finish_size(size_t first, std::optional<double> bound_us) {
  const Row *mpi = nullptr, *best = nullptr;
  for (size_t i = first; i < rows_.size(); ++i) {
    if (rows_[i].algo == "mpi") mpi = &rows_[i];
    if (rows_[i].algo == "mpi-best") best = &rows_[i];
  }
  const auto ratio = [](std::optional<double> v) {
    char text[32] = "-";
    if (v) snprintf(text, sizeof text, "%.2f", *v);
    return std::string(text);
  };
  for (size_t i = first; i < rows_.size(); ++i) {
    Row& r = rows_[i];
    if (mpi && mpi->algbw > 0) r.vs_mpi = r.algbw / mpi->algbw;
    if (best && best->algbw > 0) r.vs_best = r.algbw / best->algbw;
    r.bound_us = bound_us;
    if (bound_us && r.time_us > 0) r.vs_bound = *bound_us / r.time_us;
    if (info_.rank != 0) continue;
    printf("%12" PRIu64 " %12" PRIu64 " %7s %6s %12s %11.2f %8.3f %8.3f %7s %7s %7s %8s\n", r.bytes, r.count,
           type_name(opt_.type), op_name(opt_.op), r.algo.c_str(), r.time_us, r.algbw, r.busbw,
           r.checked ? std::to_string(r.wrong).c_str() : "N/A", ratio(r.vs_mpi).c_str(), ratio(r.vs_best).c_str(),
           ratio(r.vs_bound).c_str());
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
    fill_send(ref_, count);
    for (const AlgoSpec& spec : opt_.algos) {
      // The system's algorithms warm up in their own rows (a choice is a
      // communicator, or variables set for the row's calls).
      if (spec.kind == AlgoSpec::Kind::kMpiAlgo || spec.kind == AlgoSpec::Kind::kMpiBest) continue;
      Caller c = make_caller(spec);
      if (c.comm == MPI_COMM_NULL) continue;
      for (int i = 0; i < 2; ++i) call(c, static_cast<int>(count));
    }
    kind_->synchronize();
  }

  uint64_t total_wrong = 0;
  for (uint64_t count : counts) {
    const int iters = iters_for(opt_, count * esize_);
    const int warmup = warmup_for(opt_, iters);
    fill_send(ref_, count);
    size_t first = rows_.size();
    const std::optional<double> bound = bound_us(count, iters, warmup);
    for (const AlgoSpec& spec : opt_.algos) {
      rows_.push_back(spec.kind == AlgoSpec::Kind::kMpiBest ? run_best(spec, count, iters, warmup, first)
                                                            : run_one(spec, count, iters, warmup));
      total_wrong += rows_.back().wrong;
    }
    finish_size(first, bound);
  }
  make_notes(counts.size());
  return total_wrong;
}

}  // namespace mlabench
