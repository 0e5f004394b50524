// context_step.cc: slurmstepd (remote context).
//
// user_init (once per step and node, privileges dropped to the job's user):
//   looks up the node type's profile by running the admin's `multilane
//   resolve` as the user against the admin's database, and on a hit puts
//   LD_PRELOAD (the admin's library) and MULTILANE_PROFILE into the step's
//   environment.  Without a usable profile on this node it still preloads
//   the library, with MULTILANE_OFF=<reason>, so that the job is all in or
//   all out (injection.h); only a library that is missing or does not load
//   leaves the step as it was.  Either way one line says why (from the
//   step's first node; the others' go to the slurmd log).
// task_init_privileged (per task, root): records the step's GPU list.
// task_init (per task, the user): binds the task to its GPU
//   (CUDA_VISIBLE_DEVICES) and to its block of CPUs.
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "spank/injection.h"
#include "spank/job_dirs.h"
#include "spank/plugin.h"
#include "spank/subprocess.h"
#include "spank/task_layout.h"
#include "vocab/ranks_per_gpu.h"

namespace multilane_spank {
namespace {

// Step ids above this are Slurm's special steps (batch, extern, interactive).
constexpr uint32_t kFirstSpecialStep = 0xfffffff0u;

std::string GetEnv(spank_t sp, const char* name) {
  std::vector<char> buf(16384);
  for (;;) {
    const spank_err_t rc = spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size()));
    if (rc == ESPANK_SUCCESS) return buf.data();
    if (rc != ESPANK_NOSPACE || buf.size() >= (1u << 24)) return "";
    buf.resize(buf.size() * 4);  // a long profile or preload list
  }
}

bool SetEnv(spank_t sp, const char* name, const std::string& value) {
  if (spank_setenv(sp, name, value.c_str(), 1) != ESPANK_SUCCESS) {
    Error(std::string("cannot set ") + name + " for the step");
    return false;
  }
  return true;
}

template <typename... T>
bool Item(spank_t sp, spank_item_t item, T*... out) {
  return spank_get_item(sp, item, out...) == ESPANK_SUCCESS;
}

