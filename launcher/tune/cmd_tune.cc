// cmd_tune.cc: `multilane tune`: runs the probe program on this machine (or
// inside a Slurm allocation), turns its timings into a profile and stores it
// (the record and its publishing: tune_record.h).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vocab/mpi_families.h"
#include "vocab/profile.h"
#include "vocab/ranks_per_gpu.h"
#include "commands.h"
#include "context.h"
#include "mpi_choice.h"
#include "db/node_type.h"
#include "vocab/outside_input.h"
#include "db/paths.h"
#include "db/profile_store.h"
#include "process.h"
#include "progress.h"
#include "store_target.h"
#include "tune_budget.h"
#include "tune_folder.h"
#include "tune_gpu.h"
#include "report_reader.h"
#include "mps_daemon.h"
#include "output_file.h"
#include "tune_layout.h"
#include "tune_options.h"
#include "tune_record.h"
#include "tuner/candidates.h"
#include "tuner/plan.h"
#include "tuner/repeat.h"
#include "tuner/search.h"

namespace multilane {
namespace {

// "4K:64M" -> 4K, 16K, ... 64M (times `step`).
bool ParseSizes(const std::string& text, int step, std::vector<uint64_t>* out, std::string* error) {
  const size_t colon = text.find(':');
  uint64_t lo = 0, hi = 0;
  if (colon == std::string::npos || !mltuner::ParseByteSize(text.substr(0, colon), &lo) ||
      !mltuner::ParseByteSize(text.substr(colon + 1), &hi) || lo < 4 || hi < lo) {
    *error =
        "--sizes '" + mldb::Excerpt(text) + "' must be FROM:TO with byte sizes, FROM >= 4 and TO >= FROM, e.g. 4K:64M";
    return false;
  }
  if (step < 2) {
    *error = "--step must be 2 or more";
    return false;
  }
  for (uint64_t s = lo; s <= hi; s *= static_cast<uint64_t>(step)) {
    out->push_back(s / 4 * 4);
    if (s > hi / static_cast<uint64_t>(step)) break;
  }
  return true;
}

// One progress bar over all the probe launches of a tune: launch `index` of
// `count` maps its probe's steps into the whole.
struct SharedProgress {
  ProgressBar* bar = nullptr;
  int index = 0;
  int count = 1;
  std::string label;  // "ranks/GPU 2: " when there are several launches
};

// Runs the probe; draws progress from its "progress ..." lines.  Returns its
// exit status; the other lines of its output land in *output.  On SIGINT or
// SIGTERM (InterruptGuard) it stops the probe (SIGTERM, which mpirun and srun
// pass on to the ranks) and returns -1.
int RunProbe(const std::vector<std::string>& command, const SharedProgress& progress, std::string* output) {
  pid_t pid = 0;
  int fd = -1;
  const int rc = SpawnWithPipe(command, false, &pid, &fd);
  if (rc != 0) {
    *output = "cannot start " + command[0] + ": " + std::strerror(rc);
    return 127;
  }
  std::string pending;
  char buf[4096];
  bool interrupted = false;
  for (;;) {
    if (InterruptSignal() != 0) {
      interrupted = true;
      break;
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
      const std::string line = pending.substr(0, nl + 1);
      ProgressLine p;
      if (ParseProgressLine(line, &p)) {
        p.done += static_cast<long>(progress.index) * p.total;
        p.total *= progress.count;
        p.what = progress.label + p.what;
        progress.bar->Update(p);
      } else {
        *output += line;
      }
    }
  }
  *output += pending;
  if (interrupted) kill(pid, SIGTERM);
  close(fd);
  const int status = WaitChild(pid, false);
  return interrupted ? -1 : status;
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The ranks per node of the probe: all of them outside Slurm (one machine,
// whatever --virtual-nodes says), the allocation's share inside.
int RanksPerNode(int np) {
  if (!InSlurmAllocation()) return np;
  const char* nodes = std::getenv("SLURM_JOB_NUM_NODES");
  const int n = nodes != nullptr ? std::max(1, std::atoi(nodes)) : 1;
  return (np + n - 1) / n;
}

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

// The probe command of launch `l`: srun inside an allocation, else the MPI
// family's launcher, forwarding the layout's variables (set here).
std::vector<std::string> ProbeCommand(const TuneOptions& opt, const Installation& install, const ProbeLaunch& l,
                                      const std::string& plan_path, const std::string& result_path) {
  // Every rank of a probe launch runs the probe, linked with the family build:
  // the launch certifies it (docs/all-in-or-all-out.md), as multilane run does,
  // so that the start-up agreement runs without PMIx across nodes too (srun
  // --mpi=pmi2 shows no rank that its siblings on other nodes run it).
  setenv("MULTILANE_ALL_RANKS", "1", 1);
  std::vector<std::string> forward = {"MULTILANE_ALL_RANKS"};
  if (opt.virtual_nodes > 0) {
    setenv("MULTILANE_RANKS_PER_NODE", std::to_string(l.np / opt.virtual_nodes).c_str(), 1);
    forward.push_back("MULTILANE_RANKS_PER_NODE");
  }
  if (l.ranks_per_gpu > 0) {
    setenv("MULTILANE_RANKS_PER_GPU", std::to_string(l.ranks_per_gpu).c_str(), 1);
    forward.push_back("MULTILANE_RANKS_PER_GPU");
  }
  if (l.mps) {
    forward.push_back("CUDA_MPS_PIPE_DIRECTORY");
    forward.push_back("CUDA_MPS_LOG_DIRECTORY");
  }
  std::vector<std::string> command;
  if (InSlurmAllocation()) {
    command = {"srun", "--kill-on-bad-exit=1"};
    const mla::MpiFamilyInfo* family = mla::FindMpiFamily(opt.mpi);
    if (family != nullptr && !family->srun_mpi.empty()) command.push_back("--mpi=" + family->srun_mpi);
    if (opt.np > 0 || l.ranks_per_gpu > 0) command.push_back("--ntasks=" + std::to_string(l.np));
    if (l.ranks_per_gpu > 0) command.push_back("--ntasks-per-node=" + std::to_string(l.per_node));
  } else {
    const LauncherKind kind = LauncherKindOfFamily(opt.mpi);
    command = {LauncherOfFamily(opt.mpi), RanksFlag(kind), std::to_string(l.np)};
    // The family's own flags (the table's: Open MPI 4 and 5 alike; hydra none).
    if (l.np > UsableCores()) {
      const std::vector<std::string> flags = OversubscribeFlags(opt.mpi);
      command.insert(command.end(), flags.begin(), flags.end());
    }
    command = ForwardVariables(kind, command, forward);
  }
  for (const std::string& a : {install.probe, std::string("--plan"), plan_path, std::string("--out"), result_path})
    command.push_back(a);
  if (opt.exhaustive) command.push_back("--exhaustive");
  return command;
}

// What one probe launch wrote: its measurements (those the library passed
// to the system MPI marked invalid), nodes and measuring time.
struct ProbeOutput {
  std::vector<mltuner::Measurement> measurements;
  int nodes = 1;
  double measuring_s = -1;
};

// Reads the probe's result at `result_path` into *out.  0, or the exit
// status of the tune with the message printed.
int ReadProbeResult(const std::string& result_path, ProbeOutput* out) {
  std::string result_text, error;
  if (!mldb::ReadInputFile(result_path, &result_text, &error, /*refuse_links=*/true))
    return Fail("the probe wrote no readable result at " + result_path + ": " + error);
  nlohmann::json result = nlohmann::json::parse(result_text, nullptr, false);
  if (result.is_discarded()) return Fail("the probe wrote no readable result at " + result_path);

  // The probe's result is outside input: read it without letting the JSON
  // library throw past us, and name the file when it is not what we wrote.
  try {
    if (!mltuner::ReadMeasurements(result, &out->measurements, &error))
      return Fail(result_path + ": not a probe result (" + error + "); nothing was stored");
    // A candidate the library passed to the system MPI measured the system
    // MPI: it must not win under its own name.
    for (const auto& size : result.value("sizes", nlohmann::json::array())) {
      for (const auto& c : size.value("candidates", nlohmann::json::array())) {
        if (!c.value("fell_back", false)) continue;
        for (auto& m : out->measurements)
          if (m.bytes == size.value("bytes", uint64_t{0}) &&
              mltuner::MemKindName(m.mem) == size.value("memory", std::string("host")) &&
              m.candidate == c.value("candidate", std::string()))
            m.valid = false;
      }
    }
    if (result.contains("layout")) out->nodes = result["layout"].value("nodes", 1);
    out->measuring_s = result.value("wall_s", -1.0);
  } catch (const nlohmann::json::exception& e) {
    return Fail(result_path + ": not a probe result (" + e.what() + "); nothing was stored");
  }
  return 0;
}

// Writes `plan` as plan<tag>.json in `dir`, runs the probe of launch `l` on
// it and reads its result<tag>.json into *out; adds the probe's time to
// l->probe_s.  0, or the exit status of the tune with the message printed.
int RunProbePlan(const TuneOptions& opt, const Installation& install, const std::string& dir, const std::string& tag,
                 const nlohmann::json& plan, const SharedProgress& progress, ProbeLaunch* l, TuneFolder& folder,
                 ProbeOutput* out) {
  std::string error;
  const std::string plan_path = dir + "/plan" + tag + ".json", result_path = dir + "/result" + tag + ".json";
  // Written and read back without following links (tune_folder.h); a result
  // left from an earlier tune in a kept folder is never taken for this one's.
  if (!WriteOutputFile(plan_path, plan.dump(2) + "\n", &error)) return Fail(error);
  unlink(result_path.c_str());
  const std::vector<std::string> command = ProbeCommand(opt, install, *l, plan_path, result_path);
  std::string line;
  for (const std::string& a : command) line += (line.empty() ? "" : " ") + a;
  std::fprintf(stderr, "multilane tune: %s%s\n", line.c_str(), l->mps ? "  (under MPS)" : "");
  std::string output;
  const auto probe_start = std::chrono::steady_clock::now();
  const int status = RunProbe(command, progress, &output);
  l->probe_s += SecondsSince(probe_start);
  if (status == -1 || InterruptSignal() != 0) {
    const int sig = InterruptSignal() != 0 ? InterruptSignal() : SIGTERM;
    progress.bar->Finish();
    Fail(std::string("interrupted (") + strsignal(sig) + "): the probe was stopped and nothing was stored" +
         (folder.kept() ? "; its files are in " + dir : ""));
    return 128 + sig;
  }
  if (status != 0) {
    progress.bar->Finish();
    std::fputs(output.c_str(), stderr);
    return Fail("the probes failed (exit status " + std::to_string(status) + "); nothing was stored" +
                (folder.kept() ? "; their files are in " + dir : ""));
  }
  return ReadProbeResult(result_path, out);
}

// The plan of a launch's probe: `sizes` of `kinds`, `measuring_s` seconds
// of measurements.
nlohmann::json ProbePlan(const std::vector<uint64_t>& sizes, const std::vector<mltuner::MemKind>& kinds,
                         const mldb::NodeFingerprint& fp, double measuring_s) {
  nlohmann::json memory = nlohmann::json::array();
  for (auto k : kinds) memory.push_back(mltuner::MemKindName(k));
  return {{"sizes", sizes},
          {"memory", memory},
          {"budget_s", measuring_s},
          {"comment", "multilane tune of node type " + fp.Key()}};
}

// The repeat launch's plan (tuner/repeat.h): each size's winner and the
// system MPI again, in `measuring_s` seconds of measurements; the sizes the
// first launch's medians say would not fit are left out (*scope says which).
// Null when no size fits.
nlohmann::json RepeatProbePlan(const std::vector<uint64_t>& sizes, const std::vector<mltuner::MemKind>& kinds,
                               const mldb::NodeFingerprint& fp, double measuring_s, const ProbeLaunch& l,
                               mltuner::RepeatScope* scope) {
  nlohmann::json plan = ProbePlan(sizes, kinds, fp, measuring_s);
  plan["candidates"] = mltuner::RepeatCandidates(l.decided.decisions);
  plan["max_rounds"] = 2;
  mltuner::Plan costs;  // the repeat's repetitions and iterations, as the probe reads them
  std::string error;
  if (!mltuner::ParsePlan(plan, &costs, &error)) return nullptr;
  *scope = mltuner::ScopeRepeat(l.decided.decisions, l.measurements, costs, measuring_s);
  if (scope->sizes.empty()) return nullptr;
  plan["sizes"] = nlohmann::json::array();
  plan["size_candidates"] = nlohmann::json::array();
  for (const mltuner::RepeatSize& r : scope->sizes) {
    plan["sizes"].push_back(r.bytes);
    for (const auto& [mem, winner] : r.winners)
      plan["size_candidates"].push_back({{"memory", mltuner::MemKindName(mem)},
                                         {"size", r.bytes},
                                         {"candidates", winner == "passthrough" ? nlohmann::json::array()
                                                                                : nlohmann::json::array({winner})}});
  }
  return plan;
}

// Runs the probe of one launch and reads its result, then (when its share
// leaves time for it, tune_budget.h: PlanRepeat) launches it again to
// measure each size's winner and the system MPI a second time, which
// confirms or undoes the winners and widens the noise (tuner/repeat.h).  0,
// or the exit status of the tune with the message printed.  `budget_s`: the
// launch's share of the tune's budget (its MPI starts included); `progress`
// covers two steps of its bar, the first launch and the repeat.
int RunLaunch(const TuneOptions& opt, const std::vector<uint64_t>& sizes, const std::vector<mltuner::MemKind>& kinds,
              const mldb::NodeFingerprint& fp, const Installation& install, const std::string& dir, double budget_s,
              const SharedProgress& progress, ProbeLaunch* l, TuneFolder& folder) {
  const double launch_s = ExpectedLaunchSeconds(l->np, InSlurmAllocation());
  const RepeatPlan repeat = opt.exhaustive ? RepeatPlan{budget_s, 0, "--exhaustive measures once"}
                                           : PlanRepeat(budget_s, launch_s);
  const std::string tag = l->ranks_per_gpu > 0 && progress.count > 2 ? "-ppg" + std::to_string(l->ranks_per_gpu) : "";
  const BudgetPlan first_plan = PlanBudget(repeat.first_s, 0, launch_s);
  if (!first_plan.warning.empty()) std::fprintf(stderr, "multilane tune: note: %s\n", first_plan.warning.c_str());
  const auto launch_start = std::chrono::steady_clock::now();
  const double probe_s_before = l->probe_s;
  ProbeOutput first;
  SharedProgress step = progress;
  if (const int rc = RunProbePlan(opt, install, dir, tag, ProbePlan(sizes, kinds, fp, first_plan.probe_s), step, l,
                                  folder, &first);
      rc != 0)
    return rc;
  l->planned_measuring_s += first_plan.probe_s;
  l->measurements = first.measurements;
  l->nodes = first.nodes;
  l->measuring_s = first.measuring_s;
  l->decided = mltuner::Decide(l->measurements);
  for (const std::string& p : l->decided.problems) std::fprintf(stderr, "multilane tune: note: %s\n", p.c_str());
  std::string why_not = repeat.why_not;
  // The repeat gets what the first launch left of the share, its MPI start
  // and end counted as long as the first one's.
  const double first_launch_s =
      first.measuring_s >= 0 ? std::max(0.0, l->probe_s - probe_s_before - first.measuring_s) : launch_s;
  const double repeat_measuring_s =
      repeat.repeat_s <= 0 ? 0
                           : RepeatMeasuringSeconds(repeat.repeat_s - launch_s, budget_s, SecondsSince(launch_start),
                                                    first_launch_s, &why_not);
  if (repeat_measuring_s <= 0) {
    l->repeat_note = "no repeat launch: " + why_not;
    return 0;
  }
  mltuner::RepeatScope scope;
  const nlohmann::json plan = RepeatProbePlan(sizes, kinds, fp, repeat_measuring_s, *l, &scope);
  if (plan.is_null()) {
    l->repeat_note = "no repeat launch: measuring any size's winner and the system MPI again would take longer than "
                     "the " + std::to_string(static_cast<int>(repeat_measuring_s)) +
                     " s of measurements this launch's share leaves; a larger --budget measures each winner in a "
                     "second launch too";
    return 0;
  }
  l->planned_measuring_s += repeat_measuring_s;
  ++step.index;
  ProbeOutput again;
  if (const int rc = RunProbePlan(opt, install, dir, tag + "-repeat", plan, step, l, folder, &again); rc != 0)
    return rc;
  l->measuring_s += std::max(0.0, again.measuring_s);
  const mltuner::RepeatSummary summary = mltuner::ApplyRepeat(again.measurements, mltuner::SearchOptions{}.noise_floor, &l->decided);
  l->repeat_note = mltuner::DescribeRepeat(summary, l->decided);
  if (!scope.left_out.empty())
    l->repeat_note += "; left out of the repeat to keep to --budget: " + mltuner::DescribeLeftOut(scope);
  return 0;
}

// --weights REPORT.json: the job's calls per size bin, each with its mean
// message size (priced there by mla::PriceCalls, as the report's advice is).
bool CallsFromReport(const JobReport& report, const std::vector<mltuner::MemKind>& kinds,
                     std::vector<mla::BinCalls>* calls, std::string* error) {
  calls->clear();
  for (const ReportBin& b : report.bins) {
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
  if (calls->empty()) {
    *error = report.path + ": the job made no allreduce call of a tuned memory kind; tune without --weights";
    return false;
  }
  return true;
}

// What a tune on this node knows before its first probe: the options read
// and this machine's MPI, node type, memory kinds and database.
struct TuneSetup {
  std::vector<uint64_t> sizes;
  std::vector<int> ppg_values;  // --ranks-per-gpu
  JobReport weights_report;     // --weights
  Installation install;         // install.probe: the MPI family's probe
  std::string mpi;              // the MPI's version line
  mldb::NodeFingerprint fp;
  int gpus = 0;  // GPUs of a node of this tune
  std::vector<mltuner::MemKind> kinds;
  bool device = false;  // device memory is tuned
  StoreTarget target;
  bool to_system = false;  // the profile is (or becomes) the system database's
  int cores = 0;
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

// The options that need no machine: sizes, budget and ranks per GPU, and
// the --weights report, read before minutes of probes.  0, or the exit
// status of the tune with the message printed.
int ReadTuneOptions(const TuneOptions& opt, TuneSetup* s) {
  std::string error;
  if (!ParseSizes(opt.sizes, opt.step, &s->sizes, &error)) return Fail(error);
  if (opt.budget_s <= 0) return Fail("--budget must be a positive number of seconds");
  if (!opt.ranks_per_gpu.empty() &&
      !mla::ParseRanksPerGpuList(opt.ranks_per_gpu, "--ranks-per-gpu", &s->ppg_values, &error))
    return Fail(error);
  if (!opt.weights.empty() && !ReadJobReport(opt.weights, &s->weights_report, &error))
    return Fail("--weights: " + error);
  return 0;
}

// This machine as the tune sees it: the MPI family's probe and version, the
// node type, the GPUs and memory kinds, the target database.  0, or the exit
// status of the tune with the message printed.
int ReadThisMachine(const TuneOptions& opt, TuneSetup* s) {
  std::string error;
  if (mla::FindMpiFamily(opt.mpi) == nullptr)
    return Fail("--mpi '" + mldb::Excerpt(opt.mpi) + "' must be " + mla::MpiFamilyChoices());
  s->install = FindInstallation();
  // The probe of the MPI family to tune with (mlprobe, mlprobe-mpich).
  s->install.probe = ProbeOfFamily(s->install.probe, opt.mpi);
  if (access(s->install.probe.c_str(), X_OK) != 0)
    return Fail("the probe program " + s->install.probe + " is missing: build multilane or set MULTILANE_PROBE");
  std::string mpi_error;
  s->mpi = MpiVersionOfFamily(opt.mpi, s->install.probe, &mpi_error);
  if (s->mpi.empty()) return Fail(mpi_error);
  s->fp = mldb::CollectNodeFingerprint(s->mpi);
  s->gpus = GpusPerNode(s->fp);
  if (!ResolveTuneMemory(opt.memory, s->gpus, &s->kinds, &error)) return Fail(error);
  s->device = std::find(s->kinds.begin(), s->kinds.end(), mltuner::MemKind::kDevice) != s->kinds.end();
  s->target = ChooseStoreTarget(opt.database, opt.system);
  if (s->target.path.empty()) return Fail("no user database path (no HOME): give --db PATH or set MULTILANE_USER_DB");
  s->to_system = s->target.publish || opt.for_system;
  s->cores = UsableCores();
  return 0;
}

// A host tune without a list of ranks per GPU: one launch of --np ranks
// (default: the cores; in Slurm, the allocation's tasks).  0, or the exit
// status of the tune with the message printed.
int PlanOneLaunch(const TuneOptions& opt, const TuneSetup& s, TuneRun* run) {
  ProbeLaunch l;
  l.ranks_per_gpu = s.ppg_values.empty() ? 0 : s.ppg_values.front();
  l.np = opt.np > 0 ? opt.np : static_cast<int>(std::max(2L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (InSlurmAllocation() && opt.np <= 0) {
    const char* tasks = std::getenv("SLURM_NTASKS");
    if (tasks != nullptr && std::atoi(tasks) > 0) l.np = std::atoi(tasks);
  }
  l.per_node = RanksPerNode(l.np);
  run->layout = CheckOversubscription(l.per_node, s.cores, opt.allow_oversubscribed, s.to_system);
  if (run->layout.verdict == Oversubscription::kRefused) return Fail(run->layout.message);
  if (run->layout.verdict == Oversubscription::kMarked)
    std::fprintf(stderr, "multilane tune: %s\n", run->layout.message.c_str());
  if (opt.virtual_nodes > 0 && l.np % opt.virtual_nodes != 0)
    return Fail("--np " + std::to_string(l.np) + " is not a multiple of --virtual-nodes " +
                std::to_string(opt.virtual_nodes));
  run->launches.push_back(l);
  return 0;
}

// A tune with device memory or a list: one launch per ranks-per-GPU value,
// that many ranks on each GPU of each (virtual) node; values that cannot be
// measured here are noted and left out.  0, or the exit status of the tune
// with the message printed.
int PlanPerGpuLaunches(const TuneOptions& opt, TuneSetup* s, TuneRun* run) {
  if (opt.np > 0)
    return Fail(
        "--np cannot be given with device memory or several --ranks-per-gpu values: each launch has "
        "(ranks per GPU) x (GPUs per node) x (nodes) ranks; leave --np out");
  if (s->ppg_values.empty()) s->ppg_values = DefaultRanksPerGpuList(s->cores, s->gpus);
  int nodes = 1;
  if (InSlurmAllocation()) {
    if (const char* v = std::getenv("SLURM_JOB_NUM_NODES"); v != nullptr && std::atoi(v) > 0) nodes = std::atoi(v);
  } else if (opt.virtual_nodes > 0) {
    nodes = opt.virtual_nodes;
  }
  // Outside Slurm the (virtual) nodes share this machine's cores.
  const bool one_machine = !InSlurmAllocation();
  for (const TuneLaunch& t : PlanLaunches(s->ppg_values, nodes, s->gpus, one_machine ? s->cores : s->cores * nodes,
                                          opt.allow_oversubscribed && !s->to_system)) {
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
        CheckOversubscription(one_machine ? l.np : l.per_node, s->cores, opt.allow_oversubscribed, s->to_system);
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
int PlanTuneLaunches(const TuneOptions& opt, TuneSetup* s, TuneRun* run) {
  TuneOutcome& o = run->outcome;
  o.per_gpu_launches = s->device || s->ppg_values.size() > 1;
  o.device = s->device;
  o.cores = s->cores;
  const int rc = o.per_gpu_launches ? PlanPerGpuLaunches(opt, s, run) : PlanOneLaunch(opt, *s, run);
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

// Runs every launch in turn, each with its share of what is left of the
// budget, under one progress bar.  Launches with several ranks on a GPU run
// under a private MPS daemon (`mps_program`, "" when there is none), where
// the launch is on this machine.  Adds the probes' times to run->times.  0,
// or the exit status of the tune with the message printed.
int RunLaunches(const TuneOptions& opt, const TuneSetup& s, TuneFolder& folder, const std::string& mps_program,
                std::chrono::steady_clock::time_point start, TuneRun* run) {
  std::vector<ProbeLaunch>& launches = run->launches;
  const std::string dir = folder.path();
  bool mps_missing_noted = false;
  std::string error;
  ProgressBar bar(stderr);
  for (size_t i = 0; i < launches.size(); ++i) {
    ProbeLaunch& l = launches[i];
    MpsDaemon mps;  // stopped when this launch ends, on every way out
    const bool needs_mps = s.device && l.ranks_per_gpu > 1;
    const bool local = RanksStayOnThisNode(false);
    if (needs_mps && !mps_program.empty() && local) {
      if (mps.Start(mps_program, dir + "/mps", &error))
        l.mps = true;
      else
        std::fprintf(stderr, "multilane tune: note: MPS: %s; measuring without it\n", error.c_str());
    } else if (needs_mps && !mps_missing_noted) {
      mps_missing_noted = true;
      std::fprintf(stderr,
                   "multilane tune: note: %s: launches with several ranks per GPU run without MPS, so their "
                   "kernels are time-sliced and small sizes will be slow (jobs without MPS see the same)\n",
                   mps_program.empty() ? "nvidia-cuda-mps-control not found" : "MPS is started on this node only");
    }
    const double left = opt.budget_s - SecondsSince(start);
    const double share = std::max(0.1, left / static_cast<double>(launches.size() - i));
    // Two steps of the bar a launch: the probe and its repeat (RunLaunch).
    SharedProgress progress{&bar, 2 * static_cast<int>(i), 2 * static_cast<int>(launches.size()),
                            launches.size() > 1 ? "ranks/GPU " + std::to_string(l.ranks_per_gpu) + ": " : ""};
    const int rc = RunLaunch(opt, s.sizes, s.kinds, s.fp, s.install, dir, share, progress, &l, folder);
    if (rc != 0) return rc;
    run->times.probe_s += l.probe_s;
    run->times.probe_budget_s += l.planned_measuring_s;
    run->times.measuring_s += std::max(0.0, l.measuring_s);
  }
  bar.Finish();
  return 0;
}

// The recommended ranks per GPU: the lowest summed (--weights: weighted)
// time over the sizes; sets run->outcome's recommended value and best launch,
// run->weights and run->scores.  0, or the exit status of the tune with the
// message printed.
int Recommend(const TuneOptions& opt, const TuneSetup& s, TuneRun* run) {
  std::map<int, std::vector<mltuner::Decision>> by_ppg;
  for (const ProbeLaunch& l : run->launches) by_ppg[l.ranks_per_gpu] = l.decided.decisions;
  std::string error;
  if (!opt.weights.empty() && !CallsFromReport(s.weights_report, s.kinds, &run->weights, &error)) return Fail(error);
  const int recommended = RecommendRanksPerGpu(by_ppg, run->weights, &run->scores);
  run->outcome.recommended = recommended;
  run->outcome.best = &run->launches.front();
  for (const ProbeLaunch& l : run->launches)
    if (l.ranks_per_gpu == recommended) run->outcome.best = &l;
  return 0;
}

// Prints what the tune decided and stored: each launch's decision table,
// the ranks-per-GPU scores, the stored profile, and any overrun.
void PrintTuneSummary(const TuneOptions& opt, const TuneSetup& s, const TuneRun& run,
                      const mldb::ProfileRecord& record) {
  const ProbeLaunch* best = run.outcome.best;
  const int recommended = run.outcome.recommended;
  const bool per_gpu_launches = run.outcome.per_gpu_launches;
  for (const ProbeLaunch& l : run.launches) {
    if (run.launches.size() > 1)
      std::printf("\n%d rank(s) per GPU (%d ranks%s):\n", l.ranks_per_gpu, l.np, l.mps ? ", MPS" : "");
    std::printf("%s", mltuner::FormatDecisionTable(l.decided.decisions).c_str());
    if (!l.repeat_note.empty()) std::printf("%s\n", l.repeat_note.c_str());
  }
  if (per_gpu_launches) {
    std::printf("\n%-14s %14s %6s\n", "ranks per GPU", run.weights.empty() ? "sum time_us" : "job_us",
                run.weights.empty() ? "sizes" : "bins");
    for (const auto& sc : run.scores)
      std::printf("%-14d %14.1f %6d%s\n", sc.ranks_per_gpu, sc.total_us, sc.sizes,
                  sc.ranks_per_gpu == recommended ? "  <- recommended" : "");
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
      static_cast<long long>(record.id), s.target.path.c_str(), s.fp.Key().c_str(), best->nodes, best->np,
      run.times.total_s, opt.budget_s);
  if (per_gpu_launches) std::printf("recommended ranks per GPU: %d\n", recommended);
  if (run.layout.verdict == Oversubscription::kMarked) std::printf("%s\n", run.layout.message.c_str());
  const std::string overrun = ExplainOverrun(run.times);
  if (!overrun.empty()) std::printf("note: %s\n", overrun.c_str());
  std::printf("%s", record.profile_text.c_str());
}

int Tune(const TuneOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  TuneSetup s;
  if (const int rc = ReadTuneOptions(opt, &s); rc != 0) return rc;
  if (!opt.partition.empty() && !InSlurmAllocation()) return TunePartition(opt, start);
  InterruptGuard interrupts;  // SIGINT/SIGTERM: stop the probe, remove the folder, store nothing
  if (const int rc = ReadThisMachine(opt, &s); rc != 0) return rc;
  TuneRun run;
  if (const int rc = PlanTuneLaunches(opt, &s, &run); rc != 0) return rc;

  // Open the database first: a broken one fails before minutes of probes.
  // A partition's tune inside its allocation (the probe job of `tune
  // --partition`) writes a file on the shared file system: no WAL there.
  std::string error;
  auto store = OpenStoreTarget(s.target, &error, !opt.partition.empty() && InSlurmAllocation());
  if (!store) return Fail(error);
  TuneFolder folder;  // removed on every way out of this function unless --keep
  if (!folder.Make(opt.keep, TemporaryParent(), &error)) return Fail(error);
  ClearProbeEnvironment();
  const std::string mps_program = s.device ? MpsControlProgram() : "";
  std::fprintf(stderr, "multilane tune: node type %s: %s\n", s.fp.Key().c_str(), s.fp.Description().c_str());
  std::fprintf(stderr, "multilane tune: budget %.1f s in all, %zu launch(es)\n", opt.budget_s, run.launches.size());
  run.times.budget_s = opt.budget_s;
  run.times.probe_budget_s = 0;  // the launches' planned measurements, added as they run
  run.times.before_s = SecondsSince(start);
  run.times.measuring_s = 0;
  if (const int rc = RunLaunches(opt, s, folder, mps_program, start, &run); rc != 0) return rc;
  for (const ProbeLaunch& l : run.launches)
    if (l.decided.bins.empty()) return Fail("the probes measured nothing usable; nothing was stored");
  if (const int rc = Recommend(opt, s, &run); rc != 0) return rc;

  const auto after_start = std::chrono::steady_clock::now();
  mldb::ProfileRecord record = BuildTuneRecord(opt, run.launches, run.outcome, s.mpi, s.fp.Key(), SecondsSince(start));
  if (!StoreTuneRecord(store.get(), s.target, s.fp, run.launches, &record, &error)) return Fail(error);
  run.times.total_s = SecondsSince(start);
  run.times.after_s = SecondsSince(after_start);
  PrintTuneSummary(opt, s, run, record);
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
                  "Keep the plan and the probe's result in this folder (else a temporary folder is removed)");
  cmd->add_flag("--allow-oversubscribed", opt->allow_oversubscribed,
                "Allow more ranks per node than cores (tests, virtual nodes): the profile is marked oversubscribed; "
                "never for the system database");
  cmd->add_flag("--for-system", opt->for_system, "(internal: a partition's probe job for the system database)")
      ->group("");
  cmd->callback([opt, status] { *status = Tune(*opt); });
}

}  // namespace multilane
