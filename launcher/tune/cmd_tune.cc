// cmd_tune.cc: `multilane tune`: resolves the request (tune_request.h) on
// this machine once (TuneSetup), plans the launches' layout, runs the probes
// (probe_launch.h), turns their timings into a profile and stores it (the
// record and its publishing: tune_record.h); none of them reads the request.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "launcher/commands.h"
#include "launcher/context.h"
#include "db/node_type.h"
#include "launcher/mpi_choice.h"
#include "launcher/mps_daemon.h"
#include "launcher/tune/probe_launch.h"
#include "launcher/process.h"
#include "launcher/store_target.h"
#include "launcher/tune/tune_gpu.h"
#include "launcher/tune/tune_layout.h"
#include "launcher/tune/tune_partition.h"
#include "launcher/tune/tune_record.h"
#include "vocab/refuse.h"

namespace multilane {
namespace {

// The GPUs of a node of this tune: the ones NVML reports here, and inside
// Slurm no more than the allocation's (SLURM_GPUS_ON_NODE).  A GPU that
// Slurm lists but no driver shows (a test cluster's stand-in) is none.
int GpusPerNode(const mldb::NodeFingerprint& fp) {
  int gpus = static_cast<int>(fp.gpus.size());
  if (InSlurmAllocation()) {
    if (const char* v = std::getenv("SLURM_GPUS_ON_NODE"); v != nullptr && std::atoi(v) > 0)
      gpus = std::min(gpus, std::atoi(v));
  }
  return gpus;
}

// --weights REPORT.json: the job's calls per size bin, each with its mean
// message size (priced there by mla::PriceCalls, as the report's advice is).
bool CallsFromReport(const mlreport::JobReport& report, const std::vector<mltuner::MemKind>& kinds,
                     std::vector<mla::BinCalls>* calls, std::string* error) {
  calls->clear();
  for (const mlreport::ReportBin& b : report.bins) {
    mltuner::MemKind mem;
    if (b.calls <= 0 || !mltuner::MemKindFromName(b.memory, &mem)) continue;
    if (std::find(kinds.begin(), kinds.end(), mem) == kinds.end()) continue;
    mla::BinCalls c;
    c.kind = mem == mltuner::MemKind::kDevice ? mla::MemKind::kDevice : mla::MemKind::kHost;
    c.from = b.from;
    c.calls = static_cast<double>(b.calls);
    c.mean_bytes = static_cast<double>(b.bytes) / static_cast<double>(b.calls);
    calls->push_back(c);
  }
  if (calls->empty())
    return mla::Refuse(error,
                       report.path + ": the job made no allreduce call of a tuned memory kind; tune without --weights");
  return true;
}

// What a tune on this node knows before its first probe: the request as
// resolved on this machine (ResolveRequest), which every later stage takes.
struct TuneSetup {
  TuneRequest asked;  // the request as given (its family, --budget, --ranks-per-gpu, --weights, ...)
  std::string probe;  // the MPI family's probe program
  std::string mpi;    // the MPI's version line
  mldb::NodeFingerprint fp;
  int nodes = 1;  // the allocation's nodes in Slurm, else the virtual ones (at least 1)
  int gpus = 0;   // GPUs of a node of this tune
  int cores = 0;
  mltuner::Plan plan;   // what every launch measures: the sizes of this node's memory kinds
  bool device = false;  // device memory is tuned
  StoreTarget target;
  bool rollback = false;   // a rollback journal, not WAL (OpenStoreTarget)
  bool to_system = false;  // the profile is (or becomes) the system database's
};

// A tune from its launches to its summary.
struct TuneRun {
  std::vector<ProbeLaunch> launches;
  LayoutVerdict layout;
  TuneOutcome outcome;
  std::vector<mla::BinCalls> weights;  // --weights: the job's calls
  std::vector<RanksPerGpuScore> scores;
  TuneTimes times;
};

// Resolves the request on this machine: the MPI family's probe and version,
// the node type, the GPUs, the memory kinds and sizes measured, the target
// database.  0, or the exit status of the tune with the message printed.
int ResolveRequest(const TuneRequest& request, TuneSetup* s) {
  std::string error;
  s->asked = request;
  // The probe of the MPI family to tune with (mlprobe, mlprobe-mpich).
  s->probe = ProbeOfFamily(FindInstallation().probe, request.family->name);
  if (access(s->probe.c_str(), X_OK) != 0)
    return Fail("the probe program " + s->probe + " is missing: build multilane or set MULTILANE_PROBE");
  s->mpi = MpiVersionOfFamily(request.family->name, s->probe, &error);
  if (s->mpi.empty()) return Fail(error);
  s->fp = mldb::CollectNodeFingerprint(s->mpi);
  s->gpus = GpusPerNode(s->fp);
  if (!ResolveTuneMemory(request.memory, s->gpus, &s->plan.memories, &error)) return Fail(error);
  s->plan.sizes = request.sizes.bytes;
  s->plan.mem = s->plan.memories.front();
  s->plan.comment = "multilane tune of node type " + s->fp.Key();
  s->device = std::count(s->plan.memories.begin(), s->plan.memories.end(), mltuner::MemKind::kDevice) > 0;
  s->target = ChooseStoreTarget(request.database, request.system);
  if (s->target.path.empty()) return Fail("no user database path (no HOME): give --db PATH or set MULTILANE_USER_DB");
  s->to_system = s->target.publish || request.for_system;
  // A partition's tune inside its allocation (the probe job of `tune
  // --partition`) writes a file on the shared file system: no WAL there.
  s->rollback = !request.partition.empty() && InSlurmAllocation();
  s->cores = UsableCores();
  const char* slurm_nodes = std::getenv("SLURM_JOB_NUM_NODES");
  s->nodes = std::max(1, !InSlurmAllocation() ? request.virtual_nodes : slurm_nodes ? std::atoi(slurm_nodes) : 1);
  return 0;
}

// A host tune without a list of ranks per GPU: one launch of --np ranks
// (default: the cores; in Slurm, the allocation's tasks).  0, or the exit
// status of the tune with the message printed.
int PlanOneLaunch(const TuneSetup& s, TuneRun* run) {
  ProbeLaunch l;
  l.ranks_per_gpu = s.asked.ranks_per_gpu.empty() ? 0 : s.asked.ranks_per_gpu.front();
  l.np = s.asked.np > 0 ? s.asked.np : static_cast<int>(std::max(2L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (InSlurmAllocation() && s.asked.np <= 0) {
    const char* tasks = std::getenv("SLURM_NTASKS");
    if (tasks != nullptr && std::atoi(tasks) > 0) l.np = std::atoi(tasks);
  }
  // All the ranks on a node outside Slurm (one machine, whatever
  // --virtual-nodes says), the allocation's share inside.
  l.per_node = InSlurmAllocation() ? (l.np + s.nodes - 1) / s.nodes : l.np;
  run->layout = CheckOversubscription(l.per_node, s.cores, s.asked.allow_oversubscribed, s.to_system);
  if (run->layout.verdict == Oversubscription::kRefused) return Fail(run->layout.message);
  if (run->layout.verdict == Oversubscription::kMarked)
    std::fprintf(stderr, "multilane tune: %s\n", run->layout.message.c_str());
  if (s.asked.virtual_nodes > 0 && l.np % s.asked.virtual_nodes != 0)
    return Fail("--np " + std::to_string(l.np) + " is not a multiple of --virtual-nodes " +
                std::to_string(s.asked.virtual_nodes));
  run->launches.push_back(l);
  return 0;
}

// A tune with device memory or a list: one launch per ranks-per-GPU value,
// that many ranks on each GPU of each (virtual) node; values that cannot be
// measured here are noted and left out.  0, or the exit status of the tune
// with the message printed.
int PlanPerGpuLaunches(const TuneSetup& s, TuneRun* run) {
  std::string error;
  if (!CheckNpPerGpu(s.asked.np, s.device, &error)) return Fail(error);
  const std::vector<int> values =
      s.asked.ranks_per_gpu.empty() ? DefaultRanksPerGpuList(s.cores, s.gpus) : s.asked.ranks_per_gpu;
  // Outside Slurm the (virtual) nodes share this machine's cores.
  const bool one_machine = !InSlurmAllocation();
  for (const TuneLaunch& t : PlanLaunches(values, s.nodes, s.gpus, one_machine ? s.cores : s.cores * s.nodes,
                                          s.asked.allow_oversubscribed && !s.to_system)) {
    if (!t.skip.empty()) {
      std::fprintf(stderr, "multilane tune: note: %d rank(s) per GPU not measured: %s\n", t.ranks_per_gpu,
                   t.skip.c_str());
      continue;
    }
    ProbeLaunch l;
    l.ranks_per_gpu = t.ranks_per_gpu;
    l.np = t.np;
    l.per_node = t.ranks_per_node;
    const LayoutVerdict v =
        CheckOversubscription(one_machine ? l.np : l.per_node, s.cores, s.asked.allow_oversubscribed, s.to_system);
    if (v.verdict == Oversubscription::kRefused) continue;  // PlanLaunches said so already
    if (v.verdict == Oversubscription::kMarked) run->layout = v;
    run->launches.push_back(l);
  }
  if (run->launches.empty())
    return Fail(
        "no ranks-per-GPU value can be measured on this layout (see the notes above); give "
        "--virtual-nodes 2 on a one-GPU machine, or values that fit the cores");
  if (run->layout.verdict == Oversubscription::kMarked)
    std::fprintf(stderr, "multilane tune: %s\n", run->layout.message.c_str());
  return 0;
}

// The launches.  A host tune without a list of ranks per GPU is one launch
// (PlanOneLaunch); a tune with device memory or a list launches once per
// ranks-per-GPU value (PlanPerGpuLaunches).  0, or the exit status of the
// tune with the message printed.
int PlanTuneLaunches(const TuneSetup& s, TuneRun* run) {
  TuneOutcome& o = run->outcome;
  o.per_gpu_launches = s.device || s.asked.ranks_per_gpu.size() > 1;
  o.device = s.device;
  o.cores = s.cores;
  o.partition = s.asked.partition;
  o.virtual_nodes = s.asked.virtual_nodes > 0;
  o.weighted = s.asked.weights.has_value();
  const int rc = o.per_gpu_launches ? PlanPerGpuLaunches(s, run) : PlanOneLaunch(s, run);
  o.oversubscribed = run->layout.verdict == Oversubscription::kMarked;
  return rc;
}

// The probe's layout: the variables the library reads, and nothing that
// would change its decisions.
void ClearProbeEnvironment() {
  for (const char* name :
       {"MULTILANE_ALGO", "MULTILANE_PROFILE", "MULTILANE_PROFILE_FILE", "MULTILANE_LANES", "MULTILANE_CHUNK",
        "MULTILANE_TRANSPORT", "LD_PRELOAD", "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"})
    unsetenv(name);
}

// The recommended ranks per GPU: the lowest summed (--weights: weighted)
// time over the sizes; sets run->outcome's recommended value and best launch,
// run->weights and run->scores.  0, or the exit status of the tune with the
// message printed.
int Recommend(const TuneSetup& s, TuneRun* run) {
  std::map<int, std::vector<mltuner::Decision>> by_ppg;
  for (const ProbeLaunch& l : run->launches) by_ppg[l.ranks_per_gpu] = l.decided.decisions;
  std::string error;
  if (s.asked.weights && !CallsFromReport(*s.asked.weights, s.plan.memories, &run->weights, &error)) return Fail(error);
  const int recommended = RecommendRanksPerGpu(by_ppg, run->weights, &run->scores);
  run->outcome.recommended = recommended;
  run->outcome.best = &run->launches.front();
  for (const ProbeLaunch& l : run->launches)
    if (l.ranks_per_gpu == recommended) run->outcome.best = &l;
  return 0;
}

// Prints what the tune decided and stored: each launch's decision table,
// the ranks-per-GPU scores, the stored profile, and any overrun.
void PrintTuneSummary(const TuneSetup& s, const TuneRun& run, const mldb::ProfileRecord& record) {
  const TuneOutcome& o = run.outcome;
  for (const ProbeLaunch& l : run.launches) {
    if (run.launches.size() > 1)
      std::printf("\n%d rank(s) per GPU (%d ranks%s):\n", l.ranks_per_gpu, l.np, l.mps ? ", MPS" : "");
    std::printf("%s", mltuner::FormatDecisionTable(l.decided.decisions).c_str());
    if (!l.repeat_note.empty()) std::printf("%s\n", l.repeat_note.c_str());
  }
  if (o.per_gpu_launches) {
    std::printf("\n%-14s %14s %6s\n", "ranks per GPU", run.weights.empty() ? "sum time_us" : "job_us",
                run.weights.empty() ? "sizes" : "bins");
    for (const auto& sc : run.scores)
      std::printf("%-14d %14.1f %6d%s\n", sc.ranks_per_gpu, sc.total_us, sc.sizes,
                  sc.ranks_per_gpu == o.recommended ? "  <- recommended" : "");
    if (!run.weights.empty()) {
      std::printf("job_us: the --weights job's calls, each bin priced at its mean message size (docs/report.md)\n");
      int beyond = 0;
      for (const auto& sc : run.scores) beyond = std::max(beyond, sc.extrapolated);
      if (beyond > 0)
        std::printf(
            "note: %d of the job's size bin(s) lie beyond the tuned sizes and were extrapolated; give --sizes "
            "the range of the job's messages to measure them\n",
            beyond);
    }
  }
  std::printf(
      "\nprofile %lld stored in %s for node type %s (%d node(s), %d ranks; tuned in %.1f s of a %.1f s budget)\n",
      static_cast<long long>(record.id), s.target.path.c_str(), s.fp.Key().c_str(), o.best->nodes, o.best->np,
      run.times.total_s, s.asked.budget_s);
  if (o.per_gpu_launches) std::printf("recommended ranks per GPU: %d\n", o.recommended);
  if (run.layout.verdict == Oversubscription::kMarked) std::printf("%s\n", run.layout.message.c_str());
  const std::string overrun = ExplainOverrun(run.times);
  if (!overrun.empty()) std::printf("note: %s\n", overrun.c_str());
  std::printf("%s", record.profile_text.c_str());
}

int Tune(const TuneRequest& request, std::chrono::steady_clock::time_point start) {
  InterruptGuard interrupts;  // SIGINT/SIGTERM: stop the probe, remove the folder, store nothing
  TuneSetup s;
  if (const int rc = ResolveRequest(request, &s); rc != 0) return rc;
  TuneRun run;
  if (const int rc = PlanTuneLaunches(s, &run); rc != 0) return rc;

  // Open the database first: a broken one fails before minutes of probes.
  std::string error;
  auto store = OpenStoreTarget(s.target, &error, s.rollback);
  if (!store) return Fail(error);
  TuneFolder folder;  // removed on every way out of this function unless --keep
  if (!folder.Make(s.asked.keep, TemporaryParent(), &error)) return Fail(error);
  ClearProbeEnvironment();
  std::fprintf(stderr, "multilane tune: node type %s: %s\n", s.fp.Key().c_str(), s.fp.Description().c_str());
  std::fprintf(stderr, "multilane tune: budget %.1f s in all, %zu launch(es)\n", s.asked.budget_s, run.launches.size());
  run.times.budget_s = s.asked.budget_s;
  run.times.probe_budget_s = 0;  // the launches' planned measurements, added as they run
  run.times.before_s = SecondsSince(start);
  run.times.measuring_s = 0;
  const std::string mps = s.device ? MpsControlProgram() : "";  // several ranks on a GPU share it through MPS
  const ProbeContext context{
      *s.asked.family,    s.probe,          s.plan, folder, mps, s.asked.virtual_nodes, SrunMpiOf(s.asked),
      s.asked.exhaustive, s.asked.budget_s, start};
  if (const int rc = RunLaunches(context, &run.launches, &run.times); rc != 0) return rc;
  for (const ProbeLaunch& l : run.launches)
    if (l.decided.bins.empty()) return Fail("the probes measured nothing usable; nothing was stored");
  if (const int rc = Recommend(s, &run); rc != 0) return rc;

  const auto after_start = std::chrono::steady_clock::now();
  mldb::ProfileRecord record = BuildTuneRecord(run.launches, run.outcome, s.mpi, s.fp.Key(), SecondsSince(start));
  if (!StoreTuneRecord(store.get(), s.target, s.fp, run.launches, &record, &error)) return Fail(error);
  run.times.total_s = SecondsSince(start);
  run.times.after_s = SecondsSince(after_start);
  PrintTuneSummary(s, run, record);
  return 0;
}

// --mpi's help, from the family table: "openmpi (mpirun, mlprobe) or mpich
// (mpiexec.mpich, mlprobe-mpich)".
std::string TuneMpiHelp() {
  std::string out = "The MPI family to tune with: ";
  const auto& all = mla::MpiFamilies();
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out += i + 1 == all.size() ? " or " : ", ";
    out += all[i].name + " (" + all[i].launcher + ", " + mla::FamilyProbeFile(all[i].name) + ")";
  }
  return out + "; the profile is stored for that MPI's version";
}

}  // namespace

void AddTuneCommand(CLI::App& app, int* status) {
  auto* opt = new TuneOptions();  // lives as long as the app
  CLI::App* cmd = app.add_subcommand("tune", "Measure every candidate on this node type and store the winning profile");
  cmd->add_option("--budget", opt->budget_s,
                  "Seconds the whole tune may take, starting the MPI job included (the probes' successive halving "
                  "gets what is left; an overrun is reported)")
      ->capture_default_str();
  cmd->add_option("--sizes", opt->sizes, "Message sizes FROM:TO in bytes (K, M, G suffixes)")->capture_default_str();
  cmd->add_option("--step", opt->step, "Factor between measured sizes")->capture_default_str();
  cmd->add_option("--memory", opt->memory, "host, device or all buffers; auto: all where the node has GPUs, else host")
      ->capture_default_str();
  cmd->add_option("--np", opt->np,
                  "Ranks of the probes: on this host, all of them (default: its usable cores); inside an "
                  "allocation, all of them (srun --ntasks); with --partition, ranks PER NODE of each node "
                  "type's probe job, on each of its nodes (default: the node type's CPUs)");
  cmd->add_option("--mpi", opt->mpi, TuneMpiHelp());
  cmd->add_option("--srun-mpi", opt->srun_mpi,
                  "srun's --mpi for the probes inside an allocation (default: the family's, " + mla::SrunMpiAdvice() +
                      "); 'default': leave it to the cluster's MpiDefault");
  cmd->add_option("--virtual-nodes", opt->virtual_nodes, "Split the ranks into this many virtual nodes (one machine)");
  cmd->add_option("--ranks-per-gpu", opt->ranks_per_gpu,
                  "Ranks sharing one GPU: one value, or a list (1,2,4,8) measured one launch each; with device "
                  "memory the default is powers of two up to min(8, cores per GPU) and the profile recommends "
                  "the fastest");
  cmd->add_option("--weights", opt->weights,
                  "A job report (MULTILANE_REPORT) whose calls per size weight the choice of ranks per GPU "
                  "(default: every tuned size alike)");
  cmd->add_option("--partition", opt->partition,
                  "Slurm partition the profile is for; outside an allocation, submits one probe job per node type "
                  "of the partition with sbatch and stores into the system database (or --db)");
  cmd->add_flag("--system", opt->system, "Store in the system database (the admin's) instead of the user's");
  cmd->add_option("--db", opt->database, "Store in this database file");
  cmd->add_flag("--exhaustive", opt->exhaustive, "Measure every candidate fully (slow; for comparisons)");
  cmd->add_option("--keep", opt->keep,
                  "Keep the plan and the probe's result in this folder (else a temporary folder is removed); with "
                  "--partition, also each probe job's script, output and database (tune-NODE.*) and its plan and "
                  "probe result (tune-NODE/)");
  cmd->add_flag("--allow-oversubscribed", opt->allow_oversubscribed,
                "Allow more ranks per node than cores (tests, virtual nodes): the profile is marked oversubscribed; "
                "never for the system database");
  cmd->add_flag("--for-system", opt->for_system, "(internal: a partition's probe job for the system database)")
      ->group("");
  cmd->callback([opt, status] {
    const auto start = std::chrono::steady_clock::now();
    TuneRequest request;
    std::string error;
    if (!ParseTuneRequest(*opt, &request, &error))
      *status = Fail(error);
    else if (!request.partition.empty() && !InSlurmAllocation())
      *status = TunePartition(request, start);  // one probe job per node type, each a Tune in its allocation
    else
      *status = Tune(request, start);
  });
}

}  // namespace multilane