// Says a line to the user once per step: from the step's first node.
void SayOnce(spank_t sp, const std::string& message) {
  uint32_t node = 0;
  if (Item(sp, S_JOB_NODEID, &node) && node != 0) {
    Info(message);
    return;
  }
  Say(message);
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

std::vector<int>& StepCpus() {
  static std::vector<int> cpus;
  return cpus;
}

// Runs `multilane resolve` as the job's user, with a clean environment.
SubprocessResult LookUp(spank_t sp, const PluginState& s) {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  Item(sp, S_JOB_UID, &uid);
  Item(sp, S_JOB_GID, &gid);
  std::vector<std::string> argv = {s.config.multilane, "resolve",         "--db",
                                   s.config.database,  "--check-library", s.config.library};
  const std::string partition = GetEnv(sp, "SLURM_JOB_PARTITION");
  if (!partition.empty()) {
    argv.push_back("--partition");
    argv.push_back(partition);
  }
  // The job's MPI family, whose profile to take: the user's mpi:FAMILY, else
  // what the resolver reads from the step's program (its MPI library).
  if (!s.user.mpi.empty()) {
    argv.insert(argv.end(), {"--mpi", s.user.mpi});
  } else {
    int argc = 0;
    char** args = nullptr;
    if (Item(sp, S_JOB_ARGV, &argc, &args) && argc > 0 && args != nullptr && args[0] != nullptr)
      argv.insert(argv.end(),
                  {"--program", args[0], "--program-path", GetEnv(sp, "PATH"), "--program-dir", GetEnv(sp, "PWD")});
  }
  const std::map<std::string, std::string> env = {{"PATH", "/usr/bin:/bin"}, {"LANG", "C"}, {"HOME", "/"}};
  return RunCapture(argv, env, uid, gid, s.config.resolve_timeout_s);
}

// Runs a multilane command as the job's user with the variables that find
// the user's own database (HOME, XDG_STATE_HOME, MULTILANE_USER_DB), in a
// child of its own: a slow home folder delays only this, never the look-up.
// Never as root: without the job's uid and gid it runs nothing.
SubprocessResult RunAsUserWithHome(spank_t sp, const PluginState& s, const std::vector<std::string>& argv) {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  if (!Item(sp, S_JOB_UID, &uid) || !Item(sp, S_JOB_GID, &gid)) {
    SubprocessResult none;
    none.error = "the job's user is not known";
    return none;
  }
  std::map<std::string, std::string> env = {{"PATH", "/usr/bin:/bin"}, {"LANG", "C"}, {"HOME", "/"}};
  for (const char* name : {"HOME", "XDG_STATE_HOME", "MULTILANE_USER_DB"})
    if (const std::string v = GetEnv(sp, name); !v.empty()) env[name] = v;
  return RunCapture(argv, env, uid, gid, s.config.resolve_timeout_s);
}

// Report mode: `multilane history --make-inbox` makes the user's history
// inbox beside their database.  Returns its path, or "" (a note was said).
std::string HistoryInbox(spank_t sp, const PluginState& s) {
  const SubprocessResult r = RunAsUserWithHome(sp, s, {s.config.multilane, "history", "--make-inbox"});
  auto kv = ParseKeyValueLines(r.output);
  if (!kv["history_inbox"].empty()) return kv["history_inbox"];
  SayOnce(sp, "note: " + (kv["history_note"].empty() ? std::string("the job history is not kept: its inbox could "
                                                                   "not be made (multilane history --make-inbox)")
                                                     : kv["history_note"]));
  return "";
}

// "1 task per GPU", "2 tasks per GPU": a count of tasks per GPU in a line.
std::string TasksPerGpu(int tasks) { return std::to_string(tasks) + (tasks == 1 ? " task" : " tasks") + " per GPU"; }

// A job named by MULTILANE_JOB_KEY, whose tasks per GPU its history chooses
// at submission (docs/history.md): its first step says in one line, in the
// job's output, how many and why, from the same choice made again as the
// user on the step's first node (where the step has another layout, both
// are said).
void SayLayoutChoice(spank_t sp, const PluginState& s, uint32_t tasks, size_t gpus) {
  uint32_t step = 0, node = 0;
  const std::string key = GetEnv(sp, "MULTILANE_JOB_KEY");
  if (key.empty() || s.user.ranks_per_gpu > 0 || gpus == 0 || tasks % gpus != 0 || !Item(sp, S_JOB_STEPID, &step) ||
      step != 0 || !Item(sp, S_JOB_NODEID, &node) || node != 0)
    return;
  std::vector<std::string> argv = {s.config.multilane, "resolve", "--db", s.config.database, "--job-key", key};
  if (const std::string partition = GetEnv(sp, "SLURM_JOB_PARTITION"); !partition.empty())
    argv.insert(argv.end(), {"--partition", partition});
  if (!s.user.mpi.empty()) argv.insert(argv.end(), {"--mpi", s.user.mpi});
  auto kv = ParseKeyValueLines(RunAsUserWithHome(sp, s, argv).output);
  const int chosen = std::atoi(kv["ranks_per_gpu_chosen"].c_str());
  if (chosen <= 0) return;
  const int here = static_cast<int>(tasks / gpus);
  Say(chosen == here ? TasksPerGpu(here) + ": " + kv["layout_why"]
                     : "this step runs " + TasksPerGpu(here) + "; the job's history chooses " + std::to_string(chosen) +
                           ": " + kv["layout_why"]);
}

// Puts the library into LD_PRELOAD; the user's own preloads stay first, as
// with `multilane run`.  MULTILANE_ALL_RANKS=1 goes with it: every node of a
// --multilane step preloads the library where it loads (with MULTILANE_OFF
// where there is no profile), which the library's start-up agreement needs
// to hear where the MPI offers no PMIx (docs/all-in-or-all-out.md).
bool Preload(spank_t sp, const std::string& library) {
  if (!SetEnv(sp, "MULTILANE_ALL_RANKS", "1")) return false;
  std::string preload = library;
  const std::string old = GetEnv(sp, "LD_PRELOAD");
  if (!old.empty()) preload = old + ":" + preload;
  return SetEnv(sp, "LD_PRELOAD", preload);
}

// This node's name as Slurm knows it (several slurmd may share a host).
std::string NodeName(spank_t sp) {
  std::string name = GetEnv(sp, "SLURMD_NODENAME");
  if (!name.empty()) return name;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return host;
}

// MULTILANE_STEP_TASKS: the step's tasks, so that the library of a task
// that finds itself a world of one rank can say the step's tasks did not
// become one world (srun's --mpi does not match the MPI).
void SetStepTasks(spank_t sp) {
  uint32_t tasks = 0;
  if (Item(sp, S_JOB_TOTAL_TASK_COUNT, &tasks)) SetEnv(sp, "MULTILANE_STEP_TASKS", std::to_string(tasks));
}

// No usable profile on this node (Injection::Kind::kOff): the library goes in
// with MULTILANE_OFF, so that it takes part in the job's start-up agreement
// and turns multilane off on every rank.  MULTILANE_OFF is set first: a
// library without it and without a profile would vote on.
void InjectOff(spank_t sp, const PluginState& s, const Injection& injection) {
  SetStepTasks(sp);
  if (SetEnv(sp, "MULTILANE_OFF", OffReason(NodeName(sp), injection.line))) Preload(sp, s.config.library);
}

// The job's MPS daemon: the tasks are pointed at its folders only when they
// are exactly what the prolog made for this job's user (job_dirs.h); never at
// a job-ID someone else made.  True when they were.
bool PointAtMps(spank_t sp, const PluginState& s) {
  if (!s.config.mps && !s.config.mps_auto) return false;
  uint32_t job = 0;
  uid_t uid = static_cast<uid_t>(-1);
  Item(sp, S_JOB_ID, &job);
  Item(sp, S_JOB_UID, &uid);
  std::string why;
  if (!JobDirsReady(s.config.mps_dir, job, uid, &why)) {
    // No folder: the prolog started no daemon and logged why (mps=yes), or
    // was not asked to (mps=auto).  Something else there is worth a line.
    if (!why.empty()) SayOnce(sp, "note: this step runs without the job's MPS daemon on this node: " + why);
    return false;
  }
  const std::string base = s.config.mps_dir + "/" + JobDirName(job);
  SetEnv(sp, "CUDA_MPS_PIPE_DIRECTORY", base + "/pipe");
  SetEnv(sp, "CUDA_MPS_LOG_DIRECTORY", base + "/log");
  return true;
}

// The step's settings besides the profile: tasks per GPU, the user's modes.
void SetStepVariables(spank_t sp, const PluginState& s, uint32_t tasks, size_t gpus, const std::string& inbox) {
  if (gpus > 0 && tasks % gpus == 0 && GetEnv(sp, "MULTILANE_RANKS_PER_GPU").empty()) {
    SetEnv(sp, "MULTILANE_RANKS_PER_GPU", std::to_string(tasks / gpus));
  }
  if (s.user.verbose) {
    SetEnv(sp, "MULTILANE_VERBOSE", "1");
    SetEnv(sp, "MULTILANE_STATS", "1");
  }
  if (s.user.report) {
    std::string dir = s.user.report_dir;
    if (dir.empty()) dir = GetEnv(sp, "SLURM_SUBMIT_DIR");
    if (!dir.empty()) SetEnv(sp, "MULTILANE_REPORT", dir);
    if (!inbox.empty()) SetEnv(sp, "MULTILANE_HISTORY", inbox);  // the job history (docs/history.md)
  }
}

// The lines a step with a profile may need: MPS missing for a layout
// measured under it, a ranks-per-gpu value not tuned, the step's own layout
// (or, with verbose, the profile in use).
void SayProfileNotes(spank_t sp, const PluginState& s, std::map<std::string, std::string>& kv, bool user_profile,
                     bool mps) {
  uint32_t tasks = 0;
  Item(sp, S_JOB_LOCAL_TASK_COUNT, &tasks);
  const std::vector<std::string> gpus = SplitList(GetEnv(sp, "CUDA_VISIBLE_DEVICES"));
  const int tuned = std::atoi(kv["ranks_per_gpu"].c_str());
  const int wanted = s.user.ranks_per_gpu > 0 ? s.user.ranks_per_gpu : tuned;
  // A ranks-per-GPU value measured under MPS, on a node that runs this step
  // without it: small calls will be much slower than the profile says.
  if (!mps && kv["mps"] == "on" && !gpus.empty() && tasks > gpus.size()) {
    SayOnce(sp,
            "note: the profile's layouts of several tasks per GPU were measured under MPS, and this node runs "
            "the job without an MPS daemon (plugstack mps=no, nvidia-cuda-mps-control missing, or the job "
            "prolog could not start it): submit with --multilane=ranks-per-gpu:1, or ask the admin to enable mps");
  }
  // ranks-per-gpu:N the profile was not tuned at: its entries for other
  // layouts apply (the recommended value's), which the user should know.
  const std::string tuned_list = kv["ranks_per_gpu_tuned"];
  if (s.user.ranks_per_gpu > 0 && !tuned_list.empty() && !mla::InRanksPerGpuList(tuned_list, s.user.ranks_per_gpu)) {
    SayOnce(sp, "note: the profile was tuned at " + tuned_list + " tasks per GPU, not " +
                    std::to_string(s.user.ranks_per_gpu) + ": this step runs the entries of the recommended " +
                    std::to_string(tuned) + "");
  }
  // Tasks per GPU only where the node has GPUs (a CPU node's profile says 1).
  std::string line = "profile " + kv["profile_id"] + " of node type " + kv["node_type"] + " (tuned " + kv["tuned_at"] +
                     (gpus.empty() ? std::string() : ", " + TasksPerGpu(tuned)) + ")";
  if (user_profile) line += "; your MULTILANE_PROFILE is kept";
  // A step at another of the profile's tuned values is one of its layouts
  // (--multilane=auto's choice from the job's history, docs/history.md).
  const bool tuned_layout = s.user.ranks_per_gpu == 0 && !gpus.empty() && tasks % gpus.size() == 0 &&
                            !tuned_list.empty() &&
                            mla::InRanksPerGpuList(tuned_list, static_cast<int>(tasks / gpus.size()));
  if (!gpus.empty() && wanted > 0 && tasks != gpus.size() * static_cast<uint32_t>(wanted) && !tuned_layout) {
    SayOnce(sp, line + ": this step has " + std::to_string(tasks) + " tasks on " + std::to_string(gpus.size()) +
                    " GPUs of this node; for the tuned layout submit with --ntasks-per-gpu=" + std::to_string(wanted) +
                    " (or ask the admin to enable the multilane cli_filter)");
  } else if (s.user.verbose) {
    SayOnce(sp, line);
  }
}

}  // namespace

