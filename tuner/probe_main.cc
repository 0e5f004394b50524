// mlprobe: measures allreduce candidates for the tuner.
//
//   mpirun -np N [-x MULTILANE_RANKS_PER_NODE=..] mlprobe --plan PLAN.json --out RESULT.json
//          [--exhaustive | --compare] [--profile PROFILE.txt]
//
// Per size of the plan: every candidate is validated once against
// PMPI_Allreduce (a wrong one is dropped and reported), then measured in
// rounds; each round adds reps_per_round repetitions to every survivor
// (candidates interleaved), and successive halving (search.h: Survivors)
// keeps the contenders, within the time budget (split over the sizes still to
// do).  The system MPI (passthrough) is always measured.  --exhaustive
// measures every candidate in every round, whatever the budget.  --compare
// does, per size, the budgeted search exactly as the default mode and right
// after it, in the same process, an exhaustive sweep of every valid candidate
// at that size (max_rounds x reps_per_round repetitions, candidates
// interleaved); the budget applies to the budgeted parts only.  The result
// keeps the budgeted measurements under "candidates" and adds the sweep under
// "exhaustive", so that mlregret compares both from the same minute.
//
// A repetition: `warmup` untimed calls, a barrier, then `iterations` calls
// each timed locally; the per-iteration times are reduced with MAX over the
// ranks and the repetition's sample is the median (or mean) of those maxima.
// All decisions are taken from values every rank holds equal (MAX-reduced
// samples) or that rank 0 broadcasts (the clock), so every rank agrees.
//
// Rank 0 prints `progress <done> <total> <seconds_left> <what>` lines and
// writes RESULT.json (format: tuner/README.md).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "candidates.h"
#include "mlallreduce.h"
#include "tool_device.h"
#include "plan.h"
#include "search.h"
#include "vocab/mpi_families.h"

using nlohmann::json;
using namespace mltuner;

