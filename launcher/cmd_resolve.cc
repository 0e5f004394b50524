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
//   mpi=FAMILY                 (with found=yes: the MPI family whose profile it is)
//   mpi_from=option|program|profiles (how the family was chosen: --mpi or mpi:FAMILY,
//                              the program's MPI library, or the first family with a profile)
//   options=ok, enabled=yes|no, ranks_per_gpu_asked=N  (with --options: the user's value parsed)
//   options_error=ONE LINE     (with --options: the plugin refuses the value; nothing else follows)
//   ranks_per_gpu_chosen=N     (with --job-key, found=yes and no ranks_per_gpu_asked: the value the
//                              job's history chooses, report/layout_choice.h)
//   layout_basis=profile|measured|predicted, layout_why=ONE LINE  (with it: on what, and why)
//   history_note=ONE LINE      (with --job-key: history that was missing or ignored; repeatable)
//   library_loads=yes|no       (with --check-library PATH: whether dlopen takes it)
//   library_error=ONE LINE     (when it does not)
//
// Exit status 0 whether found or not; 2 for bad arguments.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "vocab/profile.h"
#include "launcher/commands.h"
#include "launcher/context.h"
#include "db/node_type.h"
#include "vocab/outside_input.h"
#include "db/profile_store.h"
#include "db/paths.h"
#include "db/resolve.h"
#include "launcher/history_reader.h"
#include "report/layout_choice.h"
#include "launcher/mpi_choice.h"
#include "vocab/elf_needed.h"
#include "vocab/job_key.h"
#include "vocab/ranks_per_gpu.h"
#include "vocab/mpi_families.h"
#include "vocab/user_options.h"