int StepUserInit(spank_t sp) {
  PluginState& s = State();
  uint32_t step = 0;
  if (!Item(sp, S_JOB_STEPID, &step) || step >= kFirstSpecialStep) return 0;  // batch/extern: the sruns inject
  if (!Enabled(s)) return 0;
  StepCpus() = AllowedCpus();

  const SubprocessResult r = LookUp(sp, s);
  auto kv = ParseKeyValueLines(r.output);
  std::string library_why;
  const bool library_ok = LooksLikeLibrary(s.config.library, &library_why);
  const Injection injection = DecideInjection(r, kv, s.config.multilane, s.config.library, library_ok, library_why);
  if (injection.kind != Injection::Kind::kProfile) {
    SayOnce(sp, injection.line);
    if (injection.kind == Injection::Kind::kOff) InjectOff(sp, s, injection);
    return 0;
  }
  if (!Preload(sp, s.config.library)) return 0;
  s.injected = true;
  SetStepTasks(sp);
  const bool user_profile = !GetEnv(sp, "MULTILANE_PROFILE").empty() || !GetEnv(sp, "MULTILANE_PROFILE_FILE").empty();
  if (!user_profile) SetEnv(sp, "MULTILANE_PROFILE", kv["profile"]);
  uint32_t tasks = 0;
  Item(sp, S_JOB_LOCAL_TASK_COUNT, &tasks);
  SetStepVariables(sp, s, tasks, SplitList(GetEnv(sp, "CUDA_VISIBLE_DEVICES")).size(),
                   s.user.report ? HistoryInbox(sp, s) : std::string());
  const bool mps = PointAtMps(sp, s);
  SayProfileNotes(sp, s, kv, user_profile, mps);
  SayLayoutChoice(sp, s, tasks, SplitList(GetEnv(sp, "CUDA_VISIBLE_DEVICES")).size());
  return 0;
}

