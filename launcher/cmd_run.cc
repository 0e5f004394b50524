// cmd_run.cc: `multilane run [options] -- COMMAND...`: runs COMMAND with
// libmlallreduce injected and this node type's profile in its environment.
// It never probes: without a profile the command runs unchanged.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vocab/profile.h"
#include "vocab/ranks_per_gpu.h"
#include "launcher/commands.h"
#include "launcher/context.h"
#include "db/node_type.h"
#include "db/paths.h"
#include "launcher/history_inbox.h"
#include "vocab/outside_input.h"
#include "db/resolve.h"
#include "launcher/mpi_choice.h"
#include "launcher/mps_daemon.h"
#include "launcher/mps_leftover.h"
#include "launcher/process.h"
#include "launcher/run_mps.h"
#include "vocab/mpi_families.h"

namespace multilane {
namespace {

struct RunOptions {
  std::vector<std::string> databases;
  std::string partition;
  bool dry_run = false;
  bool quiet = false;
  std::string ranks_per_gpu;  // "", "auto" or a number
  std::string mpi = "auto";   // the job's MPI family: auto or a name of vocab/mpi_families.cc
  std::string mps = "auto";   // auto, yes or no (run_mps.h)
};

// The message of a command that could not be started (errno `error`).
int CannotRun(const std::string& program, int error) {
  return Fail("cannot run '" + mla::Excerpt(program) + "': " + std::strerror(error) + "; check the command and PATH");
}

// Runs `command` in place of this process; with `dry_run` prints the
// variables it would get, the MPS it would run under (`mps`) and the command.
int Exec(const std::vector<std::string>& command, bool dry_run, const std::string& mps = "none") {
  if (dry_run) {
    for (const char* name :
         {"LD_PRELOAD", "MULTILANE_PROFILE", "MULTILANE_RANKS_PER_GPU", "MULTILANE_ALL_RANKS", "MULTILANE_HISTORY"}) {
      const char* v = std::getenv(name);
      std::printf("%s=%s\n", name, v ? v : "");
    }
    std::printf("mps: %s\n", mps.c_str());
    std::string line;
    for (const std::string& a : command) line += (line.empty() ? "" : " ") + a;
    std::printf("command: %s\n", line.c_str());
    return 0;
  }
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  execvp(argv[0], argv.data());
  return CannotRun(command[0], errno);
}

// Waits for the job `pid` that a private MPS daemon serves: a signal that
// would end multilane (InterruptGuard) is passed on to the job where
// PassesSignalOn says so, and the wait goes on until the job has ended, so
// that the daemon outlives none of its clients.  The job's exit status.
int WaitForJob(pid_t pid) {
  int status = WaitChild(pid, true);
  if (status < 0) {
    if (PassesSignalOn(InterruptSignal())) kill(pid, InterruptSignal());
    status = WaitChild(pid, false);
  }
  return status;
}

// Runs `command` while a private MPS daemon (`program`) serves it, then
// stops the daemon and removes its folder: the command's exit status.  Every
// signal that can be caught (SIGHUP of a closed terminal, SIGINT, SIGQUIT,
// SIGTERM, ...; process.h) waits for the job to end and then cleans up;
// SIGKILL leaves the folder's record (mps_leftover.h) for the next run or
// doctor.  Where the daemon does not start, the command runs without it, as
// the plan's note said.
int RunUnderMps(const std::string& program, const std::vector<std::string>& command, bool quiet) {
  // From before the folder is made: a signal while the daemon starts or
  // while the job runs never leaves the daemon or its folder behind.
  std::optional<InterruptGuard> guard(std::in_place);
  std::string folder = std::string(kRunMpsParent) + "/" + kRunMpsPrefix + "XXXXXX";
  if (mkdtemp(folder.data()) == nullptr) {
    std::fprintf(stderr, "multilane: note: MPS: cannot create %s: %s; the job runs without it\n", folder.c_str(),
                 std::strerror(errno));
    guard.reset();
    return Exec(command, false);
  }
  int status = 0;
  {
    MpsDaemon mps;  // stopped on every way out of this block
    MpsOwnerRecord record = ThisRunRecord();
    std::string error = WriteMpsOwnerRecord(folder, record);
    if (error.empty() && InterruptSignal() == 0) mps.Start(program, folder, &error);
    if (!mps.running()) {
      std::error_code ignored;
      std::filesystem::remove_all(folder, ignored);
      if (InterruptSignal() != 0) return 128 + InterruptSignal();  // stopped before the job began
      std::fprintf(stderr, "multilane: note: MPS: %s; the job runs without it\n", error.c_str());
      guard.reset();
      return Exec(command, false);  // exec puts the signals' own actions back
    }
    if (!quiet)
      std::fprintf(stderr, "multilane: MPS: a private daemon serves this job (%s/pipe) until it ends\n",
                   folder.c_str());
    std::fflush(nullptr);
    pid_t pid = 0;
    if (InterruptSignal() != 0) {
      status = 128 + InterruptSignal();  // stopped before the job began
    } else if (const int rc = SpawnInheriting(command, &pid); rc != 0) {
      status = CannotRun(command[0], rc);
    } else {
      // The job too, so that a later run leaves the daemon to a job that
      // outlives a killed run.
      ProcessStat job;
      record.job_pid = pid;
      if (ReadProcessStat(pid, &job)) record.job_start = job.start;
      WriteMpsOwnerRecord(folder, record);
      status = WaitForJob(pid);
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
  return status;
}

// The job's ranks per GPU: --ranks-per-gpu's (`chosen`, 0 when not given),
// else the caller's MULTILANE_RANKS_PER_GPU, else the profile's
// recommendation.
int JobRanksPerGpu(int chosen, int recommended) {
  int n = chosen;
  if (n <= 0) {
    const char* v = std::getenv("MULTILANE_RANKS_PER_GPU");
    if (v == nullptr || !mla::ParseRanksPerGpu(v, &n)) n = recommended;
  }
  return mla::RanksPerGpuOrOne(n);
}

// A job with its report on (MULTILANE_REPORT) also drops the report into the
// history inbox of the run's database (MULTILANE_HISTORY; HistoryDatabase:
// the first --db, else the user's), which `multilane history` records; the
// report's variables and the job's key go to every rank.
void KeepHistory(const RunOptions& opt, std::vector<std::string>* forwarded) {
  const char* report = std::getenv("MULTILANE_REPORT");
  if (report == nullptr || *report == '\0') return;
  forwarded->push_back("MULTILANE_REPORT");
  if (const char* key = std::getenv("MULTILANE_JOB_KEY"); key && *key) forwarded->push_back("MULTILANE_JOB_KEY");
  const std::string inbox = mldb::HistoryInboxOf(HistoryDatabase(opt.databases));
  const std::string why = inbox.empty() ? "HOME is not set" : MakeInbox(inbox);
  if (!why.empty()) {
    if (!opt.quiet) std::fprintf(stderr, "multilane: note: the job history is not kept: %s\n", why.c_str());
    return;
  }
  setenv("MULTILANE_HISTORY", inbox.c_str(), 1);
  forwarded->push_back("MULTILANE_HISTORY");
}

// --ranks-per-gpu: the layout the job runs, so that the library takes the
// profile's entries tuned at it (auto: the profile's recommendation); *n is
// that value (0 without the option).  0, or the status of a bad value.
int ApplyRanksPerGpu(const RunOptions& opt, const mldb::ProfileRecord& profile, std::vector<std::string>* forwarded,
                     int* n) {
  *n = 0;
  if (opt.ranks_per_gpu.empty()) return 0;
  if (opt.ranks_per_gpu == "auto") {
    *n = mla::RanksPerGpuOrOne(profile.ranks_per_gpu);
  } else {
    if (!mla::ParseRanksPerGpu(opt.ranks_per_gpu, n))
      return Fail("--ranks-per-gpu '" + mla::Excerpt(opt.ranks_per_gpu) + "' must be auto or " +
                  mla::RanksPerGpuRule());
    const std::string tuned = mla::ProfileHeaderValue(profile.profile_text, "ranks_per_gpu_tuned");
    const std::string list = tuned.empty() ? std::to_string(profile.ranks_per_gpu) : tuned;
    if (!mla::InRanksPerGpuList(list, *n))
      std::fprintf(stderr,
                   "multilane: note: the profile was tuned at %s rank(s) per GPU, not %d: this job gets the "
                   "entries of the recommended %d\n",
                   mla::Excerpt(list).c_str(), *n, profile.ranks_per_gpu);
  }
  setenv("MULTILANE_RANKS_PER_GPU", std::to_string(*n).c_str(), 1);
  forwarded->push_back("MULTILANE_RANKS_PER_GPU");
  if (!opt.quiet)
    std::fprintf(stderr, "multilane: %d rank(s) per GPU: start that many ranks on each GPU (-np = %d x GPUs)\n", *n,
                 *n);
  return 0;
}

// Whether the job gets a private MPS daemon (run_mps.h): the profile's
// mps=, the job's ranks per GPU (`chosen` by --ranks-per-gpu, 0: not given)
// and what this node has.
RunMpsPlan PlanJobMps(RunMpsFacts* facts, const mldb::ProfileRecord& profile, int chosen, LauncherKind launcher) {
  facts->profile_mps = mla::ProfileHeaderValue(profile.profile_text, "mps");
  facts->ranks_per_gpu = JobRanksPerGpu(chosen, profile.ranks_per_gpu);
  facts->ranks_here = RanksStayOnThisNode(launcher == LauncherKind::kSrun);
  std::string refused;
  facts->daemon = ReachableMpsPipe("/tmp/nvidia-mps", &refused);
  facts->program = MpsControlProgram();
  RunMpsPlan plan = PlanRunMps(*facts);
  if (!refused.empty() && (plan.start || !plan.note.empty()))
    plan.note = refused + (plan.note.empty() ? "" : "; " + plan.note);
  return plan;
}

int Run(const RunOptions& opt, std::vector<std::string> command) {
  if (!command.empty() && command[0] == "--") command.erase(command.begin());
  const std::vector<std::string>& trailing = TrailingCommand();
  command.insert(command.end(), trailing.begin(), trailing.end());
  if (command.empty()) return Fail("no command given: write `multilane run -- mpirun -np 8 ./app`");
  RunMpsFacts mps;
  if (!ParseRunMpsMode(opt.mps, &mps.mode))
    return Fail("--mps '" + mla::Excerpt(opt.mps) + "' must be " + RunMpsModeChoices());

  // What a run killed with SIGKILL left: its daemon is stopped and its
  // folder removed once its job has ended too (mps_leftover.h).
  if (!opt.dry_run)
    for (const std::string& line : StopLeftoverMps(MpsControlProgram(), /*name_unrecorded=*/false))
      if (!opt.quiet) std::fprintf(stderr, "multilane: note: %s\n", line.c_str());

  const Installation install = FindInstallation();
  // The profile is the one tuned with the job's MPI (the front picks the
  // family build in each process by itself).
  std::string error, note;
  const LauncherKind launcher = KindOfLauncher(command, &note);
  if (!note.empty() && !opt.quiet) std::fprintf(stderr, "multilane: note: %s\n", note.c_str());
  const std::string family = JobMpiFamily(opt.mpi, launcher, FamilyOfCommand(command, launcher), &error);
  if (family.empty()) return Fail(error);
  const std::string mpi = MpiVersionOfFamily(family, ProbeOfFamily(install.probe, family), &error);
  if (mpi.empty()) {
    std::fprintf(stderr, "multilane: %s; running the command without multilane\n", error.c_str());
    return Exec(command, opt.dry_run);
  }
  const mldb::NodeFingerprint fp = mldb::CollectNodeFingerprint(mpi);
  std::string partition = opt.partition;
  if (partition.empty()) {
    if (const char* p = std::getenv("SLURM_JOB_PARTITION")) partition = p;
  }
  // Outside an allocation no partition is known: a profile of `tune
  // --partition` serves when it is the only partition's (else why_not says).
  std::vector<std::string> notes;
  std::string why_not = "`multilane tune` makes one";
  auto profile = partition.empty() ? mldb::ResolveWithoutPartition(DatabasesToRead(opt.databases), fp.Key(),
                                                                   LibraryVersion(), mpi, &why_not, &notes)
                                   : mldb::ResolveProfile(DatabasesToRead(opt.databases), fp.Key(), partition,
                                                          LibraryVersion(), mpi, &notes);
  if (!profile) {
    std::fprintf(stderr,
                 "multilane: no profile for node type %s (%s) with libmlallreduce %s and MPI '%s'%s: running the "
                 "command without multilane; %s\n",
                 fp.Key().c_str(), fp.Description().c_str(), LibraryVersion().c_str(), mla::Excerpt(mpi).c_str(),
                 partition.empty() ? "" : (", partition " + mla::Excerpt(partition)).c_str(), why_not.c_str());
    if (!opt.quiet)
      for (const std::string& n : notes) std::fprintf(stderr, "multilane:   %s\n", n.c_str());
    return Exec(command, opt.dry_run);
  }
  // MULTILANE_ALL_RANKS: every rank gets the library, which the start-up
  // agreement needs to hear where the launcher offers no PMIx (hydra;
  // docs/all-in-or-all-out.md).
  std::vector<std::string> forwarded = {"LD_PRELOAD", "MULTILANE_PROFILE", "MULTILANE_ALL_RANKS"};
  KeepHistory(opt, &forwarded);
  int n = 0;
  if (const int rc = ApplyRanksPerGpu(opt, *profile, &forwarded, &n); rc != 0) return rc;
  if (access(install.library.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "multilane: %s not found: running the command without multilane; reinstall multilane\n",
                 install.library.c_str());
    return Exec(command, opt.dry_run);
  }
  // The user's own preloads (tools, sanitizer runtimes) stay first, so that
  // they keep wrapping what they wrapped.
  std::string preload = install.library;
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload = std::string(old) + ":" + preload;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  setenv("MULTILANE_PROFILE", profile->profile_text.c_str(), 1);
  setenv("MULTILANE_ALL_RANKS", "1", 1);
  unsetenv("MULTILANE_PROFILE_FILE");
  const RunMpsPlan plan = PlanJobMps(&mps, *profile, n, launcher);
  if (plan.start) {
    forwarded.push_back("CUDA_MPS_PIPE_DIRECTORY");
    forwarded.push_back("CUDA_MPS_LOG_DIRECTORY");
  }
  if (!opt.quiet) {
    std::fprintf(stderr, "multilane: profile %lld of node type %s (tuned %s by %s%s)\n",
                 static_cast<long long>(profile->id), fp.Key().c_str(), mla::Excerpt(profile->tuned_at).c_str(),
                 mla::Excerpt(profile->tuned_by).c_str(),
                 profile->partition.empty() ? "" : (", partition " + mla::Excerpt(profile->partition)).c_str());
  }
  if (!plan.note.empty() && !opt.quiet) std::fprintf(stderr, "multilane: note: %s\n", plan.note.c_str());
  const std::vector<std::string> job = ForwardVariables(launcher, command, forwarded);
  if (!plan.start) return Exec(job, opt.dry_run);
  if (opt.dry_run) return Exec(job, true, "a private daemon (" + mla::TerminalExcerpt(mps.program) + ")");
  return RunUnderMps(mps.program, job, opt.quiet);
}

}  // namespace

std::vector<std::string>& TrailingCommand() {
  static std::vector<std::string> words;
  return words;
}

void AddRunCommand(CLI::App& app, int* status) {
  auto* opt = new RunOptions();  // lives as long as the app
  CLI::App* cmd = app.add_subcommand(
      "run", "Run COMMAND (mpirun ..., srun ..., or a program) with libmlallreduce and this node type's profile");
  cmd->add_option("--db", opt->databases,
                  "Database to read (repeatable; default: the user's, then the system's); with the job report on "
                  "(MULTILANE_REPORT), the job's history goes into the folder history beside the first one");
  cmd->add_option("--partition", opt->partition,
                  "Slurm partition whose profile to prefer (default: $SLURM_JOB_PARTITION)");
  cmd->add_flag("--dry-run", opt->dry_run, "Print the environment and command instead of running it");
  cmd->add_option("--ranks-per-gpu", opt->ranks_per_gpu,
                  "The job's ranks per GPU (auto: the profile's recommendation): the library then takes the "
                  "profile's entries tuned at that value (MULTILANE_RANKS_PER_GPU)");
  cmd->add_option("--mpi", opt->mpi,
                  "The job's MPI family, whose profile to use: auto (the family of the program's MPI library, else "
                  "of the launcher, else " +
                      mla::MpiFamilies().front().name + "), " + mla::MpiFamilyChoices());
  cmd->add_option("--mps", opt->mps,
                  "Run the job under a private MPS daemon (started here, stopped when the job ends): auto (when the "
                  "profile's layouts of several ranks per GPU were measured under MPS and no daemon serves the job "
                  "yet), yes (whenever none serves it) or no");
  cmd->add_flag("-q,--quiet", opt->quiet, "Say nothing when a profile is found");
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->footer("Example: multilane run -- mpirun -np 8 ./app");
  cmd->callback([cmd, opt, status] { *status = Run(*opt, cmd->remaining()); });
}

}  // namespace multilane
