// probe_sizes.cc: mlprobe's measurement of one message size (probe_sizes.h).
#include "tuner/probe_sizes.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "mlallreduce.h"
#include "tuner/probe_system.h"

namespace mltuner {

using nlohmann::json;
using namespace mltuner;

namespace {

// Budgeted mode: the candidates of a size are validated and measured in the
// order of the previous size's medians (same memory; passthrough first), and
// once the size's share of the budget is spent the rest is not measured.  The
// first kAlwaysMeasured of that order are measured whatever the clock says,
// so a size late in a tight budget still compares passthrough with the
// previous size's best.  (At 1 GiB on 16 ranks sharing a GPU one call takes
// seconds: a first round of every candidate would overrun any budget.)
constexpr size_t kAlwaysMeasured = 3;
const char kNotMeasured[] = "not measured: the size's share of the time budget was spent (raise --budget)";

struct Entry {
  Candidate cand;
  std::string words;
  mla_choice choice{};
  MPI_Comm comm = MPI_COMM_WORLD;        // a system algorithm's: the communicator it runs on
  SystemAlgorithms* per_call = nullptr;  // MPICH: selects the system algorithm around each call
  std::string system_name;               // mpi=NAME's NAME
  std::vector<double> samples;
  bool valid = true;
  bool fell_back = false;     // the library sent the call to PMPI_Allreduce (unsupported)
  int dropped_in_round = -1;  // -1: survived; 0: dropped at validation
  std::string error;
};

// The size being measured.
struct Step {
  MemKind mem = MemKind::kHost;
  uint64_t bytes = 0;
  int count = 0;      // floats per call
  int iters = 0;      // timed calls per repetition
  std::string label;  // "4K", or "host:4K" when the plan has several memory kinds
  double start = 0;   // MPI_Wtime() when the size began
  double budget = 0;  // the size's share of the budget, in seconds
  Buffers* buf = nullptr;
  std::vector<double> t, tmax;  // one repetition's times: this rank's, the MAX over ranks
};

// Small integers: every partial sum is exact in fp32 whatever the order,
// so a right result equals PMPI_Allreduce's bit for bit.
void Fill(std::vector<float>& v, size_t count, int rank) {
  for (size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(static_cast<int>((i * 2654435761u + static_cast<size_t>(rank) * 7u) % 33u) - 16);
}

// Size `si` starts now: the budget left for the budgeted parts (--compare:
// the exhaustive sweeps do not count against it), split over the sizes
// still to do.
Step StartStep(const ProbeRun& run, size_t si, MemKind mem, uint64_t bytes, Buffers* buf) {
  const Plan& plan = *run.plan;
  Step s;
  s.mem = mem;
  s.bytes = bytes;
  s.count = static_cast<int>(bytes / 4);
  s.label = (plan.memories.size() > 1 ? std::string(MemKindName(mem)) + ":" : std::string()) + FormatByteSize(bytes);
  s.buf = buf;
  s.start = MPI_Wtime();
  const double spent = run.compare ? run.budgeted_spent : s.start - run.t_start;
  s.budget = (plan.budget_s - spent) / static_cast<double>(run.steps - si);
  s.iters = plan.IterationsFor(bytes);
  s.t.resize(static_cast<size_t>(s.iters));
  s.tmax.resize(static_cast<size_t>(s.iters));
  return s;
}

// The entries of the size: one per candidate the plan measures at this size
// (Plan::MeasuresAt), not redundant there and, for the system's own
// algorithms, right for it (the others are listed in *skipped); a candidate
// the library cannot express, or a system algorithm the MPI refused, is
// invalid from the start.
std::vector<Entry> MakeEntries(const ProbeRun& run, const std::vector<Candidate>& cands, const Step& step,
                               std::vector<std::string>* skipped) {
  const Plan& plan = *run.plan;
  std::vector<Entry> entries;
  for (const Candidate& c : cands) {
    if (!plan.MeasuresAt(step.mem, step.bytes, c)) continue;  // not asked for at this size
    if ((!c.IsPassthrough() && RedundantAtSize(plan.space, c, step.bytes)) ||
        (run.system != nullptr && !run.system->Applies(c, step.count, run.nranks))) {
      skipped->push_back(c.Render());
      continue;
    }
    Entry e;
    e.cand = c;
    e.words = c.Render();
    bool ok = ToChoice(plan.space, c, &e.choice, &e.error);
    if (ok && !c.SystemAlgorithm().empty()) {
      e.comm = run.system != nullptr ? run.system->CommFor(c, &e.error) : MPI_COMM_NULL;
      if (run.system == nullptr) e.error = "the system's algorithms are not probed in this run";
      ok = e.comm != MPI_COMM_NULL;
      if (ok && run.system->PerCall()) e.per_call = run.system;
      e.system_name = c.SystemAlgorithm();
    }
    if (!ok) {
      e.valid = false;
      e.dropped_in_round = 0;
    }
    entries.push_back(e);
  }
  return entries;
}

// One call of entry `e` on the step's buffers, through the library (which
// passes passthrough on to PMPI_Allreduce) on the entry's communicator; a
// system algorithm chosen per call is chosen around it, as a job's library
// does.
int Call(Step& step, Entry& e) {
  Buffers& buf = *step.buf;
  if (e.per_call != nullptr) e.per_call->Begin(e.system_name);
  const int rc =
      mla_allreduce_with(buf.call_send(), buf.call_recv(), step.count, MPI_FLOAT, MPI_SUM, e.comm, &e.choice);
  if (e.per_call != nullptr) e.per_call->End();
  return rc;
}

// Budgeted mode: the system MPI's default first, then by the previous
// size's medians (unmeasured last), stable; the system's own algorithms
// (passthrough mpi=NAME) are ranked like multilane's.
void OrderByPreviousMedians(const std::map<std::string, double>& prev, std::vector<Entry>* entries) {
  auto key = [&](const Entry& e) {
    if (e.cand == Passthrough()) return -1.0;
    auto it = prev.find(e.words);
    return it == prev.end() ? std::numeric_limits<double>::infinity() : it->second;
  };
  std::stable_sort(entries->begin(), entries->end(), [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
}

// Budgeted parts: whether entry number `index` may still be measured
// (rank 0's clock decides for all, a collective call on every rank).
bool MayMeasure(const ProbeRun& run, const Step& step, size_t index) {
  if (run.exhaustive || index < kAlwaysMeasured) return true;
  return BcastFlag(MPI_Wtime() < step.start + step.budget);
}

// One call of entry `e` on the poisoned receive buffer, compared with the
// reference; a wrong, failed or uncopyable result drops it (rank 0 warns).
// Marks it fell_back when the library passed the call on (to the system
// MPI, or from NCCL to MPI staging): it measured something else than itself.
void ValidateEntry(const ProbeRun& run, Step& step, bool uploaded, Entry& e) {
  Buffers& buf = *step.buf;
  const size_t ucount = static_cast<size_t>(step.count);
  bool copied = uploaded && buf.Poison(ucount);
  mla_reset_stats();
  int rc = Call(step, e);
  mla_stats st;
  mla_get_stats(&st);
  copied = copied && buf.Download(ucount);
  bool bad = !copied || rc != MPI_SUCCESS || std::memcmp(buf.recv.data(), buf.ref.data(), ucount * 4) != 0;
  if (AnyRank(bad)) {
    e.valid = false;
    e.dropped_in_round = 0;
    e.error = !copied             ? "copying to or from device memory failed"
              : rc != MPI_SUCCESS ? "returned an MPI error"
                                  : "wrong result (differs from PMPI_Allreduce)";
    if (run.rank == 0)
      std::fprintf(stderr, "mlprobe: warning: %s at %s: %s; dropped\n", e.words.c_str(), step.label.c_str(),
                   e.error.c_str());
  }
  const bool passed_on =
      st.unsupported > 0 || st.calls_by_algo[MLA_ALGO_PASSTHROUGH] > 0 ||
      (step.mem == MemKind::kDevice && (st.calls_by_path[MLA_PATH_STAGED] > 0 || st.nccl_fallbacks > 0));
  e.fell_back = !e.cand.IsPassthrough() && AnyRank(passed_on);
}

// Validation: once per candidate, against PMPI_Allreduce.  The reference is
// the system MPI on host memory (what the staged system MPI path computes
// for device buffers).  --compare validates every candidate (its exhaustive
// sweep measures them all); the budgeted search skips those it has no time for.
void Validate(const ProbeRun& run, Step& step, std::vector<Entry>& entries) {
  Buffers& buf = *step.buf;
  const size_t ucount = static_cast<size_t>(step.count);
  Fill(buf.send, ucount, run.rank);
  const bool uploaded = buf.Upload(ucount);
  PMPI_Allreduce(buf.send.data(), buf.ref.data(), step.count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  for (size_t ei = 0; ei < entries.size(); ++ei) {
    Entry& e = entries[ei];
    if (!e.valid) continue;
    if (!run.compare && !MayMeasure(run, step, ei)) {
      e.dropped_in_round = 0;
      e.error = kNotMeasured;
      continue;
    }
    ValidateEntry(run, step, uploaded, e);
  }
}

// One repetition of entry `e`.  "loop" (the default): a barrier, `warmup`
// untimed calls (they absorb the skew of leaving the barrier), then `iters`
// calls back to back timed as one loop on every rank; the sample is the
// slowest rank's loop time per call.  That is what a job's ranks see inside
// allreduce (a job report's time_s per call), so a profile's prices and a
// job's report compare like with like.  "median"/"mean": a barrier after the
// warmup, each call timed on its own, the median (mean) over the calls of
// each call's maximum over the ranks; that adds every call's finishing skew
// and read 5-20 % above what the same program then measured (issue 30).
double MeasureRepetition(const Plan& plan, Step& step, Entry& e) {
  const bool loop = plan.rep_stat == "loop";
  if (loop) PMPI_Barrier(MPI_COMM_WORLD);
  for (int w = 0; w < plan.warmup; ++w) Call(step, e);
  if (loop) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < step.iters; ++i) Call(step, e);
    const double mine = (MPI_Wtime() - t0) * 1e6 / step.iters;
    double slowest = 0;
    PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < step.iters; ++i) {
    double t0 = MPI_Wtime();
    Call(step, e);
    step.t[static_cast<size_t>(i)] = (MPI_Wtime() - t0) * 1e6;
  }
  PMPI_Allreduce(step.t.data(), step.tmax.data(), step.iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double v = 0;
  if (plan.rep_stat == "mean") {
    for (double x : step.tmax) v += x;
    v /= step.iters;
  } else {
    v = Median(step.tmax);
  }
  return v;
}

// Round `round`: each repetition measures every active entry once
// (interleaved).  Budgeted: out of time, what was measured is kept and the
// rest of the round is left out (*out_of_time), except the first entries'
// first round.  Returns the entries measured by the last repetition.
int MeasureRound(const ProbeRun& run, Step& step, std::vector<Entry>& es, int round, bool budgeted, bool* out_of_time) {
  int active = 0;
  for (int rep = 0; rep < run.plan->reps_per_round; ++rep) {
    active = 0;
    for (size_t ei = 0; ei < es.size(); ++ei) {
      Entry& e = es[ei];
      if (!e.valid || e.dropped_in_round >= 0) continue;
      const bool guaranteed = round == 1 && ei < kAlwaysMeasured;
      if (budgeted && !guaranteed && (*out_of_time || !MayMeasure(run, step, es.size()))) {
        *out_of_time = true;
        continue;
      }
      ++active;
      e.samples.push_back(MeasureRepetition(*run.plan, step, e));
    }
  }
  return active;
}

// After round `round`: out of time, an entry without a sample is not
// measured; budgeted, successive halving drops the entries that cannot
// win.  Returns the entries left.
int DropAfterRound(const ProbeRun& run, std::vector<Entry>& es, int round, bool budgeted, bool out_of_time) {
  if (out_of_time)
    for (Entry& e : es)
      if (e.valid && e.dropped_in_round < 0 && e.samples.empty()) {
        e.dropped_in_round = round;
        e.error = kNotMeasured;
      }
  if (budgeted) {
    std::map<std::string, std::vector<double>> s;
    for (const Entry& e : es)
      if (e.valid && e.dropped_in_round < 0) s[e.words] = e.samples;
    std::vector<std::string> keep = Survivors(s, run.halving);
    for (Entry& e : es)
      if (e.valid && e.dropped_in_round < 0 && std::find(keep.begin(), keep.end(), e.words) == keep.end())
        e.dropped_in_round = round;
  }
  int left = 0;
  for (const Entry& e : es) left += e.valid && e.dropped_in_round < 0;
  return left;
}

// Rounds of `es` until max_rounds, one survivor, or (budgeted) the size's
// budget is spent; halving after each round when budgeted.  Returns the
// number of rounds run.
int RunRounds(ProbeRun* run, Step& step, std::vector<Entry>& es, bool budgeted, const std::string& tag) {
  const Plan& plan = *run->plan;
  int rounds_run = 0;
  bool out_of_time = false;
  for (int round = 1; round <= plan.max_rounds && !out_of_time; ++round) {
    const int active = MeasureRound(*run, step, es, round, budgeted, &out_of_time);
    rounds_run = round;
    const int left = DropAfterRound(*run, es, round, budgeted, out_of_time);
    ++run->done;
    bool more = round < plan.max_rounds && left > 1 && !out_of_time;
    if (budgeted) more = BcastFlag(more && MPI_Wtime() - step.start < step.budget);
    run->Progress("size=" + step.label + tag + " round=" + std::to_string(round) +
                  " measured=" + std::to_string(active) + " survivors=" + std::to_string(left));
    if (!more) break;
  }
  return rounds_run;
}

// --compare: every valid candidate again, all rounds, no halving, no
// budget.  Returns the size's keys "exhaustive", "exhaustive_rounds" and
// "exhaustive_elapsed_s".
json SweepExhaustive(ProbeRun* run, Step& step, const std::vector<Entry>& entries) {
  const double start = MPI_Wtime();
  std::vector<Entry> sweep;
  for (const Entry& e : entries) {
    if (!e.valid) continue;
    Entry x = e;
    x.samples.clear();
    x.dropped_in_round = -1;
    sweep.push_back(x);
  }
  const int rounds = RunRounds(run, step, sweep, false, " exhaustive");
  const double elapsed = MPI_Wtime() - start;
  run->exhaustive_spent += elapsed;
  json list = json::array();
  for (const Entry& e : sweep)
    list.push_back({{"candidate", e.words},
                    {"samples_us", e.samples},
                    {"median_us", e.samples.empty() ? json(nullptr) : json(Median(e.samples))},
                    {"reps", e.samples.size()}});
  return {{"exhaustive", list}, {"exhaustive_rounds", rounds}, {"exhaustive_elapsed_s", elapsed}};
}

json EntriesJson(const std::vector<Entry>& entries) {
  json cj = json::array();
  for (const Entry& e : entries) {
    json x;
    x["candidate"] = e.words;
    x["samples_us"] = e.samples;
    x["median_us"] = e.samples.empty() ? json(nullptr) : json(Median(e.samples));
    x["reps"] = e.samples.size();
    x["dropped_in_round"] = e.dropped_in_round < 0 ? json(nullptr) : json(e.dropped_in_round);
    x["valid"] = e.valid;
    x["fell_back"] = e.fell_back;
    if (!e.error.empty()) x["error"] = e.error;
    cj.push_back(x);
  }
  return cj;
}

}  // namespace

bool BcastFlag(bool v) {
  int x = v ? 1 : 0;
  PMPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return x != 0;
}

bool AnyRank(bool v) {
  int x = v ? 1 : 0, y = 0;
  PMPI_Allreduce(&x, &y, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return y != 0;
}

void PrintProgress(int rank, long done, long total, double seconds_left, const std::string& what) {
  if (rank != 0) return;
  std::printf("progress %ld %ld %.1f %s\n", done, total, std::max(0.0, seconds_left), what.c_str());
  std::fflush(stdout);
}

double ProbeRun::SecondsLeft() const {
  double el = MPI_Wtime() - t_start;
  if (!exhaustive && !compare) return plan->budget_s - el;
  return done > 0 ? el / static_cast<double>(done) * static_cast<double>(total - done) : 0.0;
}

void ProbeRun::Progress(const std::string& what) const { PrintProgress(rank, done, total, SecondsLeft(), what); }

ProbeRun StartRun(const Plan& plan, int rank, bool exhaustive, bool compare, size_t steps) {
  ProbeRun run;
  run.plan = &plan;
  run.rank = rank;
  run.exhaustive = exhaustive;
  run.compare = compare;
  run.halving.margin = std::max(plan.margin, 2 * plan.noise_floor);
  run.t_start = MPI_Wtime();
  run.steps = steps;
  // --compare: validation and budgeted rounds, then the exhaustive rounds.
  run.steps_per_size = 1 + plan.max_rounds + (compare ? plan.max_rounds : 0);
  run.total = static_cast<long>(steps) * run.steps_per_size;
  return run;
}

json MeasureSize(ProbeRun* run, size_t si, MemKind mem, uint64_t bytes, const std::vector<Candidate>& cands,
                 Buffers* buf) {
  const Plan& plan = *run->plan;
  Step step = StartStep(*run, si, mem, bytes, buf);
  std::vector<std::string> skipped;
  std::vector<Entry> entries = MakeEntries(*run, cands, step, &skipped);
  if (!run->exhaustive) OrderByPreviousMedians(run->previous_median[mem], &entries);
  Validate(*run, step, entries);
  ++run->done;
  run->Progress("size=" + step.label + " validated");

  const int rounds_run = RunRounds(run, step, entries, !run->exhaustive, "");
  std::map<std::string, double>& prev = run->previous_median[mem];
  prev.clear();
  for (const Entry& e : entries)
    if (e.valid && !e.samples.empty()) prev[e.words] = Median(e.samples);
  const double budgeted_elapsed = MPI_Wtime() - step.start;
  run->done = static_cast<long>(si) * run->steps_per_size + 1 + plan.max_rounds;
  json sweep;
  if (run->compare) {
    run->budgeted_spent += budgeted_elapsed;
    sweep = SweepExhaustive(run, step, entries);
  }
  run->done = static_cast<long>(si + 1) * run->steps_per_size;

  json cj = EntriesJson(entries);
  json sj = {{"bytes", bytes},
             {"memory", MemKindName(mem)},
             {"iterations", step.iters},
             {"rounds", rounds_run},
             {"budget_s", run->exhaustive ? json(nullptr) : json(step.budget)},
             {"elapsed_s", run->compare ? budgeted_elapsed : MPI_Wtime() - step.start},
             {"candidates", cj},
             {"skipped", skipped}};
  if (run->compare) sj.update(sweep);
  return sj;
}

}  // namespace mltuner
