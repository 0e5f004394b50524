// cmd_resolve.cc: `multilane resolve`: the profile look-up of `multilane run`,
// printed as `key=value` lines for programs: the Slurm plugin (in slurmstepd,
// as the job's user) and the cli_filter script (on the submit host).
//
//   found=yes|no
//   node_type=KEY              (this host's node type; absent with --any-node-type)
//   ranks_per_gpu=N            (the layout the profile was tuned with, or recommends)
//   ranks_per_gpu_tuned=1,2,4  (the values the profile holds entries for)
//   mps=on|off|none            (whether its launches of several ranks per GPU ran under MPS)
//   tuned_nodes=N              (the nodes the profile was measured on)
//   tuned_nodes_virtual=yes|no (whether they were virtual nodes of one machine; absent in older profiles)
//   profile=TEXT               (newlines written as ';', as MULTILANE_PROFILE takes it)
//   why=ONE LINE               (with found=no: what was missing and the fix)
//   library_loads=yes|no       (with --check-library PATH: whether dlopen takes it)
//   library_error=ONE LINE     (when it does not)
//
// Exit status 0 whether found or not; 2 for bad arguments.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "context.h"
#include "db/node_type.h"
#include "db/outside_input.h"
#include "db/profile_store.h"
#include "db/resolve.h"

namespace multilane {
namespace {

struct ResolveOptions {
  std::vector<std::string> databases;
  std::string partition;
  bool any_node_type = false;
  std::string check_library;
};

std::string OneLine(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      if (!out.empty() && out.back() != ';') out += ';';
    } else if (c != '\r') {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ';') out.pop_back();
  return out;
}

// Loads the library the plugin is about to preload, in a child of this
// process (never in slurmstepd): a broken file can crash the loader (a
// truncated ELF gives SIGBUS), and that is reported, not suffered.
void CheckLibrary(const std::string& path) {
  if (path.empty()) return;
  int fds[2];
  if (pipe(fds) != 0) {
    std::printf("library_loads=no\nlibrary_error=cannot check it (pipe failed)\n");
    return;
  }
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const char* why = handle ? "" : dlerror();
    if (why == nullptr) why = "unknown error";
    ssize_t ignored = write(fds[1], why, std::strlen(why));
    (void)ignored;
    _exit(handle ? 0 : 1);
  }
  close(fds[1]);
  std::string why;
  char buf[1024];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) why.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) {
    std::printf("library_loads=no\nlibrary_error=cannot check it (fork failed)\n");
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::printf("library_loads=yes\n");
  } else if (WIFSIGNALED(status)) {
    std::printf("library_loads=no\nlibrary_error=loading it crashed (signal %d): a damaged or truncated file\n",
                WTERMSIG(status));
  } else {
    std::printf("library_loads=no\nlibrary_error=%s\n", OneLine(why).c_str());
  }
}

void PrintHit(const mldb::ProfileRecord& p, const std::string& node_type) {
  std::printf("found=yes\n");
  if (!node_type.empty()) std::printf("node_type=%s\n", node_type.c_str());
  std::printf("ranks_per_gpu=%d\n", p.ranks_per_gpu > 0 ? p.ranks_per_gpu : 1);
  // A tune of several values: which were measured, and whether under MPS.
  const std::string tuned = ProfileHeaderValue(p.profile_text, "ranks_per_gpu_tuned");
  std::printf("ranks_per_gpu_tuned=%s\n", tuned.empty() ? std::to_string(p.ranks_per_gpu > 0 ? p.ranks_per_gpu : 1).c_str()
                                                         : OneLine(tuned).c_str());
  const std::string mps = ProfileHeaderValue(p.profile_text, "mps");
  if (!mps.empty()) std::printf("mps=%s\n", OneLine(mps).c_str());
  std::printf("tuned_nodes=%d\n", p.nodes);
  const std::string virt = ProfileHeaderValue(p.profile_text, "nodes_virtual");
  if (!virt.empty()) std::printf("tuned_nodes_virtual=%s\n", OneLine(virt).c_str());
  std::printf("profile_id=%lld\n", static_cast<long long>(p.id));
  std::printf("tuned_at=%s\n", p.tuned_at.c_str());
  std::printf("profile=%s\n", OneLine(p.profile_text).c_str());
}

