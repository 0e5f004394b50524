// tune_partition.cc: `multilane tune --partition NAME` outside an allocation
// (tune_partition.h).  One batch job per node type of the partition, all at
// once, each running `multilane tune` again inside its allocation on one node
// of that type into its own database file in the jobs' folder; this command
// then stores their profiles into the target database (publishing the system
// database's snapshot once).  No process on a compute node ever writes the
// shared database.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <filesystem>
#include <string>
#include <vector>

#include "launcher/context.h"
#include "db/profile_json.h"
#include "vocab/outside_input.h"
#include "db/profile_store.h"
#include "launcher/output_file.h"
#include "launcher/process.h"
#include "launcher/slurm_partition.h"
#include "launcher/store_target.h"
#include "launcher/tune/tune_budget.h"
#include "launcher/tune/tune_folder.h"
#include "launcher/tune/tune_partition.h"
#include "vocab/byte_size.h"
#include "vocab/refuse.h"

namespace multilane {
namespace {

// Seconds a probe job's `sbatch` submission and its `srun` step take on top
// of the inner tune's own budget.
constexpr double kSubmitReserveS = 3;

// A probe job's output in the tune's folder: bounded, links not followed;
// what went wrong instead when it cannot be read.
std::string ReadJobOutput(const std::string& path) {
  std::string text, error;
  return mla::ReadInputFile(path, &text, &error, /*refuse_links=*/true) ? text : path + ": " + error + "\n";
}

// The probe jobs in flight; cancels (scancel) those still running and stops
// their `sbatch --wait` when destroyed, unless they all finished.
class ProbeJobs {
 public:
  struct Job {
    std::string node;    // the node of the type it runs on
    std::string db;      // its private database file
    std::string job_id;  // Slurm's
    std::string output;  // its output file
    pid_t sbatch = -1;   // the waiting sbatch; -1 once reaped
    int fd = -1;         // sbatch's standard output
    int status = -1;     // sbatch's exit status once reaped
  };

  ~ProbeJobs() { CancelRunning(); }

  std::vector<Job>& jobs() { return jobs_; }
  const std::vector<Job>& jobs() const { return jobs_; }

  // Cancels every job not yet finished (by job id) and reaps their sbatch.
  void CancelRunning() {
    std::vector<std::string> ids;
    for (const Job& j : jobs_)
      if (j.sbatch > 0 && !j.job_id.empty()) ids.push_back(j.job_id);
    if (!ids.empty()) {
      std::vector<std::string> argv = {"scancel"};
      argv.insert(argv.end(), ids.begin(), ids.end());
      std::string out;
      const int rc = RunAndCapture(argv, &out);
      std::string list;
      for (const std::string& id : ids) list += (list.empty() ? "" : " ") + id;
      std::fprintf(stderr, "multilane tune: cancelled probe job(s) %s%s%s\n", list.c_str(),
                   rc == 0 ? "" : ": scancel failed: ", rc == 0 ? "" : out.c_str());
    }
    for (Job& j : jobs_) {
      if (j.sbatch > 0) {
        kill(j.sbatch, SIGTERM);
        j.status = WaitChild(j.sbatch, false);
        j.sbatch = -1;
      }
      if (j.fd >= 0) close(j.fd);
      j.fd = -1;
    }
  }

