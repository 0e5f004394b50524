// mlprobe: measures allreduce candidates for the tuner.
//
//   mpirun -np N [-x MULTILANE_RANKS_PER_NODE=..] mlprobe --plan PLAN.json --out RESULT.json
//          [--ranks N] [--exhaustive | --compare] [--profile PROFILE.txt]
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
// writes RESULT.json (format: tuner/README.md).  This file reads the plan
// and writes the result; probe_sizes.h measures each size.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuner/candidates.h"
#include "mlallreduce.h"
#include "libmlallreduce/tool_device.h"
#include "tuner/plan.h"
#include "tuner/probe_sizes.h"
#include "tuner/probe_system.h"
#include "tuner/search.h"
#include "vocab/mpi_families.h"
#include "vocab/outside_input.h"
#include "vocab/ranks_per_gpu.h"

using nlohmann::json;
using namespace mltuner;

namespace {

int g_rank = 0;
// Why Open MPI coll/tuned's dynamic rules were left off before MPI_Init ("":
// on, so that the system's algorithms can be probed).
std::string g_rules_left_off;

bool BcastString(std::string* s) {
  unsigned long long n = s->size();
  PMPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  s->resize(n);
  if (n > 0) PMPI_Bcast(&(*s)[0], static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  return true;
}

struct Options {
  std::string plan_path, out_path, profile_path;
  int ranks = 0;  // --ranks: the ranks it was launched as (0: not said)
  bool exhaustive = false;
  bool compare = false;
};

// Reads the command line into *o.  Returns -1 to go on, else the exit
// status (--help: 0, a bad command line: 2, its message printed).
int ParseOptions(int argc, char** argv, Options* o) {
  CLI::App app{"mlprobe: measure allreduce candidates for the multilane tuner"};
  app.add_option("--plan", o->plan_path, "plan JSON (tuner/README.md)")->required();
  app.add_option("--out", o->out_path, "result JSON written by rank 0")->required();
  app.add_option("--profile", o->profile_path, "also write the profile text decided from the result");
  app.add_option("--ranks", o->ranks, "the ranks it was launched as: refuse a world of another size")
      ->check(CLI::PositiveNumber);
  auto* exh_opt =
      app.add_flag("--exhaustive", o->exhaustive, "measure every candidate in every round, ignoring the budget");
  app.add_flag("--compare", o->compare,
               "per size, the budgeted search and then an exhaustive sweep in the same run (for mlregret)")
      ->excludes(exh_opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e, g_rank == 0 ? std::cout : std::cerr, g_rank == 0 ? std::cerr : std::cerr);
    return rc == 0 ? 0 : 2;
  }
  return -1;
}

// Whether this world has the `launched` ranks the launcher was asked for (0:
// not said).  A launcher whose PMI does not match the MPI starts every rank
// as a world of its own, whose measurements would be a memcpy's: each such
// world's rank 0 says so and the probe measures nothing.
bool WorldIsWhole(int launched, int nranks) {
  if (launched == 0 || launched == nranks) return true;
  if (g_rank == 0) {
    std::vector<char> version(MPI_MAX_LIBRARY_VERSION_STRING + 1, '\0');
    int len = 0;
    MPI_Get_library_version(version.data(), &len);
    const mla::MpiFamilyInfo& family = mla::MpiFamilyRow(mla::MpiFamilyFromVersion(version.data()));
    std::fprintf(stderr,
                 "mlprobe: error: launched as %d ranks, but this MPI world has %d: the launcher started separate "
                 "worlds and nothing was measured; under Slurm run srun --mpi=%s for %s (or set MpiDefault=%s in "
                 "slurm.conf)\n",
                 launched, nranks, family.srun_mpi.c_str(), family.version_words.front().c_str(),
                 family.srun_mpi.c_str());
  }
  return false;
}

// Rank 0 reads the plan at `path` (bounded: mla::ReadInputFile); every rank
// parses the same text into *plan (and *plan_json).  On failure rank 0
// prints why and all return false.
bool ReadPlan(const std::string& path, Plan* plan, json* plan_json) {
  std::string text, error;
  if (g_rank == 0 && !mla::ReadInputFile(path, &text, &error)) error = "plan '" + path + "': " + error;
  if (!BcastFlag(error.empty())) {
    if (g_rank == 0) std::fprintf(stderr, "mlprobe: error: %s\n", error.c_str());
    return false;
  }
  BcastString(&text);
  *plan_json = json::parse(text, nullptr, false);
  if (plan_json->is_discarded())
    error = "the plan '" + path + "' is not valid JSON";
  else if (!ParsePlan(*plan_json, plan, &error))
    error = "plan '" + path + "': " + error;
  if (!error.empty()) {
    if (g_rank == 0) std::fprintf(stderr, "mlprobe: error: %s\n", error.c_str());
    return false;
  }
  return true;
}

// Device memory: every rank needs a GPU, or no rank measures it.  Sets *gpu
// to this rank's GPU (-1: the plan has no device memory).  When a rank sees
// none, rank 0 prints why and all return false.
bool ChooseGpu(const Plan& plan, const mla_layout& layout, int* gpu) {
  *gpu = -1;
  const bool wants_device =
      std::find(plan.memories.begin(), plan.memories.end(), MemKind::kDevice) != plan.memories.end();
  if (!wants_device) return true;
  // MULTILANE_RANKS_PER_GPU, as the library reads it (unset: the node's ranks
  // spread evenly); under Slurm's binding each task sees one GPU and takes it.
  const char* variable = std::getenv("MULTILANE_RANKS_PER_GPU");
  int per_gpu = 0;
  std::string bad;
  if (!BcastFlag(!AnyRank(!mla::ParseRanksPerGpuVariable(variable ? variable : "", &per_gpu, &bad)))) {
    if (bad.empty()) bad = "another rank's MULTILANE_RANKS_PER_GPU must be " + mla::RanksPerGpuRule();
    if (g_rank == 0) std::fprintf(stderr, "mlprobe: error: %s\n", bad.c_str());
    return false;
  }
  const char* why = "";
  const int gpus = mla_tool_gpu_count(&why);
  if (gpus > 0) *gpu = mla::GpuOfRank(layout.node_rank, layout.ranks_per_node, per_gpu, gpus);
  std::string local = gpus > 0 ? "" : why;
  if (!BcastFlag(!AnyRank(gpus <= 0))) {
    if (g_rank == 0)
      std::fprintf(stderr, "mlprobe: error: memory \"device\": %s; measure host memory on this node\n",
                   local.empty() ? "a rank sees no GPU" : local.c_str());
    return false;
  }
  return true;
}

// The candidates of each memory kind, passthrough first (transport applies
// to device only): the plan's list, else the space expanded for the layout
// and then the system MPI's own algorithms (host memory).  Rank 0 warns
// about algorithms the plan names that this MPI does not have.
std::map<MemKind, std::vector<Candidate>> CandidatesOf(const Plan& plan, const mla_layout& layout,
                                                       SystemAlgorithms* system) {
  std::map<MemKind, std::vector<Candidate>> cands_of;
  for (MemKind mem : plan.memories) {
    std::vector<Candidate> c = plan.candidates;
    if (!plan.has_candidates) {
      c = Expand(plan.space, Layout{mem, layout.ranks_per_node, layout.ranks_per_gpu});
      for (const Candidate& sc : system->Candidates(plan.space, mem)) c.push_back(sc);
    }
    c.insert(c.begin(), Passthrough());
    cands_of[mem] = c;
  }
  const nlohmann::json described = system->Describe();
  if (g_rank == 0)
    for (const auto& name : described["not_offered"])
      std::fprintf(stderr, "mlprobe: warning: space.mpi: this MPI has no allreduce algorithm '%s' to probe (%s)\n",
                   name.get<std::string>().c_str(),
                   described["offered"].empty() ? described.value("why_none", "").c_str()
                                                : ("it offers: " + described["offered"].dump()).c_str());
  return cands_of;
}

// The buffers of each memory kind, for the plan's largest size.  When a
// rank cannot allocate them, rank 0 prints why and all return false.
bool AllocateBuffers(const Plan& plan, int gpu, std::map<MemKind, std::unique_ptr<Buffers>>* buffers) {
  const size_t max_count = plan.sizes.back() / 4;
  for (MemKind mem : plan.memories) {
    (*buffers)[mem] = std::make_unique<Buffers>(max_count, mem == MemKind::kDevice ? gpu : -1);
    if (AnyRank(!(*buffers)[mem]->ok())) {
      if (g_rank == 0)
        std::fprintf(stderr,
                     "mlprobe: error: cannot allocate 2 x %s of device memory on a rank's GPU; "
                     "tune smaller sizes (--sizes)\n",
                     FormatByteSize(max_count * 4).c_str());
      return false;
    }
  }
  return true;
}

// Rank 0: writes --profile, the profile text decided from `result`, and
// prints its decision table and problems.  Returns 0, or 1 when the file
// cannot be written.
int WriteProfile(const Options& o, const Plan& plan, const json& result, int nranks, const mla_layout& layout) {
  int rc = 0;
  SearchOptions so;
  so.noise_floor = plan.noise_floor;
  SearchResult sr = Decide(MeasurementsFromResult(result), so);
  std::ofstream pf(o.profile_path);
  pf << RenderProfile(sr.bins, {{"tuned_by", "mlprobe"},
                                {"ranks", std::to_string(nranks)},
                                {"ranks_per_node", std::to_string(layout.ranks_per_node)}});
  if (!pf) {
    std::fprintf(stderr, "mlprobe: error: cannot write '%s'\n", o.profile_path.c_str());
    rc = 1;
  }
  std::fputs(FormatDecisionTable(sr.decisions).c_str(), stdout);
  for (const std::string& p : sr.problems) std::fprintf(stderr, "mlprobe: warning: %s\n", p.c_str());
  return rc;
}

// Rank 0: writes RESULT.json (format: tuner/README.md) and --profile.
// Returns 0, or 1 when a file cannot be written.
int WriteResult(const Options& o, const Plan& plan, const json& plan_json, const mla_layout& layout, int nranks,
                const ProbeRun& run, const char* mode, double wall, const json& sizes_json) {
  int rc = 0;
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
  result["system_algorithms"] = run.system->Describe();
  result["wall_s"] = wall;
  if (run.compare) {
    result["budgeted_wall_s"] = run.budgeted_spent;
    result["exhaustive_wall_s"] = run.exhaustive_spent;
  }
  result["sizes"] = sizes_json;
  std::ofstream out(o.out_path);
  out << result.dump(1) << "\n";
  if (!out) {
    std::fprintf(stderr, "mlprobe: error: cannot write '%s'\n", o.out_path.c_str());
    rc = 1;
  }
  if (!o.profile_path.empty() && WriteProfile(o, plan, result, nranks, layout) != 0) rc = 1;
  return rc;
}

int Run(int argc, char** argv) {
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int nranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Options o;
  const int parsed = ParseOptions(argc, argv, &o);
  if (parsed >= 0) return parsed;
  if (!WorldIsWhole(o.ranks, nranks)) return 2;
  Plan plan;
  json plan_json;
  if (!ReadPlan(o.plan_path, &plan, &plan_json)) return 2;

  mla_layout layout{};
  if (mla_comm_layout(MPI_COMM_WORLD, &layout) != MPI_SUCCESS) {
    if (g_rank == 0) std::fprintf(stderr, "mlprobe: error: mla_comm_layout failed\n");
    return 2;
  }
  if (g_rank == 0 && !mla_enabled())
    std::fprintf(stderr,
                 "mlprobe: warning: libmlallreduce is disabled (see its warning): every candidate "
                 "runs the system MPI\n");
  int gpu = -1;
  if (!ChooseGpu(plan, layout, &gpu)) return 2;
  SystemAlgorithms system(g_rules_left_off);  // freed before MPI_Finalize (end of Run)
  std::map<MemKind, std::vector<Candidate>> cands_of = CandidatesOf(plan, layout, &system);
  // The steps: every size of every memory kind, host first.
  std::vector<std::pair<MemKind, uint64_t>> steps;
  for (MemKind mem : plan.memories)
    for (uint64_t bytes : plan.sizes) steps.emplace_back(mem, bytes);

  ProbeRun run = StartRun(plan, g_rank, o.exhaustive, o.compare, steps.size());
  run.system = &system;
  run.nranks = nranks;
  const char* mode = o.compare ? "compare" : o.exhaustive ? "exhaustive" : "budgeted";
  PrintProgress(g_rank, 0, run.total, o.exhaustive || o.compare ? 0 : plan.budget_s,
                std::string("start ") + mode + " sizes=" + std::to_string(steps.size()) +
                    " candidates=" + std::to_string(cands_of.begin()->second.size()));
  std::map<MemKind, std::unique_ptr<Buffers>> buffers;
  if (!AllocateBuffers(plan, gpu, &buffers)) return 2;

  json sizes_json = json::array();
  for (size_t si = 0; si < steps.size(); ++si) {
    const MemKind mem = steps[si].first;
    sizes_json.push_back(MeasureSize(&run, si, mem, steps[si].second, cands_of[mem], buffers[mem].get()));
  }
  const double wall = MPI_Wtime() - run.t_start;
  PrintProgress(g_rank, run.total, run.total, 0, "done wall_s=" + std::to_string(wall));
  const int rc = g_rank == 0 ? WriteResult(o, plan, plan_json, layout, nranks, run, mode, wall, sizes_json) : 0;
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
  // `mlprobe --version`: this build's version, without starting MPI: how
  // `multilane doctor` checks that the probe starts (the loader finds its
  // libraries); an MPI_Init as a singleton would take seconds.
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("%s\n", MLA_VERSION_STRING);
    return 0;
  }
  // Open MPI: lets the probe force coll/tuned's algorithms (unless the
  // user's own coll/tuned settings are in force); harmless elsewhere.
  g_rules_left_off = mlsys::PrepareBeforeInit();
  MPI_Init(&argc, &argv);
  int rc = Run(argc, argv);
  MPI_Finalize();
  return rc;
}
