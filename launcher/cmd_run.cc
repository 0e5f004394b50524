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

#include "command_line.h"
#include "commands.h"
#include "context.h"
#include "db/node_type.h"
#include "db/resolve.h"

namespace multilane {
namespace {

struct RunOptions {
  std::vector<std::string> databases;
  std::string partition;
  bool dry_run = false;
  bool quiet = false;
};

int Exec(const std::vector<std::string>& command, bool dry_run) {
  if (dry_run) {
    for (const char* name : {"LD_PRELOAD", "MULTILANE_PROFILE"}) {
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
  return Fail("cannot run '" + command[0] + "': " + std::strerror(errno) + "; check the command and PATH");
}

int Run(const RunOptions& opt, std::vector<std::string> command) {
  if (!command.empty() && command[0] == "--") command.erase(command.begin());
  const std::vector<std::string>& trailing = TrailingCommand();
  command.insert(command.end(), trailing.begin(), trailing.end());
  if (command.empty()) return Fail("no command given: write `multilane run -- mpirun -np 8 ./app`");

  const Installation install = FindInstallation();
  const std::string mpi = MpiLibraryVersion();
  const mldb::NodeFingerprint fp = mldb::CollectNodeFingerprint(mpi);
  std::string partition = opt.partition;
  if (partition.empty()) {
    if (const char* p = std::getenv("SLURM_JOB_PARTITION")) partition = p;
  }
  std::vector<std::string> notes;
  auto profile = mldb::ResolveProfile(DatabasesToRead(opt.databases), fp.Key(), partition, LibraryVersion(), mpi, &notes);
  if (!profile) {
    std::fprintf(stderr,
                 "multilane: no profile for node type %s (%s) with libmlallreduce %s: running the command "
                 "without multilane; `multilane tune` makes one\n",
                 fp.Key().c_str(), fp.Description().c_str(), LibraryVersion().c_str());
    if (!opt.quiet)
      for (const std::string& n : notes) std::fprintf(stderr, "multilane:   %s\n", n.c_str());
    return Exec(command, opt.dry_run);
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
  unsetenv("MULTILANE_PROFILE_FILE");
  if (!opt.quiet) {
    std::fprintf(stderr, "multilane: profile %lld of node type %s (tuned %s by %s%s)\n",
                 static_cast<long long>(profile->id), fp.Key().c_str(), profile->tuned_at.c_str(),
                 profile->tuned_by.c_str(), profile->partition.empty() ? "" : (", partition " + profile->partition).c_str());
  }
  return Exec(ForwardVariables(command, {"LD_PRELOAD", "MULTILANE_PROFILE"}), opt.dry_run);
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
  cmd->add_option("--partition", opt->partition, "Slurm partition whose profile to prefer (default: $SLURM_JOB_PARTITION)");
  cmd->add_flag("--dry-run", opt->dry_run, "Print the environment and command instead of running it");
  cmd->add_flag("-q,--quiet", opt->quiet, "Say nothing when a profile is found");
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->footer("Example: multilane run -- mpirun -np 8 ./app");
  cmd->callback([cmd, opt, status] { *status = Run(*opt, cmd->remaining()); });
}

}  // namespace multilane