int StepTaskInitPrivileged(spank_t sp) {
  PluginState& s = State();
  if (!s.injected) return 0;
  s.step_gpus = GetEnv(sp, "CUDA_VISIBLE_DEVICES");
  return 0;
}

int StepTaskInit(spank_t sp) {
  PluginState& s = State();
  if (!s.injected) return 0;
  int task = -1;
  uint32_t tasks = 0;
  if (!Item(sp, S_TASK_ID, &task) || !Item(sp, S_JOB_LOCAL_TASK_COUNT, &tasks)) return 0;
  const std::string gpu = GpuOfTask(SplitList(s.step_gpus), task, static_cast<int>(tasks));
  if (!gpu.empty()) SetEnv(sp, "CUDA_VISIBLE_DEVICES", gpu);

  if (s.config.bind_cores) {
    // Slurm's own binding (task/affinity, task/cgroup) wins: bind only tasks
    // that may still run on every CPU of the step.
    const std::vector<int> now = AllowedCpus();
    if (!StepCpus().empty() && now == StepCpus()) {
      const std::vector<int> mine = CpusOfTask(StepCpus(), task, static_cast<int>(tasks));
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c : mine) CPU_SET(c, &set);
      if (!mine.empty() && sched_setaffinity(0, sizeof set, &set) != 0) {
        Info("cannot bind task " + std::to_string(task) + " to CPUs " + CpuListString(mine));
      }
    }
  }
  return 0;
}

}  // namespace multilane_spank