 private:
  std::vector<Job> jobs_;
};

// Reads sbatch --parsable's first line ("JOBID" or "JOBID;CLUSTER").
std::string ReadJobId(int fd) {
  std::string line;
  char c;
  for (;;) {
    const ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) {
      if (InterruptSignal() != 0) return "";
      continue;
    }
    if (n <= 0 || c == '\n') break;
    line += c;
  }
  line = line.substr(0, line.find(';'));
  return line.find_first_not_of("0123456789") == std::string::npos ? line : "";
}

// --time for a probe job: twice the inner budget plus a minute, in whole
// minutes: room for a slow start, and a hung probe still ends.
int TimeLimitMinutes(double inner_budget_s) { return static_cast<int>(std::ceil((2 * inner_budget_s + 60) / 60)); }

// The inner tune of a probe job: the request's options again, with the
// job's own database `db`, budget and `np` (0: its GPU node type lays its
// launches out per GPU itself), into the system database when `publish`;
// keeping its plan and the probe's result in `keep` when not empty.
std::vector<std::string> InnerTune(const TuneRequest& r, const std::string& db, const std::string& budget, int np,
                                   bool virtual_nodes, bool publish, const std::string& keep) {
  std::vector<std::string> inner = {
      SelfPath(),    "tune",
      "--partition", r.partition,
      "--db",        db,
      "--budget",    budget,
      "--sizes",     mla::FormatByteSize(r.sizes.from) + ":" + mla::FormatByteSize(r.sizes.to),
      "--step",      std::to_string(r.sizes.step),
      "--memory",    TuneMemoryName(r.memory)};
  if (np > 0) inner.insert(inner.end(), {"--np", std::to_string(np)});
  if (virtual_nodes) inner.insert(inner.end(), {"--virtual-nodes", std::to_string(r.virtual_nodes)});
  if (!r.ranks_per_gpu.empty()) {
    std::string list;
    for (int v : r.ranks_per_gpu) list += (list.empty() ? "" : ",") + std::to_string(v);
    inner.insert(inner.end(), {"--ranks-per-gpu", list});
  }
  // The family to tune, and the job report whose sizes weight the choice
  // of ranks per GPU (a path the nodes read: made absolute here).
  inner.insert(inner.end(), {"--mpi", r.family->name});
  if (!r.srun_mpi.empty()) inner.insert(inner.end(), {"--srun-mpi", r.srun_mpi});
  if (r.weights) inner.insert(inner.end(), {"--weights", std::filesystem::absolute(r.weights->path).string()});
  if (r.exhaustive) inner.push_back("--exhaustive");
  if (!keep.empty()) inner.insert(inner.end(), {"--keep", keep});
  if (publish)
    inner.push_back("--for-system");
  else if (r.allow_oversubscribed)
    inner.push_back("--allow-oversubscribed");
  return inner;
}

int Interrupted(ProbeJobs* jobs) {
  jobs->CancelRunning();
  const int sig = InterruptSignal();
  Fail(std::string("interrupted (") + strsignal(sig) + "): the probe jobs were cancelled; nothing was stored");
  return 128 + sig;
}

// The target: --db `database` (made absolute), else the system database
// (published as a snapshot).
StoreTarget PartitionTarget(std::string database) {
  std::error_code ec;
  if (const auto path = std::filesystem::absolute(database, ec); !database.empty() && !ec) database = path.string();
  return ChooseStoreTarget(database, database.empty());
}

// Waits for every probe job, printing each one's output.  0, or the exit
// status of the tune with the message printed (the jobs cancelled when
// interrupted).
int WaitForJobs(ProbeJobs* probe_jobs) {
  int failed = 0;
  for (ProbeJobs::Job& j : probe_jobs->jobs()) {
    const int st = WaitChild(j.sbatch, true);
    if (st == -1) return Interrupted(probe_jobs);
    j.sbatch = -1;
    j.status = st;
    close(j.fd);
    j.fd = -1;
    const bool ok = st == 0;
    if (!ok) ++failed;
    std::fprintf(
        stderr, "multilane tune: node type of %s: %s\n", j.node.c_str(),
        ok ? "tuned"
           : ("the probe job " + j.job_id + " failed (sbatch exit status " + std::to_string(st) + ")").c_str());
    // The job's own report (the decision table and the profile).
    std::fputs(ReadJobOutput(j.output).c_str(), ok ? stdout : stderr);
  }
  if (failed > 0)
    return Fail(std::to_string(failed) + " of " + std::to_string(probe_jobs->jobs().size()) +
                " probe jobs failed (their output is above); nothing was stored");
  return 0;
}

// Imports the profile of every job's own database into `store`; *added
// counts them.  False with *error on the first that fails.
bool ImportJobProfiles(const ProbeJobs& probe_jobs, mldb::ProfileStore* store, int* added, std::string* error) {
  for (const ProbeJobs::Job& j : probe_jobs.jobs()) {
    auto job_db = mldb::ProfileStore::Open(j.db, mldb::ProfileStore::Access::kReadOnly, error);
    if (!job_db) return mla::Refuse(error, "the probe job for " + j.node + " stored no profile: " + *error);
    const nlohmann::json doc = mldb::ExportProfiles(*job_db, error);
    if (doc.is_null()) return false;
    int imported = 0;
    if (!mldb::ImportProfiles(*store, doc, &imported, error)) return false;
    *added += imported;
  }
  return true;
}

// What every probe job of a partition's tune shares.
struct JobSettings {
  std::string dir;          // the jobs' folder
  std::string budget_text;  // the inner tune's --budget
  int minutes = 0;          // sbatch --time
  bool publish = false;     // the target is the system database
  bool keep = false;        // --keep: each job keeps its plan and result in dir/tune-NODE
};

// Submits the probe job of node type `g` (sbatch --wait, its standard output
// read for the job id) and adds it to *probe_jobs.  0, or the exit status
// of the tune with the message printed.
int SubmitProbeJob(const TuneRequest& request, const SlurmNodeGroup& g, const JobSettings& settings,
                   ProbeJobs* probe_jobs) {
  ProbeJobs::Job job;
  job.node = g.nodes.front();
  job.db = settings.dir + "/tune-" + job.node + ".db";
  // A node type with two nodes or more is measured on two of them, so the
  // step between nodes is measured over the real network; a one-node type
  // keeps what it was given (--virtual-nodes).
  const int job_nodes = g.nodes.size() >= 2 ? 2 : 1;
  std::string nodelist = job.node;
  if (job_nodes == 2) nodelist += "," + g.nodes[1];
  const int np_per_node = request.np > 0 ? request.np : std::max(1, std::atoi(g.cpus.c_str()));
  const int np = np_per_node * job_nodes;
  // A GPU node type's tune lays its launches out per GPU itself (unless
  // told otherwise).
  const bool np_given = request.np > 0 || g.gpus == 0 || request.memory == TuneMemory::kHost;
  const std::vector<std::string> inner =
      InnerTune(request, job.db, settings.budget_text, np_given ? np : 0, request.virtual_nodes > 0 && job_nodes == 1,
                settings.publish, settings.keep ? settings.dir + "/tune-" + job.node : std::string());
  // sbatch runs the inner command itself (a batch script is a file: the
  // arguments go after it, never through a shell's parser).
  const std::string script = settings.dir + "/tune-" + job.node + ".sh";
  if (std::string error; !WriteOutputFile(script, "#!/bin/sh\nexec \"$@\"\n", &error)) return Fail(error);
  job.output = settings.dir + "/tune-" + job.node + "-%j.out";
  std::vector<std::string> argv = {"sbatch", "--wait", "--parsable", "--job-name=multilane-tune", "--partition",
                                   request.partition, "--nodes=" + std::to_string(job_nodes), "--nodelist=" + nodelist,
                                   "--ntasks=" + std::to_string(np),
                                   // the same number on each node: Slurm would place 3 + 1
                                   "--ntasks-per-node=" + std::to_string(np_per_node),
                                   "--time=" + std::to_string(settings.minutes), "--output=" + job.output};
  if (g.gpus > 0) argv.push_back("--gpus-per-node=" + std::to_string(g.gpus));
  argv.push_back(script);
  argv.insert(argv.end(), inner.begin(), inner.end());
  const int rc = SpawnWithPipe(argv, false, &job.sbatch, &job.fd);
  if (rc != 0) return Fail(std::string("cannot run sbatch (") + std::strerror(rc) + "): is Slurm's client on PATH?");
  job.job_id = ReadJobId(job.fd);
  probe_jobs->jobs().push_back(job);
  if (InterruptSignal() != 0) return Interrupted(probe_jobs);
  if (job.job_id.empty()) {
    ProbeJobs::Job& j = probe_jobs->jobs().back();
    j.status = WaitChild(j.sbatch, false);
    j.sbatch = -1;
    return Fail("sbatch did not submit the probe job for node " + job.node + " (exit status " +
                std::to_string(j.status) + "; its message is above)");
  }
  probe_jobs->jobs().back().output = settings.dir + "/tune-" + job.node + "-" + job.job_id + ".out";
  std::fprintf(stderr,
               "multilane tune: node type of %s (%s CPUs, gres %s, %zu node(s)): submitted batch job %s on %s "
               "(time limit %d min, budget %s s)\n",
               job.node.c_str(), g.cpus.c_str(), g.gres.c_str(), g.nodes.size(), job.job_id.c_str(),
               job_nodes == 2 ? ("2 of its nodes, " + nodelist).c_str()
               : request.virtual_nodes > 0
                   ? ("its one node, as " + std::to_string(request.virtual_nodes) + " virtual nodes").c_str()
                   : "its one node",
               settings.minutes, settings.budget_text.c_str());
  return 0;
}

}  // namespace

