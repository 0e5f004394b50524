// cmd_tune.cc: `multilane tune`: runs the probe program on this machine (or
// inside a Slurm allocation), turns its timings into a profile and stores it.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "context.h"
#include "db/node_type.h"
#include "db/paths.h"
#include "db/profile_store.h"
#include "progress.h"
#include "slurm_partition.h"
#include "tuner/candidates.h"
#include "tuner/plan.h"
#include "tuner/search.h"

extern char** environ;

namespace multilane {
namespace {

struct TuneOptions {
  double budget_s = 60;
  std::string sizes = "4K:64M";
  int step = 4;
  std::string memory = "host";
  int np = 0;
  int virtual_nodes = 0;
  int ranks_per_gpu = 0;
  std::string partition;
  bool system = false;
  std::string database;
  bool exhaustive = false;
  std::string keep;
};

// "4K:64M" -> 4K, 16K, ... 64M (times `step`).
bool ParseSizes(const std::string& text, int step, std::vector<uint64_t>* out, std::string* error) {
  const size_t colon = text.find(':');
  uint64_t lo = 0, hi = 0;
  if (colon == std::string::npos || !mltuner::ParseByteSize(text.substr(0, colon), &lo) ||
      !mltuner::ParseByteSize(text.substr(colon + 1), &hi) || lo < 4 || hi < lo) {
    *error = "--sizes '" + text + "' must be FROM:TO with byte sizes, FROM >= 4 and TO >= FROM, e.g. 4K:64M";
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

std::string TempDir(const std::string& keep) {
  if (!keep.empty()) {
    std::string cmd = "mkdir -p '" + keep + "'";
    if (std::system(cmd.c_str()) != 0) return "";
    return keep;
  }
  char tmpl[] = "/tmp/multilane-tune.XXXXXX";
  const char* dir = mkdtemp(tmpl);
  return dir ? dir : "";
}

// Runs the probe; draws progress from its "progress ..." lines.  Returns its
// exit status; the other lines of its output land in *output.
int RunProbe(const std::vector<std::string>& command, std::string* output) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    *output = std::string("cannot start ") + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  ProgressBar bar(stderr);
  FILE* in = fdopen(fds[0], "r");
  char line[4096];
  while (in && std::fgets(line, sizeof line, in)) {
    ProgressLine p;
    if (ParseProgressLine(line, &p)) bar.Update(p);
    else *output += line;
  }
  if (in) std::fclose(in);
  bar.Finish();
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

mldb::ProfileEntryRow EntryFromBin(const mltuner::Space& space, const mltuner::Bin& bin, int ppg) {
  mldb::ProfileEntryRow e;
  e.mem_kind = mltuner::MemKindName(bin.mem);
  e.min_bytes = static_cast<int64_t>(bin.from);
  if (bin.to != UINT64_MAX) e.max_bytes = static_cast<int64_t>(bin.to);
  mltuner::Candidate c;
  std::string error;
  if (mltuner::ParseCandidate(space, bin.winner, &c, &error)) {
    e.algo = c.algo;
    for (const auto& [key, value] : c.params) {
      uint64_t bytes = 0;
      if (key == "lanes") e.lanes = std::atoi(value.c_str());
      else if (key == "chunk" && mltuner::ParseByteSize(value, &bytes)) e.chunk_bytes = static_cast<int64_t>(bytes);
      else if (key == "transport") e.transport = value;
    }
  } else {
    e.algo = bin.winner.substr(0, bin.winner.find(' '));
  }
  (void)ppg;
  e.time_us = bin.time_us;
  e.mpi_time_us = bin.mpi_time_us;
  return e;
}

std::string ShellQuote(const std::string& word) {
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string ReadCommand(const std::vector<std::string>& argv, int* status) {
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + ShellQuote(a);
  std::string out;
  FILE* p = popen((line + " 2>&1").c_str(), "r");
  if (p == nullptr) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

std::string SelfPath() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "multilane";
  buf[n] = '\0';
  return buf;
}

// `multilane tune --partition NAME` outside an allocation: one batch job per
// node type of the partition (sbatch --wait, all at once), each running this
// command again inside its allocation on one node of that type, where it
// probes with srun and publishes the profile.  The database must be reachable
// from the compute nodes (a shared file system).
int TunePartition(const TuneOptions& opt) {
  int status = 0;
  const std::string sinfo = ReadCommand(SinfoNodeArguments(opt.partition), &status);
  if (status != 0)
    return Fail("sinfo failed for partition '" + opt.partition + "' (" + sinfo.substr(0, sinfo.find('\n')) +
                "); check the partition name and that Slurm's commands are on PATH");
  const std::vector<SlurmNodeGroup> groups = ParseSinfoNodeGroups(sinfo);
  if (groups.empty()) return Fail("partition '" + opt.partition + "' has no nodes (sinfo -p " + opt.partition + ")");
  std::string db_path = !opt.database.empty() ? opt.database : mldb::SystemDatabasePath();
  if (db_path[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) != nullptr) db_path = std::string(cwd) + "/" + db_path;
  }
  {
    std::string error;  // a broken database fails before any job is submitted
    if (!mldb::ProfileStore::Open(db_path, mldb::ProfileStore::Access::kReadWrite, &error)) return Fail(error);
  }
  // The jobs' output goes where the compute nodes can write it and this host
  // read it: --keep, else a new folder in the current (shared) directory.
  std::string dir = opt.keep;
  if (dir.empty()) {
    char tmpl[] = "multilane-tune.XXXXXX";
    const char* made = mkdtemp(tmpl);
    char cwd[4096];
    if (made != nullptr && getcwd(cwd, sizeof cwd) != nullptr) dir = std::string(cwd) + "/" + made;
  } else {
    dir = TempDir(opt.keep);
  }
  if (dir.empty()) return Fail("cannot make a folder for the jobs' output in the current directory; give --keep DIR");

  struct Job {
    const SlurmNodeGroup* group;
    pid_t pid;
    std::string output;
  };
  std::vector<Job> jobs;
  for (const SlurmNodeGroup& g : groups) {
    const int np = opt.np > 0 ? opt.np : std::max(1, std::atoi(g.cpus.c_str()));
    std::vector<std::string> inner = {SelfPath(), "tune", "--partition", opt.partition, "--db", db_path,
                                      "--budget", std::to_string(opt.budget_s), "--sizes", opt.sizes,
                                      "--step", std::to_string(opt.step), "--memory", opt.memory,
                                      "--np", std::to_string(np)};
    if (opt.virtual_nodes > 0) inner.insert(inner.end(), {"--virtual-nodes", std::to_string(opt.virtual_nodes)});
    if (opt.ranks_per_gpu > 0) inner.insert(inner.end(), {"--ranks-per-gpu", std::to_string(opt.ranks_per_gpu)});
    if (opt.exhaustive) inner.push_back("--exhaustive");
    std::string wrap;
    for (const std::string& a : inner) wrap += (wrap.empty() ? "" : " ") + ShellQuote(a);
    const std::string output = dir + "/tune-" + g.nodes.front() + "-%j.out";
    std::vector<std::string> argv = {"sbatch", "--wait", "--job-name=multilane-tune", "--partition", opt.partition,
                                     "--nodes=1", "--nodelist=" + g.nodes.front(), "--ntasks=" + std::to_string(np),
                                     "--output=" + output};
    if (g.gpus > 0) argv.push_back("--gpus-per-node=" + std::to_string(g.gpus));
    argv.push_back("--wrap=" + wrap);
    std::fprintf(stderr, "multilane tune: node type of %s (%s CPUs, gres %s, %zu node(s)): submitting\n",
                 g.nodes.front().c_str(), g.cpus.c_str(), g.gres.c_str(), g.nodes.size());
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawnp(&pid, "sbatch", nullptr, nullptr, cargv.data(), environ) != 0)
      return Fail("cannot run sbatch: is Slurm's client on PATH?");
    jobs.push_back({&g, pid, output});
  }
  int failed = 0;
  for (Job& j : jobs) {
    int st = 0;
    waitpid(j.pid, &st, 0);
    const bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!ok) ++failed;
    std::fprintf(stderr, "multilane tune: node type of %s: %s\n", j.group->nodes.front().c_str(),
                 ok ? "profile published" : "the probe job failed");
    // The job's own report (the decision table and the profile).
    int ls = 0;
    const std::string files = ReadCommand({"sh", "-c", "cat " + dir + "/tune-" + j.group->nodes.front() + "-*.out"}, &ls);
    std::fputs(files.c_str(), ok ? stdout : stderr);
  }
  if (failed > 0)
    return Fail(std::to_string(failed) + " of " + std::to_string(jobs.size()) +
                " probe jobs failed; their output is above (and in " + dir + ")");
  std::printf("multilane tune: partition %s: %zu node type(s) tuned into %s\n", opt.partition.c_str(), jobs.size(),
              db_path.c_str());
  return 0;
}

int Tune(const TuneOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<uint64_t> sizes;
  std::string error;
  if (!ParseSizes(opt.sizes, opt.step, &sizes, &error)) return Fail(error);
  mltuner::MemKind mem;
  if (!mltuner::MemKindFromName(opt.memory, &mem)) return Fail("--memory must be host or device");
  if (opt.budget_s <= 0) return Fail("--budget must be a positive number of seconds");
  if (!opt.partition.empty() && !InSlurmAllocation()) return TunePartition(opt);

  const Installation install = FindInstallation();
  if (access(install.probe.c_str(), X_OK) != 0)
    return Fail("the probe program " + install.probe + " is missing: build multilane or set MULTILANE_PROBE");
  const std::string mpi = MpiLibraryVersion();
  const mldb::NodeFingerprint fp = mldb::CollectNodeFingerprint(mpi);
  const std::string db_path = !opt.database.empty() ? opt.database
                              : opt.system          ? mldb::SystemDatabasePath()
                                                    : mldb::UserDatabasePath();
  if (db_path.empty()) return Fail("no user database path (no HOME): give --db PATH or set MULTILANE_USER_DB");
  // Open the database first: a broken one fails before minutes of probes.
  auto store = mldb::ProfileStore::Open(db_path, mldb::ProfileStore::Access::kReadWrite, &error);
  if (!store) return Fail(error);

  const std::string dir = TempDir(opt.keep);
  if (dir.empty()) return Fail("cannot make a folder for the probe's files under /tmp");
  nlohmann::json plan = {{"sizes", sizes}, {"memory", opt.memory}, {"budget_s", opt.budget_s},
                         {"comment", "multilane tune of node type " + fp.Key()}};
  const std::string plan_path = dir + "/plan.json", result_path = dir + "/result.json";
  {
    std::ofstream out(plan_path);
    out << plan.dump(2) << "\n";
  }

  // The probe's layout: the variables the library reads, and nothing that
  // would change its decisions.
  for (const char* name : {"MULTILANE_ALGO", "MULTILANE_PROFILE", "MULTILANE_PROFILE_FILE", "MULTILANE_LANES",
                           "MULTILANE_CHUNK", "MULTILANE_TRANSPORT", "LD_PRELOAD"})
    unsetenv(name);
  std::vector<std::string> forward;
  int np = opt.np > 0 ? opt.np : static_cast<int>(std::max(2L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (opt.virtual_nodes > 0) {
    if (np % opt.virtual_nodes != 0)
      return Fail("--np " + std::to_string(np) + " is not a multiple of --virtual-nodes " +
                  std::to_string(opt.virtual_nodes));
    setenv("MULTILANE_RANKS_PER_NODE", std::to_string(np / opt.virtual_nodes).c_str(), 1);
    forward.push_back("MULTILANE_RANKS_PER_NODE");
  }
  if (opt.ranks_per_gpu > 0) {
    setenv("MULTILANE_RANKS_PER_GPU", std::to_string(opt.ranks_per_gpu).c_str(), 1);
    forward.push_back("MULTILANE_RANKS_PER_GPU");
  }
  std::vector<std::string> command;
  if (InSlurmAllocation()) {
    command = {"srun", "--kill-on-bad-exit=1"};
    if (opt.np > 0) command.push_back("--ntasks=" + std::to_string(np));
  } else {
    command = {"mpirun", "-np", std::to_string(np)};
    if (np > sysconf(_SC_NPROCESSORS_ONLN)) command.push_back("--oversubscribe");
    for (const std::string& name : forward) {
      command.push_back("-x");
      command.push_back(name);
    }
  }
  for (const std::string& a : {install.probe, std::string("--plan"), plan_path, std::string("--out"), result_path})
    command.push_back(a);
  if (opt.exhaustive) command.push_back("--exhaustive");

  std::fprintf(stderr, "multilane tune: node type %s: %s\n", fp.Key().c_str(), fp.Description().c_str());
  std::string line;
  for (const std::string& a : command) line += (line.empty() ? "" : " ") + a;
  std::fprintf(stderr, "multilane tune: %s\n", line.c_str());
  std::string output;
  const int status = RunProbe(command, &output);
  if (status != 0) {
    std::fputs(output.c_str(), stderr);
    return Fail("the probes failed (exit status " + std::to_string(status) + "); nothing was stored" +
                (opt.keep.empty() ? "" : "; their files are in " + dir));
  }
  std::ifstream in(result_path);
  nlohmann::json result = nlohmann::json::parse(in, nullptr, false);
  if (result.is_discarded()) return Fail("the probe wrote no readable result at " + result_path);

  auto measurements = mltuner::MeasurementsFromResult(result);
  // A candidate the library passed to the system MPI measured the system
  // MPI: it must not win under its own name.
  for (const auto& size : result.value("sizes", nlohmann::json::array())) {
    for (const auto& c : size.value("candidates", nlohmann::json::array())) {
      if (!c.value("fell_back", false)) continue;
      for (auto& m : measurements)
        if (m.bytes == size.value("bytes", uint64_t{0}) && m.candidate == c.value("candidate", std::string()))
          m.valid = false;
    }
  }
  mltuner::SearchResult decided = mltuner::Decide(measurements);
  for (const std::string& p : decided.problems) std::fprintf(stderr, "multilane tune: note: %s\n", p.c_str());
  if (decided.bins.empty()) return Fail("the probes measured nothing usable; nothing was stored");

  const int nodes = result.contains("layout") ? result["layout"].value("nodes", 1) : 1;
  const int ppg = opt.ranks_per_gpu > 0 ? opt.ranks_per_gpu : 1;
  const double duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  mldb::ProfileRecord record;
  record.partition = opt.partition;
  record.nodes = nodes;
  record.ranks_per_gpu = ppg;
  record.library_version = LibraryVersion();
  record.mpi_version = mpi;
  record.tuned_by = CurrentUser();
  record.tuned_at = UtcNow();
  record.duration_s = duration;
  std::map<std::string, std::string> metadata = {{"node_type", fp.Key()}, {"tuned_at", record.tuned_at},
                                                 {"nodes", std::to_string(nodes)}, {"ranks", std::to_string(np)}};
  if (!opt.partition.empty()) metadata["partition"] = opt.partition;
  record.profile_text = mltuner::RenderProfile(decided.bins, metadata);
  const mltuner::Space space = mltuner::DefaultSpace();
  for (const auto& bin : decided.bins) record.entries.push_back(EntryFromBin(space, bin, ppg));
  std::vector<mldb::Measurement> raw;
  for (const auto& m : measurements) {
    if (m.samples.empty()) continue;
    mldb::Measurement r;
    r.mem_kind = mltuner::MemKindName(m.mem);
    r.bytes = static_cast<int64_t>(m.bytes);
    r.candidate = m.candidate + (m.valid ? "" : " (wrong result)");
    r.ppg = ppg;
    r.time_us = mltuner::Median(m.samples);
    r.reps = static_cast<int>(m.samples.size());
    raw.push_back(r);
  }
  if (!store->Publish(fp, &record, raw, &error)) return Fail(error);

  std::printf("%s", mltuner::FormatDecisionTable(decided.decisions).c_str());
  std::printf("\nprofile %lld stored in %s for node type %s (%d node(s), %d ranks; tuned in %.1f s)\n",
              static_cast<long long>(record.id), db_path.c_str(), fp.Key().c_str(), nodes, np, duration);
  std::printf("%s", record.profile_text.c_str());
  return 0;
}

}  // namespace

void AddTuneCommand(CLI::App& app, int* status) {
  auto* opt = new TuneOptions();
  CLI::App* cmd = app.add_subcommand("tune", "Measure every candidate on this node type and store the winning profile");
  cmd->add_option("--budget", opt->budget_s, "Seconds the probes may take (successive halving spends them)")
      ->capture_default_str();
  cmd->add_option("--sizes", opt->sizes, "Message sizes FROM:TO in bytes (K, M, G suffixes)")->capture_default_str();
  cmd->add_option("--step", opt->step, "Factor between measured sizes")->capture_default_str();
  cmd->add_option("--memory", opt->memory, "host or device buffers")->capture_default_str();
  cmd->add_option("--np", opt->np, "Ranks for the probes outside Slurm (default: the cores)");
  cmd->add_option("--virtual-nodes", opt->virtual_nodes, "Split the ranks into this many virtual nodes (one machine)");
  cmd->add_option("--ranks-per-gpu", opt->ranks_per_gpu, "Ranks sharing one GPU");
  cmd->add_option("--partition", opt->partition,
                  "Slurm partition the profile is for; outside an allocation, submits one probe job per node type "
                  "of the partition with sbatch and stores into the system database (or --db)");
  cmd->add_flag("--system", opt->system, "Store in the system database (the admin's) instead of the user's");
  cmd->add_option("--db", opt->database, "Store in this database file");
  cmd->add_flag("--exhaustive", opt->exhaustive, "Measure every candidate fully (slow; for comparisons)");
  cmd->add_option("--keep", opt->keep, "Keep the plan and the probe's result in this folder");
  cmd->callback([opt, status] { *status = Tune(*opt); });
}

}  // namespace multilane
