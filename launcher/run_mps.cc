// run_mps.cc: whether a job of `multilane run` gets a private MPS daemon
// (run_mps.h).
#include "run_mps.h"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

#include "vocab/outside_input.h"

namespace multilane {
namespace {

// A control daemon serves `folder` while the process its pid file names is
// alive: on `quit` the daemon removes the file but leaves its sockets, so
// a socket alone may be stale.  The file is read as outside input (a FIFO
// or a link planted there is refused, never waited on).
bool ControlDaemonAlive(const std::string& folder) {
  std::string text, error;
  if (!mldb::ReadInputFile(folder + "/nvidia-cuda-mps-control.pid", &text, &error, /*refuse_links=*/true)) return false;
  char* end = nullptr;
  const long pid = std::strtol(text.c_str(), &end, 10);
  if (pid <= 0 || end == text.c_str()) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

bool ExpectsMps(const RunMpsFacts& f) { return f.profile_mps == "on" && f.ranks_per_gpu > 1; }

}  // namespace

bool ParseRunMpsMode(const std::string& text, RunMpsMode* mode) {
  if (text == "auto") *mode = RunMpsMode::kAuto;
  else if (text == "yes") *mode = RunMpsMode::kYes;
  else if (text == "no") *mode = RunMpsMode::kNo;
  else return false;
  return true;
}

const char* RunMpsModeChoices() { return "auto, yes or no"; }

RunMpsPlan PlanRunMps(const RunMpsFacts& f) {
  RunMpsPlan plan;
  const std::string expected =
      "the profile's layouts of several ranks per GPU were measured under MPS, and this job runs without it, so its "
      "kernels are time-sliced and calls on device buffers are slower than the profile expects: ";
  if (!f.daemon.empty()) {
    if (f.mode != RunMpsMode::kNo && (f.mode == RunMpsMode::kYes || ExpectsMps(f)))
      plan.note = "MPS: the job uses the daemon already running (" + f.daemon + ")";
    return plan;
  }
  if (f.mode == RunMpsMode::kNo) {
    if (ExpectsMps(f)) plan.note = expected + "drop --mps no, or run with --ranks-per-gpu 1";
    return plan;
  }
  if (f.mode == RunMpsMode::kAuto && !ExpectsMps(f)) return plan;
  if (!f.ranks_here) {
    plan.note = "MPS: not started here: the tasks of srun, or of an allocation of several nodes, get it from the "
                "Slurm plugin on each node (srun --multilane, plugstack mps=auto)";
    return plan;
  }
  if (f.program.empty()) {
    plan.note = (f.mode == RunMpsMode::kYes ? std::string("MPS: --mps yes, but this job runs without it: ") : expected) +
                "nvidia-cuda-mps-control is not found; install NVIDIA's MPS control program or put it on PATH "
                "(MULTILANE_MPS_CONTROL names it), or run with --ranks-per-gpu 1";
    return plan;
  }
  plan.start = true;
  return plan;
}

std::string ReachableMpsPipe(const std::string& site_folder) {
  if (const char* v = std::getenv("CUDA_MPS_PIPE_DIRECTORY"); v != nullptr && *v != '\0') return v;
  struct stat st;
  const std::string control = site_folder + "/control";
  if (lstat(control.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && ControlDaemonAlive(site_folder)) return site_folder;
  return "";
}

}  // namespace multilane