void PrintMiss(const std::string& why) {
  std::printf("found=no\nwhy=%s\n", OneLine(why).c_str());
}

// A profile of `partition` for any node type (the submit host is not a node
// of the partition), else one tuned without a partition; with several node
// types, the one with the fewest ranks per GPU, so that every node type has
// the CPUs for it.
int ResolveForPartition(const ResolveOptions& opt, const std::string& mpi) {
  std::optional<mldb::ProfileRecord> best;
  std::string problems;
  for (const std::string& path : DatabasesToRead(opt.databases)) {
    std::string error;
    auto store = mldb::ProfileStore::Open(path, mldb::ProfileStore::Access::kReadOnly, &error);
    if (!store) {
      problems += (problems.empty() ? "" : "; ") + error;
      continue;
    }
    // The partition's own profiles first, else those tuned without a
    // partition (as ProfileStore::Find falls back on a node).
    const std::vector<mldb::ProfileRecord> all = store->List(&error);
    for (const std::string& wanted : {opt.partition, std::string()}) {
      for (const mldb::ProfileRecord& p : all) {
        if (p.partition != wanted || p.library_version != LibraryVersion() || p.mpi_version != mpi) continue;
        if (!best || p.ranks_per_gpu < best->ranks_per_gpu) best = p;
      }
      if (best) break;
    }
    if (best) break;
  }
  if (!best) {
    PrintMiss("no profile of partition '" + mldb::Excerpt(opt.partition) + "' for libmlallreduce " + LibraryVersion() +
              (problems.empty() ? "" : " (" + problems + ")") +
              "; an admin makes one with `multilane tune --partition " + mldb::Excerpt(opt.partition) + " --system`");
    return 0;
  }
  PrintHit(*best, "");
  return 0;
}

int Resolve(const ResolveOptions& opt) {
  CheckLibrary(opt.check_library);
  const std::string mpi = MpiLibraryVersion();
  if (opt.any_node_type) {
    if (opt.partition.empty()) return Fail("--any-node-type needs --partition NAME");
    return ResolveForPartition(opt, mpi);
  }
  const mldb::NodeFingerprint fp = mldb::CollectNodeFingerprint(mpi);
  std::vector<std::string> notes;
  auto profile = mldb::ResolveProfile(DatabasesToRead(opt.databases), fp.Key(), opt.partition, LibraryVersion(),
                                      mpi, &notes);
  if (!profile) {
    std::string why = "no profile for node type " + fp.Key() + " (" + fp.Description() + ") with libmlallreduce " +
                      LibraryVersion();
    for (const std::string& n : notes) why += "; " + n;
    PrintMiss(why);
    std::printf("node_type=%s\n", fp.Key().c_str());
    return 0;
  }
  PrintHit(*profile, fp.Key());
  return 0;
}

}  // namespace

void AddResolveCommand(CLI::App& app, int* status) {
  auto* opt = new ResolveOptions();  // lives as long as the app
  CLI::App* cmd = app.add_subcommand(
      "resolve", "Print this node type's profile as key=value lines (for the Slurm plugin and scripts)");
  cmd->add_option("--db", opt->databases, "Database to read (repeatable; default: the user's, then the system's)");
  cmd->add_option("--partition", opt->partition, "Slurm partition whose profile to prefer");
  cmd->add_flag("--any-node-type", opt->any_node_type,
                "With --partition: any node type's profile of that partition (for submit hosts)");
  cmd->add_option("--check-library", opt->check_library, "Also say whether this library loads (dlopen)");
  cmd->callback([opt, status] { *status = Resolve(*opt); });
}

}  // namespace multilane
