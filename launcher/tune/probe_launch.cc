// probe_launch.cc: the probe launches of a tune (probe_launch.h).
#include "launcher/tune/probe_launch.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "launcher/context.h"
#include "launcher/mpi_choice.h"
#include "launcher/mps_daemon.h"
#include "launcher/output_file.h"
#include "launcher/process.h"
#include "launcher/progress.h"
#include "launcher/tune/tune_layout.h"
#include "tuner/repeat.h"
#include "vocab/outside_input.h"

namespace multilane {
namespace {

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

// The layout's variables of launch `l`, set here for the probe's ranks: the
// names to forward.
std::vector<std::string> SetLaunchVariables(int virtual_nodes, const ProbeLaunch& l) {
  // Every rank of a probe launch runs the probe, linked with the family build:
  // the launch certifies it (docs/all-in-or-all-out.md), as multilane run does,
  // so that the start-up agreement runs without PMIx across nodes too (srun
  // --mpi=pmi2 shows no rank that its siblings on other nodes run it).
  std::vector<std::string> forward;
  const auto set = [&forward](const char* name, const std::string& value) {
    setenv(name, value.c_str(), 1);
    forward.push_back(name);
  };
  set("MULTILANE_ALL_RANKS", "1");
  if (virtual_nodes > 0) set("MULTILANE_RANKS_PER_NODE", std::to_string(l.np / virtual_nodes));
  if (l.ranks_per_gpu > 0) set("MULTILANE_RANKS_PER_GPU", std::to_string(l.ranks_per_gpu));
  if (l.mps) forward.insert(forward.end(), {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"});
  return forward;
}

// The probe command of launch `l`: srun inside an allocation, else the MPI
// family's launcher (its row's flags), forwarding the layout's variables.
std::vector<std::string> ProbeCommand(const ProbeContext& c, const ProbeLaunch& l, const std::string& plan_path,
                                      const std::string& result_path) {
  const mla::MpiFamilyInfo& family = c.family;
  const std::vector<std::string> forward = SetLaunchVariables(c.virtual_nodes, l);
  std::vector<std::string> command;
  if (InSlurmAllocation()) {
    command = {"srun", "--kill-on-bad-exit=1"};
    if (!c.srun_mpi.empty()) command.push_back("--mpi=" + c.srun_mpi);
    command.push_back("--ntasks=" + std::to_string(l.np));
    if (l.ranks_per_gpu > 0) command.push_back("--ntasks-per-node=" + std::to_string(l.per_node));
  } else {
    // Each launch's session folder inside the tune's own, so that tunes
    // started at once never race for one (a value of the user's stays).
    for (const mla::LauncherGeneration& g : family.generations)
      if (!g.session_base_variable.empty()) setenv(g.session_base_variable.c_str(), c.folder.path().c_str(), 0);
    command = {family.launcher, family.ranks_flag, std::to_string(l.np)};
    if (l.np > UsableCores())
      command.insert(command.end(), family.oversubscribe_flags.begin(), family.oversubscribe_flags.end());
    command = ForwardVariables(family.launcher_kind, command, forward);
  }
  // --ranks: a probe whose world is not the launch's (srun with a PMI that
  // does not match the MPI) measures nothing (tuner/README.md).
  command.insert(command.end(), {c.probe, "--plan", plan_path, "--out", result_path, "--ranks", std::to_string(l.np)});
  if (c.exhaustive) command.push_back("--exhaustive");
  return command;
}

// Reads the probe's result at `result_path` into *out.  0, or the exit
// status of the tune with the message printed.
int ReadResultFile(const std::string& result_path, mltuner::ProbeResult* out) {
  std::string result_text, error;
  if (!mla::ReadInputFile(result_path, &result_text, &error, /*refuse_links=*/true))
    return Fail("the probe wrote no readable result at " + result_path + ": " + error);
  const nlohmann::json result = nlohmann::json::parse(result_text, nullptr, false);
  if (result.is_discarded()) return Fail("the probe wrote no readable result at " + result_path);
  if (!mltuner::ReadProbeResult(result, out, &error))
    return Fail(result_path + ": not a probe result (" + error + "); nothing was stored");
  return 0;
}

// Where the probes ran under srun with another --mpi than their family's
// (--srun-mpi): the likely cause and the fix, for the failure's message.
std::string SrunMpiHint(const ProbeContext& c) {
  if (!InSlurmAllocation() || c.srun_mpi == c.family.srun_mpi) return "";
  return "; the probes ran under srun " +
         (c.srun_mpi.empty() ? std::string("with the cluster's MpiDefault") : "--mpi=" + c.srun_mpi) + ", and " +
         c.family.version_words.front() + " needs --mpi=" + c.family.srun_mpi + ": leave --srun-mpi out";
}

// The tune's exit after a probe that was interrupted or failed with `status`
// (its `output` printed), the message printed.
int ProbeFailed(const ProbeContext& c, int status, const std::string& output, const SharedProgress& progress) {
  progress.bar->Finish();
  if (status == -1 || InterruptSignal() != 0) {
    const int sig = InterruptSignal() != 0 ? InterruptSignal() : SIGTERM;
    Fail(std::string("interrupted (") + strsignal(sig) + "): the probe was stopped and nothing was stored" +
         (c.folder.kept() ? "; its files are in " + c.folder.path() : ""));
    return 128 + sig;
  }
  std::fputs(output.c_str(), stderr);
  return Fail("the probes failed (exit status " + std::to_string(status) + "); nothing was stored" +
              (c.folder.kept() ? "; their files are in " + c.folder.path() : "") + SrunMpiHint(c));
}

// Writes `plan` as plan<tag>.json in the tune's folder, runs the probe of
// launch `l` on it and reads its result<tag>.json into *out; adds the
// probe's time to l->probe_s.  0, or the exit status of the tune with the
// message printed.
int RunProbePlan(const ProbeContext& c, const std::string& tag, const mltuner::Plan& plan,
                 const SharedProgress& progress, ProbeLaunch* l, mltuner::ProbeResult* out) {
  std::string error;
  const std::string dir = c.folder.path();
  const std::string plan_path = dir + "/plan" + tag + ".json", result_path = dir + "/result" + tag + ".json";
  // Written and read back without following links (tune_folder.h); a result
  // left from an earlier tune in a kept folder is never taken for this one's.
  if (!WriteOutputFile(plan_path, mltuner::PlanToJson(plan).dump(2) + "\n", &error)) return Fail(error);
  unlink(result_path.c_str());
  const std::vector<std::string> command = ProbeCommand(c, *l, plan_path, result_path);
  std::string line;
  for (const std::string& a : command) line += (line.empty() ? "" : " ") + a;
  std::fprintf(stderr, "multilane tune: %s%s\n", line.c_str(), l->mps ? "  (under MPS)" : "");
  std::string output;
  const auto probe_start = std::chrono::steady_clock::now();
  const int status = RunProbe(command, progress, &output);
  l->probe_s += SecondsSince(probe_start);
  if (status != 0 || InterruptSignal() != 0) return ProbeFailed(c, status, output, progress);
  return ReadResultFile(result_path, out);
}

// The repeat launch of `l` (tuner/repeat.h) in `measuring_s` seconds of
// measurements: each size's winner and the system MPI measured again, which
// confirms or undoes the winners and widens the noise; sets l->repeat_note.
// 0, or the exit status of the tune with the message printed.
int RunRepeat(const ProbeContext& c, const std::string& tag, double measuring_s, const SharedProgress& progress,
              ProbeLaunch* l) {
  mltuner::Plan plan;
  mltuner::RepeatScope scope;
  if (!mltuner::PlanRepeatLaunch(c.plan, l->decided, l->measurements, measuring_s, &plan, &scope)) {
    l->repeat_note =
        "no repeat launch: measuring any size's winner and the system MPI again would take longer than "
        "the " +
        std::to_string(static_cast<int>(measuring_s)) +
        " s of measurements this launch's share leaves; a larger --budget measures each winner in a "
        "second launch too";
    return 0;
  }
  l->planned_measuring_s += measuring_s;
  mltuner::ProbeResult again;
  if (const int rc = RunProbePlan(c, tag + "-repeat", plan, progress, l, &again); rc != 0) return rc;
  l->measuring_s += std::max(0.0, again.wall_s);
  const mltuner::RepeatSummary summary =
      mltuner::ApplyRepeat(again.measurements, mltuner::SearchOptions{}.noise_floor, &l->decided);
  l->repeat_note = mltuner::DescribeRepeat(summary, l->decided);
  if (!scope.left_out.empty())
    l->repeat_note += "; left out of the repeat to keep to --budget: " + mltuner::DescribeLeftOut(scope);
  return 0;
}

// Runs the probe of one launch and reads its result, then (when its share
// leaves time for it, tune_budget.h: PlanRepeat) its repeat.  0, or the exit
// status of the tune with the message printed.  `budget_s`: the launch's
// share of the tune's budget (its MPI starts included); `progress` covers
// two steps of its bar, the first launch and the repeat.
int RunLaunch(const ProbeContext& c, double budget_s, const SharedProgress& progress, ProbeLaunch* l) {
  const double launch_s = ExpectedLaunchSeconds(l->np, InSlurmAllocation());
  const RepeatPlan repeat =
      c.exhaustive ? RepeatPlan{budget_s, 0, "--exhaustive measures once"} : PlanRepeat(budget_s, launch_s);
  const std::string tag = l->ranks_per_gpu > 0 && progress.count > 2 ? "-ppg" + std::to_string(l->ranks_per_gpu) : "";
  const BudgetPlan first_plan = PlanBudget(repeat.first_s, 0, launch_s);
  if (!first_plan.warning.empty()) std::fprintf(stderr, "multilane tune: note: %s\n", first_plan.warning.c_str());
  const auto launch_start = std::chrono::steady_clock::now();
  const double probe_s_before = l->probe_s;
  mltuner::Plan plan = c.plan;
  plan.budget_s = first_plan.probe_s;
  mltuner::ProbeResult first;
  if (const int rc = RunProbePlan(c, tag, plan, progress, l, &first); rc != 0) return rc;
  l->planned_measuring_s += first_plan.probe_s;
  l->measurements = first.measurements;
  l->nodes = first.nodes;
  l->measuring_s = first.wall_s;
  l->decided = mltuner::Decide(l->measurements);
  for (const std::string& p : l->decided.problems) std::fprintf(stderr, "multilane tune: note: %s\n", p.c_str());
  std::string why_not = repeat.why_not;
  // The repeat gets what the first launch left of the share, its MPI start
  // and end counted as long as the first one's.
  const double first_launch_s =
      first.wall_s >= 0 ? std::max(0.0, l->probe_s - probe_s_before - first.wall_s) : launch_s;
  const double repeat_measuring_s = repeat.repeat_s <= 0
                                        ? 0
                                        : RepeatMeasuringSeconds(repeat.repeat_s - launch_s, budget_s,
                                                                 SecondsSince(launch_start), first_launch_s, &why_not);
  if (repeat_measuring_s <= 0) {
    l->repeat_note = "no repeat launch: " + why_not;
    return 0;
  }
  SharedProgress step = progress;
  ++step.index;
  return RunRepeat(c, tag, repeat_measuring_s, step, l);
}

// Starts the MPS daemon of launch `l` when it has several ranks on a GPU
// and runs on this machine (sets l->mps), else notes once (*noted) why it
// runs without.
void StartMps(const ProbeContext& c, ProbeLaunch* l, MpsDaemon* mps, bool* noted) {
  const auto& kinds = c.plan.memories;
  const bool device = std::find(kinds.begin(), kinds.end(), mltuner::MemKind::kDevice) != kinds.end();
  if (!device || l->ranks_per_gpu <= 1) return;
  std::string error;
  if (!c.mps_program.empty() && RanksStayOnThisNode(false)) {
    if (mps->Start(c.mps_program, c.folder.path() + "/mps", &error))
      l->mps = true;
    else
      std::fprintf(stderr, "multilane tune: note: MPS: %s; measuring without it\n", error.c_str());
  } else if (!*noted) {
    *noted = true;
    std::fprintf(stderr,
                 "multilane tune: note: %s: launches with several ranks per GPU run without MPS, so their "
                 "kernels are time-sliced and small sizes will be slow (jobs without MPS see the same)\n",
                 c.mps_program.empty() ? "nvidia-cuda-mps-control not found" : "MPS is started on this node only");
  }
}

}  // namespace

int RunLaunches(const ProbeContext& c, std::vector<ProbeLaunch>* launches, TuneTimes* times) {
  bool mps_missing_noted = false;
  ProgressBar bar(stderr);
  const size_t count = launches->size();
  for (size_t i = 0; i < count; ++i) {
    ProbeLaunch& l = (*launches)[i];
    MpsDaemon mps;  // stopped when this launch ends, on every way out
    StartMps(c, &l, &mps, &mps_missing_noted);
    const double left = c.budget_s - SecondsSince(c.start);
    const double share = std::max(0.1, left / static_cast<double>(count - i));
    // Two steps of the bar a launch: the probe and its repeat (RunLaunch).
    SharedProgress progress{&bar, 2 * static_cast<int>(i), 2 * static_cast<int>(count),
                            count > 1 ? "ranks/GPU " + std::to_string(l.ranks_per_gpu) + ": " : ""};
    if (const int rc = RunLaunch(c, share, progress, &l); rc != 0) return rc;
    times->probe_s += l.probe_s;
    times->probe_budget_s += l.planned_measuring_s;
    times->measuring_s += std::max(0.0, l.measuring_s);
  }
  bar.Finish();
  return 0;
}

}  // namespace multilane