int TunePartition(const TuneRequest& request, std::chrono::steady_clock::time_point start) {
  InterruptGuard interrupts;
  std::string sinfo;
  const int status = RunAndCapture(SinfoNodeArguments(request.partition), &sinfo);
  if (status != 0)
    return Fail("sinfo failed for partition '" + mla::Excerpt(request.partition) + "' (" +
                mla::Excerpt(sinfo.substr(0, sinfo.find('\n'))) +
                "); check the partition name and that Slurm's commands are on PATH");
  const std::vector<SlurmNodeGroup> groups = ParseSinfoNodeGroups(sinfo);
  if (groups.empty())
    return Fail("partition '" + mla::Excerpt(request.partition) + "' has no nodes (sinfo -p " +
                mla::Excerpt(request.partition) + "): give a partition that sinfo lists");

  const StoreTarget target = PartitionTarget(request.database);
  std::string error;
  auto store = OpenStoreTarget(target, &error);  // a broken database fails before any job is submitted
  if (!store) return Fail(error);

  // The jobs' output and databases go where the compute nodes can write them
  // and this host read them: --keep, else a new folder in the current
  // (shared) directory, removed at the end.
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return Fail("cannot read the current directory; give --keep DIR");
  TuneFolder folder;
  if (!folder.Make(request.keep, cwd, &error)) return Fail(error);

  const double inner_budget = std::max(1.0, request.budget_s - kSubmitReserveS);
  char budget_text[32];
  std::snprintf(budget_text, sizeof budget_text, "%.1f", inner_budget);
  const JobSettings settings{folder.path(), budget_text, TimeLimitMinutes(inner_budget), target.publish, folder.kept()};
  ProbeJobs probe_jobs;  // cancelled on every way out until all have ended
  for (const SlurmNodeGroup& g : groups)
    if (const int rc = SubmitProbeJob(request, g, settings, &probe_jobs); rc != 0) return rc;

  if (const int rc = WaitForJobs(&probe_jobs); rc != 0) return rc;
  // Store every job's profile here, then publish once.
  int added = 0;
  if (!ImportJobProfiles(probe_jobs, store.get(), &added, &error)) return Fail(error);
  if (!FinishStoreTarget(store.get(), target, &error)) return Fail(error);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "multilane tune: partition %s: %zu node type(s), %d profile(s) stored in %s%s (%.1f s of a %.1f s "
      "budget)\n",
      request.partition.c_str(), probe_jobs.jobs().size(), added, target.path.c_str(),
      target.publish ? " (published)" : "", total, request.budget_s);
  if (total > request.budget_s * (1 + kBudgetSlack))
    std::printf(
        "note: the tune took %.1f s, %.1f s (%.0f%%) over its --budget: the rest went to Slurm (waiting in "
        "the queue, starting the jobs); each job's own time is in its output above\n",
        total, total - request.budget_s, 100 * (total - request.budget_s) / request.budget_s);
  return 0;
}

}  // namespace multilane