namespace {

int g_rank = 0;

void Progress(long done, long total, double seconds_left, const std::string& what) {
  if (g_rank != 0) return;
  std::printf("progress %ld %ld %.1f %s\n", done, total, std::max(0.0, seconds_left), what.c_str());
  std::fflush(stdout);
}

bool BcastString(std::string* s) {
  unsigned long long n = s->size();
  PMPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  s->resize(n);
  if (n > 0) PMPI_Bcast(&(*s)[0], static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  return true;
}

// Rank 0's verdict, shared.
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

// The buffers of one memory kind.  Host: the calls use `send`/`recv`
// directly.  Device: the calls use device copies made through the library's
// CUDA module (tool_device.h), so mlprobe needs no CUDA of its own; `send` is
// uploaded once per size and the result read back into `recv` to validate.
class Buffers {
 public:
  std::vector<float> send, recv, ref;  // host: the call's buffers; device: the host side

  // Device buffers on GPU `gpu` (< 0: host buffers).  ok() says whether the
  // allocation worked.
  Buffers(size_t count, int gpu) : send(count), recv(count), ref(count) {
    if (gpu < 0) return;
    device_ = true;
    dsend_ = mla_tool_device_alloc(gpu, count * 4);
    drecv_ = mla_tool_device_alloc(gpu, count * 4);
  }
  ~Buffers() {
    mla_tool_device_free(dsend_);
    mla_tool_device_free(drecv_);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  bool ok() const { return !device_ || (dsend_ != nullptr && drecv_ != nullptr); }
  const void* call_send() const { return device_ ? dsend_ : send.data(); }
  void* call_recv() { return device_ ? drecv_ : recv.data(); }
  // After `send` was filled: the call's send buffer holds it.
  bool Upload(size_t count) { return !device_ || mla_tool_memcpy(dsend_, send.data(), count * 4) == 0; }
  // Fills the call's receive buffer with a pattern no right result has.
  bool Poison(size_t count) {
    std::memset(recv.data(), 0x5a, count * 4);
    return !device_ || mla_tool_memcpy(drecv_, recv.data(), count * 4) == 0;
  }
  // After a call: `recv` holds its result.
  bool Download(size_t count) { return !device_ || mla_tool_memcpy(recv.data(), drecv_, count * 4) == 0; }

 private:
  bool device_ = false;
  void* dsend_ = nullptr;
  void* drecv_ = nullptr;
};

// The GPU of this rank: ranks of a node fill GPUs in blocks of ranks_per_gpu
// (MULTILANE_RANKS_PER_GPU, else the node's ranks spread evenly), as the
// benchmark and the Slurm plugin place them; under Slurm's binding each task
// sees one GPU and takes it.
int GpuOfRank(const mla_layout& layout, int gpus) {
  int per_gpu = (layout.ranks_per_node + gpus - 1) / gpus;
  if (const char* v = std::getenv("MULTILANE_RANKS_PER_GPU"))
    if (std::atoi(v) > 0) per_gpu = std::atoi(v);
  return (layout.node_rank / std::max(1, per_gpu)) % gpus;
}

// Small integers: every partial sum is exact in fp32 whatever the order,
// so a right result equals PMPI_Allreduce's bit for bit.
void Fill(std::vector<float>& v, size_t count, int rank) {
  for (size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(static_cast<int>((i * 2654435761u + static_cast<size_t>(rank) * 7u) % 33u) - 16);
}

struct Entry {
  Candidate cand;
  std::string words;
  mla_choice choice{};
  std::vector<double> samples;
  bool valid = true;
  bool fell_back = false;  // the library sent the call to PMPI_Allreduce (unsupported)
  int dropped_in_round = -1;  // -1: survived; 0: dropped at validation
  std::string error;
};

int Run(int argc, char** argv) {
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int nranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  CLI::App app{"mlprobe: measure allreduce candidates for the multilane tuner"};
  std::string plan_path, out_path, profile_path;
  bool exhaustive = false;
  bool compare = false;
  app.add_option("--plan", plan_path, "plan JSON (tuner/README.md)")->required();
  app.add_option("--out", out_path, "result JSON written by rank 0")->required();
  app.add_option("--profile", profile_path, "also write the profile text decided from the result");
  auto* exh_opt =
      app.add_flag("--exhaustive", exhaustive, "measure every candidate in every round, ignoring the budget");
  app.add_flag("--compare", compare,
               "per size, the budgeted search and then an exhaustive sweep in the same run (for mlregret)")
      ->excludes(exh_opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e, g_rank == 0 ? std::cout : std::cerr, g_rank == 0 ? std::cerr : std::cerr);
    return rc == 0 ? 0 : 2;
  }

  // Rank 0 reads the plan; every rank parses the same text.
  std::string text, error;
  if (g_rank == 0) {
    std::ifstream in(plan_path);
    if (!in) {
      error = "cannot read the plan '" + plan_path + "'";
    } else {
      std::stringstream ss;
      ss << in.rdbuf();
      text = ss.str();
    }
  }
  if (!BcastFlag(error.empty())) {
    if (g_rank == 0) std::fprintf(stderr, "mlprobe: error: %s\n", error.c_str());
    return 2;
  }
  BcastString(&text);
  Plan plan;
  json plan_json = json::parse(text, nullptr, false);
  if (plan_json.is_discarded()) error = "the plan '" + plan_path + "' is not valid JSON";
  else if (!ParsePlan(plan_json, &plan, &error)) error = "plan '" + plan_path + "': " + error;
  if (!error.empty()) {
    if (g_rank == 0) std::fprintf(stderr, "mlprobe: error: %s\n", error.c_str());
    return 2;
  }

  mla_layout layout{};
  if (mla_comm_layout(MPI_COMM_WORLD, &layout) != MPI_SUCCESS) {
    if (g_rank == 0) std::fprintf(stderr, "mlprobe: error: mla_comm_layout failed\n");
    return 2;
  }
  if (g_rank == 0 && !mla_enabled())
    std::fprintf(stderr, "mlprobe: warning: libmlallreduce is disabled (see its warning): every candidate "
                         "runs the system MPI\n");

  // Device memory: every rank needs a GPU, or no rank measures it.
  const bool wants_device =
      std::find(plan.memories.begin(), plan.memories.end(), MemKind::kDevice) != plan.memories.end();
  int gpu = -1;
  if (wants_device) {
    const char* why = "";
    const int gpus = mla_tool_gpu_count(&why);
    if (gpus > 0) gpu = GpuOfRank(layout, gpus);
    std::string local = gpus > 0 ? "" : why;
    if (!BcastFlag(!AnyRank(gpus <= 0))) {
      if (g_rank == 0)
        std::fprintf(stderr, "mlprobe: error: memory \"device\": %s; measure host memory on this node\n",
                     local.empty() ? "a rank sees no GPU" : local.c_str());
      return 2;
    }
  }
  // The candidates of each memory kind (transport applies to device only).
  std::map<MemKind, std::vector<Candidate>> cands_of;
  for (MemKind mem : plan.memories) {
    std::vector<Candidate> c =
        plan.has_candidates ? plan.candidates : Expand(plan.space, Layout{mem, layout.ranks_per_node, layout.ranks_per_gpu});
    c.insert(c.begin(), Passthrough());
    cands_of[mem] = c;
  }
  // The steps: every size of every memory kind, host first.
  std::vector<std::pair<MemKind, uint64_t>> steps;
  for (MemKind mem : plan.memories)
    for (uint64_t bytes : plan.sizes) steps.emplace_back(mem, bytes);

  const double t_start = MPI_Wtime();
  // --compare: validation and budgeted rounds, then the exhaustive rounds.
  const long steps_per_size = 1 + plan.max_rounds + (compare ? plan.max_rounds : 0);
  const long total = static_cast<long>(steps.size()) * steps_per_size;
  long done = 0;
  double budgeted_spent = 0;    // --compare: seconds of the budgeted parts so far
  double exhaustive_spent = 0;  // --compare: seconds of the exhaustive sweeps so far
  auto seconds_left = [&]() {
    double el = MPI_Wtime() - t_start;
    if (!exhaustive && !compare) return plan.budget_s - el;
    return done > 0 ? el / static_cast<double>(done) * static_cast<double>(total - done) : 0.0;
  };
  const char* mode = compare ? "compare" : exhaustive ? "exhaustive" : "budgeted";
  Progress(0, total, exhaustive || compare ? 0 : plan.budget_s,
           std::string("start ") + mode + " sizes=" + std::to_string(steps.size()) +
               " candidates=" + std::to_string(cands_of.begin()->second.size()));

  const size_t max_count = plan.sizes.back() / 4;
  std::map<MemKind, std::unique_ptr<Buffers>> buffers;
  for (MemKind mem : plan.memories) {
    buffers[mem] = std::make_unique<Buffers>(max_count, mem == MemKind::kDevice ? gpu : -1);
    if (AnyRank(!buffers[mem]->ok())) {
      if (g_rank == 0)
        std::fprintf(stderr, "mlprobe: error: cannot allocate 2 x %s of device memory on a rank's GPU; "
                             "tune smaller sizes (--sizes)\n", FormatByteSize(max_count * 4).c_str());
      return 2;
    }
  }
  HalvingOptions halving;
  halving.margin = std::max(plan.margin, 2 * plan.noise_floor);

  // Budgeted mode: the candidates of a size are validated and measured in the
  // order of the previous size's medians (same memory; passthrough first), and
  // once the size's share of the budget is spent the rest is not measured.  The
  // first kAlwaysMeasured of that order are measured whatever the clock says,
  // so a size late in a tight budget still compares passthrough with the
  // previous size's best.  (At 1 GiB on 16 ranks sharing a GPU one call takes
  // seconds: a first round of every candidate would overrun any budget.)
  constexpr size_t kAlwaysMeasured = 3;
  std::map<MemKind, std::map<std::string, double>> previous_median;
  const std::string kNotMeasured = "not measured: the size's share of the time budget was spent (raise --budget)";

  json sizes_json = json::array();
  for (size_t si = 0; si < steps.size(); ++si) {
    const MemKind mem = steps[si].first;
    const uint64_t bytes = steps[si].second;
    const int count = static_cast<int>(bytes / 4);
    const std::string sz = (plan.memories.size() > 1 ? std::string(MemKindName(mem)) + ":" : std::string()) +
                           FormatByteSize(bytes);
    Buffers& buf = *buffers[mem];
    const std::vector<Candidate>& cands = cands_of[mem];
    const double size_start = MPI_Wtime();
    // The budget left for the budgeted parts (--compare: the exhaustive sweeps
    // do not count against it), split over the sizes still to do.
    const double spent = compare ? budgeted_spent : size_start - t_start;
    const double size_budget = (plan.budget_s - spent) / static_cast<double>(steps.size() - si);
    const int iters = plan.IterationsFor(bytes);

    std::vector<Entry> entries;
    std::vector<std::string> skipped;
    for (const Candidate& c : cands) {
      if (!c.IsPassthrough() && RedundantAtSize(plan.space, c, bytes)) {
        skipped.push_back(c.Render());
        continue;
      }
      Entry e;
      e.cand = c;
      e.words = c.Render();
      if (!ToChoice(plan.space, c, &e.choice, &e.error)) {
        e.valid = false;
        e.dropped_in_round = 0;
      }
      entries.push_back(e);
    }
    if (!exhaustive) {
      const std::map<std::string, double>& prev = previous_median[mem];
      auto key = [&](const Entry& e) {
        if (e.cand.IsPassthrough()) return -1.0;
        auto it = prev.find(e.words);
        return it == prev.end() ? std::numeric_limits<double>::infinity() : it->second;
      };
      std::stable_sort(entries.begin(), entries.end(),
                       [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
    }
    const double size_deadline = size_start + size_budget;
    // Budgeted parts: whether entry number `index` may still be measured
    // (rank 0's clock decides for all, a collective call on every rank).
    auto may_measure = [&](size_t index) {
      if (exhaustive || index < kAlwaysMeasured) return true;
      return BcastFlag(MPI_Wtime() < size_deadline);
    };

    // Validation: once per candidate, against PMPI_Allreduce.
    // The reference is the system MPI on host memory (what the staged
    // system MPI path computes for device buffers).
    const size_t ucount = static_cast<size_t>(count);
    Fill(buf.send, ucount, g_rank);
    const bool uploaded = buf.Upload(ucount);
    PMPI_Allreduce(buf.send.data(), buf.ref.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (size_t ei = 0; ei < entries.size(); ++ei) {
      Entry& e = entries[ei];
      if (!e.valid) continue;
      // --compare validates every candidate (its exhaustive sweep measures
      // them all); the budgeted search skips those it has no time for.
      if (!compare && !may_measure(ei)) {
        e.dropped_in_round = 0;
        e.error = kNotMeasured;
        continue;
      }
      bool copied = uploaded && buf.Poison(ucount);
      mla_reset_stats();
      int rc = mla_allreduce_with(buf.call_send(), buf.call_recv(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                  &e.choice);
      mla_stats st;
      mla_get_stats(&st);
      copied = copied && buf.Download(ucount);
      bool bad = !copied || rc != MPI_SUCCESS || std::memcmp(buf.recv.data(), buf.ref.data(), ucount * 4) != 0;
      if (AnyRank(bad)) {
        e.valid = false;
        e.dropped_in_round = 0;
        e.error = !copied               ? "copying to or from device memory failed"
                  : rc != MPI_SUCCESS ? "returned an MPI error"
                                      : "wrong result (differs from PMPI_Allreduce)";
        if (g_rank == 0)
          std::fprintf(stderr, "mlprobe: warning: %s at %s: %s; dropped\n", e.words.c_str(), sz.c_str(),
                       e.error.c_str());
      }
      // A candidate whose call the library passed on (to the system MPI, or
      // from NCCL to MPI staging) measured something else than itself.
      const bool passed_on = st.unsupported > 0 || st.calls_by_algo[MLA_ALGO_PASSTHROUGH] > 0 ||
                             (mem == MemKind::kDevice && (st.calls_by_path[MLA_PATH_STAGED] > 0 || st.nccl_fallbacks > 0));
      e.fell_back = !e.cand.IsPassthrough() && AnyRank(passed_on);
    }
    ++done;
    Progress(done, total, seconds_left(), "size=" + sz + " validated");

    // Rounds: each repetition measures every active entry once (interleaved);
    // halving drops entries after each round (budgeted), within the size's
    // budget.  Returns the number of rounds run.
    std::vector<double> t(static_cast<size_t>(iters)), tmax(static_cast<size_t>(iters));
    auto run_rounds = [&](std::vector<Entry>& es, bool budgeted, const std::string& tag) {
      int rounds_run = 0;
      bool out_of_time = false;
      for (int round = 1; round <= plan.max_rounds && !out_of_time; ++round) {
        int active = 0;
        for (int rep = 0; rep < plan.reps_per_round; ++rep) {
          active = 0;
          for (size_t ei = 0; ei < es.size(); ++ei) {
            Entry& e = es[ei];
            if (!e.valid || e.dropped_in_round >= 0) continue;
            // Out of time: keep what was measured; an entry without a sample
            // is not measured (below).  The first entries get their round.
            const bool guaranteed = round == 1 && ei < kAlwaysMeasured;
            if (budgeted && !guaranteed && (out_of_time || !may_measure(es.size()))) {
              out_of_time = true;
              continue;
            }
            ++active;
            for (int w = 0; w < plan.warmup; ++w)
              mla_allreduce_with(buf.call_send(), buf.call_recv(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                 &e.choice);
            PMPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < iters; ++i) {
              double t0 = MPI_Wtime();
              mla_allreduce_with(buf.call_send(), buf.call_recv(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                 &e.choice);
              t[static_cast<size_t>(i)] = (MPI_Wtime() - t0) * 1e6;
            }
            PMPI_Allreduce(t.data(), tmax.data(), iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            double v = 0;
            if (plan.rep_stat == "mean") {
              for (double x : tmax) v += x;
              v /= iters;
            } else {
              v = Median(tmax);
            }
            e.samples.push_back(v);
          }
        }
        rounds_run = round;
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
          std::vector<std::string> keep = Survivors(s, halving);
          for (Entry& e : es)
            if (e.valid && e.dropped_in_round < 0 && std::find(keep.begin(), keep.end(), e.words) == keep.end())
              e.dropped_in_round = round;
        }
        int left = 0;
        for (const Entry& e : es) left += e.valid && e.dropped_in_round < 0;
        ++done;
        bool more = round < plan.max_rounds && left > 1 && !out_of_time;
        if (budgeted) more = BcastFlag(more && MPI_Wtime() - size_start < size_budget);
        Progress(done, total, seconds_left(),
                 "size=" + sz + tag + " round=" + std::to_string(round) + " measured=" + std::to_string(active) +
                     " survivors=" + std::to_string(left));
        if (!more) break;
      }
      return rounds_run;
    };
    const int rounds_run = run_rounds(entries, !exhaustive, "");
    {
      std::map<std::string, double>& prev = previous_median[mem];
      prev.clear();
      for (const Entry& e : entries)
        if (e.valid && !e.samples.empty()) prev[e.words] = Median(e.samples);
    }
    const double budgeted_elapsed = MPI_Wtime() - size_start;
    done = static_cast<long>(si) * steps_per_size + 1 + plan.max_rounds;

    // --compare: every valid candidate again, all rounds, no halving, no budget.
    json exh_json = json::array();
    int exh_rounds = 0;
    double exh_elapsed = 0;
    if (compare) {
      budgeted_spent += budgeted_elapsed;
      const double exh_start = MPI_Wtime();
      std::vector<Entry> sweep;
      for (const Entry& e : entries) {
        if (!e.valid) continue;
        Entry x = e;
        x.samples.clear();
        x.dropped_in_round = -1;
        sweep.push_back(x);
      }
      exh_rounds = run_rounds(sweep, false, " exhaustive");
      exh_elapsed = MPI_Wtime() - exh_start;
      exhaustive_spent += exh_elapsed;
      for (const Entry& e : sweep)
        exh_json.push_back({{"candidate", e.words},
                            {"samples_us", e.samples},
                            {"median_us", e.samples.empty() ? json(nullptr) : json(Median(e.samples))},
                            {"reps", e.samples.size()}});
    }
    done = static_cast<long>(si + 1) * steps_per_size;

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
    json sj = {{"bytes", bytes},
               {"memory", MemKindName(mem)},
               {"iterations", iters},
               {"rounds", rounds_run},
               {"budget_s", exhaustive ? json(nullptr) : json(size_budget)},
               {"elapsed_s", compare ? budgeted_elapsed : MPI_Wtime() - size_start},
               {"candidates", cj},
               {"skipped", skipped}};
    if (compare) {
      sj["exhaustive"] = exh_json;
      sj["exhaustive_rounds"] = exh_rounds;
      sj["exhaustive_elapsed_s"] = exh_elapsed;
    }
    sizes_json.push_back(sj);
  }
  const double wall = MPI_Wtime() - t_start;
  Progress(total, total, 0, "done wall_s=" + std::to_string(wall));

  int rc = 0;
  if (g_rank == 0) {
    json result;
    result["tool"] = "mlprobe";
    result["library_version"] = mla_version();
    result["mode"] = mode;
    result["plan"] = plan_json;
    result["layout"] = {{"size", layout.size},
                        {"nodes", layout.nodes},
                        {"ranks_per_node", layout.ranks_per_node},
                        {"ranks_per_gpu", layout.ranks_per_gpu},
                        {"regular", layout.regular != 0},
                        {"gpus_regular", layout.gpus_regular != 0}};
    result["library_enabled"] = mla_enabled() != 0;
    result["wall_s"] = wall;
    if (compare) {
      result["budgeted_wall_s"] = budgeted_spent;
      result["exhaustive_wall_s"] = exhaustive_spent;
    }
    result["sizes"] = sizes_json;
    std::ofstream out(out_path);
    out << result.dump(1) << "\n";
    if (!out) {
      std::fprintf(stderr, "mlprobe: error: cannot write '%s'\n", out_path.c_str());
      rc = 1;
    }
    if (!profile_path.empty()) {
      SearchOptions so;
      so.noise_floor = plan.noise_floor;
      SearchResult sr = Decide(MeasurementsFromResult(result), so);
      std::ofstream pf(profile_path);
      pf << RenderProfile(sr.bins, {{"tuned_by", "mlprobe"}, {"ranks", std::to_string(nranks)},
                                    {"ranks_per_node", std::to_string(layout.ranks_per_node)}});
      if (!pf) {
        std::fprintf(stderr, "mlprobe: error: cannot write '%s'\n", profile_path.c_str());
        rc = 1;
      }
      std::fputs(FormatDecisionTable(sr.decisions).c_str(), stdout);
      for (const std::string& p : sr.problems) std::fprintf(stderr, "mlprobe: warning: %s\n", p.c_str());
    }
  }
  return BcastFlag(rc == 0) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // `mlprobe --mpi-version`: the first line of this build's MPI's version
  // (MPI_Get_library_version may run before MPI_Init): how `multilane` learns
  // the version of an MPI family it is not linked with (launcher/mpi_choice.h).
  if (argc == 2 && std::string(argv[1]) == "--mpi-version") {
    std::vector<char> text(MPI_MAX_LIBRARY_VERSION_STRING + 1, '\0');
    int len = 0;
    if (MPI_Get_library_version(text.data(), &len) != MPI_SUCCESS) return 1;
    std::printf("%s\n", mla::MpiVersionKey(text.data()).c_str());
    return 0;
  }
  MPI_Init(&argc, &argv);
  int rc = Run(argc, argv);
  MPI_Finalize();
  return rc;
}
