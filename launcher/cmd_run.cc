// cmd_run.cc: `multilane run [options] -- COMMAND...`: runs COMMAND with
// libmlallreduce injected and this node type's profile in its environment.
// It never probes: without a profile the command runs unchanged.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "vocab/profile.h"
#include "vocab/ranks_per_gpu.h"
#include "commands.h"
#include "context.h"
#include "db/node_type.h"
#include "db/paths.h"
#include "history_inbox.h"
#include "vocab/outside_input.h"
#include "db/resolve.h"
#include "mpi_choice.h"
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
};

int Exec(const std::vector<std::string>& command, bool dry_run) {
  if (dry_run) {
    for (const char* name : {"LD_PRELOAD", "MULTILANE_PROFILE", "MULTILANE_RANKS_PER_GPU", "MULTILANE_ALL_RANKS",
                             "MULTILANE_HISTORY"}) {
      const char* v = std::getenv(name);
      std::printf("%s=%s\n", name, v ? v : "");
    }
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
  return Fail("cannot run '" + mldb::Excerpt(command[0]) + "': " + std::strerror(errno) +
              "; check the command and PATH");
}

// A job with its report on (MULTILANE_REPORT) also drops the report into the
// user's history inbox (MULTILANE_HISTORY), which `multilane history`
// records; the report's variables and the job's key go to every rank.
void KeepHistory(bool quiet, std::vector<std::string>* forwarded) {
  const char* report = std::getenv("MULTILANE_REPORT");
  if (report == nullptr || *report == '\0') return;
  forwarded->push_back("MULTILANE_REPORT");
  if (const char* key = std::getenv("MULTILANE_JOB_KEY"); key && *key) forwarded->push_back("MULTILANE_JOB_KEY");
  const std::string inbox = mldb::UserHistoryInboxPath();
  const std::string why = inbox.empty() ? "HOME is not set" : MakeInbox(inbox);
  if (!why.empty()) {
    if (!quiet) std::fprintf(stderr, "multilane: note: the job history is not kept: %s\n", why.c_str());
    return;
  }
  setenv("MULTILANE_HISTORY", inbox.c_str(), 1);
  forwarded->push_back("MULTILANE_HISTORY");
}

int Run(const RunOptions& opt, std::vector<std::string> command) {
  if (!command.empty() && command[0] == "--") command.erase(command.begin());
  const std::vector<std::string>& trailing = TrailingCommand();
  command.insert(command.end(), trailing.begin(), trailing.end());
  if (command.empty()) return Fail("no command given: write `multilane run -- mpirun -np 8 ./app`");

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
                 fp.Key().c_str(), fp.Description().c_str(), LibraryVersion().c_str(), mldb::Excerpt(mpi).c_str(),
                 partition.empty() ? "" : (", partition " + mldb::Excerpt(partition)).c_str(), why_not.c_str());
    if (!opt.quiet)
      for (const std::string& n : notes) std::fprintf(stderr, "multilane:   %s\n", n.c_str());
    return Exec(command, opt.dry_run);
  }
  // --ranks-per-gpu: the layout the job runs, so that the library takes the
  // profile's entries tuned at it (auto: the profile's recommendation).
  // MULTILANE_ALL_RANKS: every rank gets the library, which the start-up
  // agreement needs to hear where the launcher offers no PMIx (hydra;
  // docs/all-in-or-all-out.md).
  std::vector<std::string> forwarded = {"LD_PRELOAD", "MULTILANE_PROFILE", "MULTILANE_ALL_RANKS"};
  KeepHistory(opt.quiet, &forwarded);
  if (!opt.ranks_per_gpu.empty()) {
    int n = 0;
    if (opt.ranks_per_gpu == "auto") {
      n = profile->ranks_per_gpu > 0 ? profile->ranks_per_gpu : 1;
    } else {
      if (!mla::ParseRanksPerGpu(opt.ranks_per_gpu, &n))
        return Fail("--ranks-per-gpu '" + mldb::Excerpt(opt.ranks_per_gpu) + "' must be auto or " +
                    mla::RanksPerGpuRule());
      const std::string tuned = mla::ProfileHeaderValue(profile->profile_text, "ranks_per_gpu_tuned");
      const std::string list = tuned.empty() ? std::to_string(profile->ranks_per_gpu) : tuned;
      if (!mla::InRanksPerGpuList(list, n))
        std::fprintf(stderr,
                     "multilane: note: the profile was tuned at %s rank(s) per GPU, not %d: this job gets the "
                     "entries of the recommended %d\n",
                     mldb::Excerpt(list).c_str(), n, profile->ranks_per_gpu);
    }
    setenv("MULTILANE_RANKS_PER_GPU", std::to_string(n).c_str(), 1);
    forwarded.push_back("MULTILANE_RANKS_PER_GPU");
    if (!opt.quiet)
      std::fprintf(stderr, "multilane: %d rank(s) per GPU: start that many ranks on each GPU (-np = %d x GPUs)\n", n,
                   n);
  }
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
  if (!opt.quiet) {
    std::fprintf(stderr, "multilane: profile %lld of node type %s (tuned %s by %s%s)\n",
                 static_cast<long long>(profile->id), fp.Key().c_str(), mldb::Excerpt(profile->tuned_at).c_str(),
                 mldb::Excerpt(profile->tuned_by).c_str(),
                 profile->partition.empty() ? "" : (", partition " + mldb::Excerpt(profile->partition)).c_str());
  }
  return Exec(ForwardVariables(launcher, command, forwarded), opt.dry_run);
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
  cmd->add_option("--db", opt->databases, "Database to read (repeatable; default: the user's, then the system's)");
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
  cmd->add_flag("-q,--quiet", opt->quiet, "Say nothing when a profile is found");
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->footer("Example: multilane run -- mpirun -np 8 ./app");
  cmd->callback([cmd, opt, status] { *status = Run(*opt, cmd->remaining()); });
}

}  // namespace multilane