namespace multilane {
namespace {

struct ResolveOptions {
  std::vector<std::string> databases;
  std::string partition;
  bool any_node_type = false;
  std::string check_library;
  std::string mpi;                   // "", "auto" or a family
  std::string program;               // the job's program (argv[0]), for --mpi auto
  std::string program_path;          // the job's PATH, to find a program named without '/'
  std::string program_dir;           // the job's working directory, for a relative program
  std::string options;               // the user's --multilane value, checked with the plugin's parser
  std::string job_key;               // the job's key: its history chooses the ranks per GPU
  std::string history_db;            // "": the user's database
  bool asked_ranks_per_gpu = false;  // the --options value named ranks-per-gpu:N (it always wins)
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
  mla::ReadFdBounded(fds[0], 4096, &why);
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
  std::printf("ranks_per_gpu=%d\n", mla::RanksPerGpuOrOne(p.ranks_per_gpu));
  // A tune of several values: which were measured, and whether under MPS.
  const std::string tuned = mla::ProfileHeaderValue(p.profile_text, "ranks_per_gpu_tuned");
  std::printf("ranks_per_gpu_tuned=%s\n",
              tuned.empty() ? std::to_string(mla::RanksPerGpuOrOne(p.ranks_per_gpu)).c_str() : OneLine(tuned).c_str());
  const std::string mps = mla::ProfileHeaderValue(p.profile_text, "mps");
  if (!mps.empty()) std::printf("mps=%s\n", OneLine(mps).c_str());
  std::printf("tuned_nodes=%d\n", p.nodes);
  const std::string virt = mla::ProfileHeaderValue(p.profile_text, "nodes_virtual");
  if (!virt.empty()) std::printf("tuned_nodes_virtual=%s\n", OneLine(virt).c_str());
  std::printf("profile_id=%lld\n", static_cast<long long>(p.id));
  std::printf("tuned_at=%s\n", p.tuned_at.c_str());
  std::printf("profile=%s\n", OneLine(p.profile_text).c_str());
}

void PrintMiss(const std::string& why) { std::printf("found=no\nwhy=%s\n", OneLine(why).c_str()); }

// The values of ranks_per_gpu_tuned (vocab/ranks_per_gpu.h's rule), or the
// one value the profile was tuned at.
std::vector<int> TunedValues(const mldb::ProfileRecord& p) {
  std::vector<int> out;
  std::string error;
  const std::string text = mla::ProfileHeaderValue(p.profile_text, "ranks_per_gpu_tuned");
  if (text.empty() || !mla::ParseRanksPerGpuList(text, "ranks_per_gpu_tuned", &out, &error))
    out = {mla::RanksPerGpuOrOne(p.ranks_per_gpu)};
  return out;
}

// --job-key: the ranks per GPU the job's own history chooses among the
// profile's (docs/history.md "The next layout"); nothing when the user named
// the value (ranks-per-gpu:N always wins).
void PrintLayoutChoice(const ResolveOptions& opt, const mldb::ProfileRecord& p) {
  if (opt.job_key.empty() || opt.asked_ranks_per_gpu) return;
  if (!mla::ValidJobKey(opt.job_key)) {
    std::printf("history_note=%s\n", OneLine("the job key '" + mla::Excerpt(opt.job_key) + "' is not " +
                                             mla::JobKeyRule() + ": the job history is not used; fix MULTILANE_JOB_KEY")
                                         .c_str());
    return;
  }
  const std::string database = opt.history_db.empty() ? mldb::UserDatabasePath() : opt.history_db;
  std::string note;
  const HistoryReader history(database);
  const std::vector<mla::JobRun> runs = history.Runs(opt.job_key, &note);
  // A database not made yet is no news: the choice's line says there is no run.
  if (!note.empty() && runs.empty() && (database.empty() || access(database.c_str(), F_OK) == 0))
    std::printf("history_note=%s\n", OneLine(note).c_str());
  if (!history.InboxNote().empty()) std::printf("history_note=%s\n", OneLine(history.InboxNote()).c_str());
  mla::Profile profile;
  std::string error;
  if (!profile.Parse(p.profile_text, &error)) {
    std::printf("history_note=%s\n",
                OneLine("the profile cannot be read (" + error + "): the history is not used").c_str());
    return;
  }
  const mlreport::LayoutChoice c =
      mlreport::ChooseRanksPerGpu(runs, profile, TunedValues(p), mla::RanksPerGpuOrOne(p.ranks_per_gpu));
  for (const std::string& n : c.notes) std::printf("history_note=%s\n", OneLine(n).c_str());
  std::printf("ranks_per_gpu_chosen=%d\nlayout_basis=%s\nlayout_why=%s\n", c.ranks_per_gpu, c.basis.c_str(),
              OneLine(c.why).c_str());
}

// One MPI family the look-up may use, with its version key.
struct FamilyCandidate {
  std::string name;
  std::string mpi_version;
};

// The families to look profiles up for, in order, and where the choice came
// from ("option", "program" or "profiles": every installed family, the first
// with a profile wins, Open MPI before MPICH).  Families whose build is not
// installed are left out with a note.
std::vector<FamilyCandidate> Candidates(const ResolveOptions& opt, std::string* from, std::vector<std::string>* notes) {
  std::vector<std::string> names;
  const std::string by_program = FamilyOfProgram(opt.program, opt.program_path, opt.program_dir);
  if (!opt.mpi.empty() && opt.mpi != "auto") {
    names = {opt.mpi};
    *from = "option";
  } else if (!by_program.empty()) {
    names = {by_program};
    *from = "program";
  } else {
    for (const mla::MpiFamilyInfo& f : mla::MpiFamilies()) names.push_back(f.name);
    *from = "profiles";
  }
  const Installation install = FindInstallation();
  std::vector<FamilyCandidate> out;
  for (const std::string& name : names) {
    std::string error;
    const std::string version = MpiVersionOfFamily(name, ProbeOfFamily(install.probe, name), &error);
    if (version.empty()) {
      notes->push_back(error);
      continue;
    }
    out.push_back({name, version});
  }
  return out;
}

// A profile of `partition` for any node type (the submit host is not a node
// of the partition): mldb::ResolvePartitionProfile over the candidate families.
int ResolveForPartition(const ResolveOptions& opt, const std::vector<FamilyCandidate>& families,
                        const std::string& from) {
  std::vector<std::string> versions, notes;
  for (const FamilyCandidate& f : families) versions.push_back(f.mpi_version);
  auto best =
      mldb::ResolvePartitionProfile(DatabasesToRead(opt.databases), opt.partition, LibraryVersion(), versions, &notes);
  if (!best) {
    std::string problems;
    for (const std::string& n : notes) problems += (problems.empty() ? "" : "; ") + n;
    PrintMiss("no profile of partition '" + mla::Excerpt(opt.partition) + "' for libmlallreduce " + LibraryVersion() +
              (problems.empty() ? "" : " (" + problems + ")") +
              "; an admin makes one with `multilane tune --partition " + mla::Excerpt(opt.partition) + " --system`");
    return 0;
  }
  for (const FamilyCandidate& f : families)
    if (f.mpi_version == best->mpi_version) std::printf("mpi=%s\nmpi_from=%s\n", f.name.c_str(), from.c_str());
  PrintHit(*best, "");
  PrintLayoutChoice(opt, *best);
  return 0;
}

// --options VALUE: the user's --multilane value through the plugin's own
// parser (for the cli_filter, which must refuse and read what the plugin
// does).  Returns false when the value is refused or turns multilane off:
// then there is nothing to look up.
bool CheckUserOptions(ResolveOptions* opt) {
  mla::UserOptions u;
  std::string error;
  if (!mla::ParseUserOptions(opt->options.c_str(), &u, &error)) {
    std::printf("options_error=%s\n", OneLine(error).c_str());
    return false;
  }
  std::printf("options=ok\nenabled=%s\n", u.enabled && !u.help ? "yes" : "no");
  if (u.ranks_per_gpu > 0) std::printf("ranks_per_gpu_asked=%d\n", u.ranks_per_gpu);
  opt->asked_ranks_per_gpu = u.ranks_per_gpu > 0;
  if (!u.mpi.empty() && (opt->mpi.empty() || opt->mpi == "auto")) opt->mpi = u.mpi;
  return u.enabled && !u.help;
}

int Resolve(ResolveOptions opt) {
  if (!opt.options.empty() && !CheckUserOptions(&opt)) return 0;
  CheckLibrary(opt.check_library);
  if (opt.any_node_type && opt.partition.empty()) return Fail("--any-node-type needs --partition NAME");
  if (!opt.mpi.empty() && opt.mpi != "auto" && mla::FindMpiFamily(opt.mpi) == nullptr)
    return Fail("--mpi '" + mla::Excerpt(opt.mpi) + "' must be auto, " + mla::MpiFamilyChoices());
  std::string from;
  std::vector<std::string> notes;
  const std::vector<FamilyCandidate> families = Candidates(opt, &from, &notes);
  if (opt.any_node_type) return ResolveForPartition(opt, families, from);
  const mldb::NodeFingerprint fp =
      mldb::CollectNodeFingerprint(families.empty() ? MpiLibraryVersion() : families.front().mpi_version);
  for (const FamilyCandidate& f : families) {
    auto profile = mldb::ResolveProfile(DatabasesToRead(opt.databases), fp.Key(), opt.partition, LibraryVersion(),
                                        f.mpi_version, &notes);
    if (!profile) continue;
    std::printf("mpi=%s\nmpi_from=%s\n", f.name.c_str(), from.c_str());
    PrintHit(*profile, fp.Key());
    PrintLayoutChoice(opt, *profile);
    return 0;
  }
  std::string why =
      "no profile for node type " + fp.Key() + " (" + fp.Description() + ") with libmlallreduce " + LibraryVersion();
  for (const std::string& n : notes) why += "; " + n;
  PrintMiss(why);
  std::printf("node_type=%s\n", fp.Key().c_str());
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
  for (const auto& [name, value, help] : std::initializer_list<std::tuple<const char*, std::string*, std::string>>{
           {"--check-library", &opt->check_library, "Also say whether this library loads (dlopen)"},
           {"--mpi", &opt->mpi,
            "The job's MPI family: auto (default: the program's, else the first family with a profile), " +
                mla::MpiFamilyChoices()},
           {"--program", &opt->program, "With --mpi auto: the job's program, whose MPI library names the family"},
           {"--program-path", &opt->program_path, "The job's PATH, to find a --program named without '/'"},
           {"--program-dir", &opt->program_dir, "The job's working directory, for a relative --program"},
           {"--options", &opt->options,
            "The user's --multilane value: prints options=ok (and the items it sets) or options_error=WHY"},
           {"--job-key", &opt->job_key,
            "The job's key (MULTILANE_JOB_KEY): its history chooses the ranks per GPU (ranks_per_gpu_chosen=N)"},
           {"--history-db", &opt->history_db,
            "With --job-key: the database holding the job history (default: the user's)"}})
    cmd->add_option(name, *value, help);
  cmd->callback([opt, status] { *status = Resolve(*opt); });
}

}  // namespace multilane
