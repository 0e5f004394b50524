// run_mps.cc: whether a job of `multilane run` gets a private MPS daemon
// (run_mps.h).
#include "launcher/run_mps.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "launcher/process.h"
#include "vocab/outside_input.h"

namespace multilane {
namespace {

// The owners a daemon in the site folder may have: this user, or root (a
// daemon of the site).
bool TrustedOwner(uid_t uid) { return uid == getuid() || uid == 0; }

std::string Foreign(uid_t uid) { return "uid " + std::to_string(uid) + "'s, not yours or root's"; }

// "" when the daemon whose pid file is in `folder` is alive and this user's
// or root's; else why not (a daemon that quit removes the file but leaves
// its sockets, so a socket alone may be stale).  The file is read as
// outside input (a FIFO or a link planted there is refused, never waited
// on); the folder is writable by its trusted owner alone, so no one else
// can swap it between the checks.
std::string ControlDaemonProblem(const std::string& folder, bool* stale) {
  *stale = true;
  const std::string pid_file = folder + "/nvidia-cuda-mps-control.pid";
  struct stat st;
  if (lstat(pid_file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "no pid file";
  if (!TrustedOwner(st.st_uid)) {
    *stale = false;
    return "its pid file is " + Foreign(st.st_uid);
  }
  std::string text, error;
  if (!mla::ReadInputFile(pid_file, &text, &error, /*refuse_links=*/true)) return "its pid file cannot be read";
  char* end = nullptr;
  const long pid = std::strtol(text.c_str(), &end, 10);
  if (pid <= 0 || pid > 0x7fffffff || end == text.c_str()) return "its pid file names no pid";
  if (!ProcessRuns(static_cast<pid_t>(pid), 0)) return "the daemon has ended";
  uid_t owner = 0;
  if (!ProcessOwner(static_cast<pid_t>(pid), &owner)) return "the daemon has ended";
  if (!TrustedOwner(owner)) {
    *stale = false;
    return "the process its pid file names (" + std::to_string(pid) + ") is " + Foreign(owner);
  }
  return "";
}

bool ExpectsMps(const RunMpsFacts& f) { return f.profile_mps == "on" && f.ranks_per_gpu > 1; }

}  // namespace

bool ParseRunMpsMode(const std::string& text, RunMpsMode* mode) {
  if (text == "auto")
    *mode = RunMpsMode::kAuto;
  else if (text == "yes")
    *mode = RunMpsMode::kYes;
  else if (text == "no")
    *mode = RunMpsMode::kNo;
  else
    return false;
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
      plan.note = "MPS: the job uses the daemon already running (" + mla::TerminalExcerpt(f.daemon) + ")";
    return plan;
  }
  if (f.mode == RunMpsMode::kNo) {
    if (ExpectsMps(f)) plan.note = expected + "drop --mps no, or run with --ranks-per-gpu 1";
    return plan;
  }
  if (f.mode == RunMpsMode::kAuto && !ExpectsMps(f)) return plan;
  if (!f.ranks_here) {
    plan.note =
        "MPS: not started here: the tasks of srun, or of an allocation of several nodes, get it from the "
        "Slurm plugin on each node (srun --multilane, plugstack mps=auto)";
    return plan;
  }
  if (f.program.empty()) {
    plan.note =
        (f.mode == RunMpsMode::kYes ? std::string("MPS: --mps yes, but this job runs without it: ") : expected) +
        "nvidia-cuda-mps-control is not found; install NVIDIA's MPS control program or put it on PATH "
        "(MULTILANE_MPS_CONTROL names it), or run with --ranks-per-gpu 1";
    return plan;
  }
  plan.start = true;
  return plan;
}

std::string ReachableMpsPipe(const std::string& site_folder, std::string* refused) {
  if (refused != nullptr) refused->clear();
  if (const char* v = std::getenv("CUDA_MPS_PIPE_DIRECTORY"); v != nullptr && *v != '\0') return v;
  struct stat dir, control;
  if (lstat(site_folder.c_str(), &dir) != 0) return "";
  const std::string socket = site_folder + "/control";
  if (lstat(socket.c_str(), &control) != 0 || !S_ISSOCK(control.st_mode)) return "";
  std::string why;
  bool stale = false;
  if (!S_ISDIR(dir.st_mode))
    why = "it is not a folder (a link?)";
  else if (!TrustedOwner(dir.st_uid))
    why = "the folder is " + Foreign(dir.st_uid);
  else if ((dir.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    why = "others may write to the folder";
  else if (!TrustedOwner(control.st_uid))
    why = "its control socket is " + Foreign(control.st_uid);
  else if (why = ControlDaemonProblem(site_folder, &stale); why.empty())
    return site_folder;
  else if (stale)
    return "";  // the sockets of a daemon that quit: nothing to say
  if (refused != nullptr)
    *refused = "MPS: the daemon at " + mla::TerminalExcerpt(site_folder) + " is not used: " + why +
               " (a daemon of the site is root's, in a folder only root may write); its owner can stop it (echo "
               "quit | nvidia-cuda-mps-control)";
  return "";
}

bool PassesSignalOn(int sig) { return sig != SIGINT && sig != SIGQUIT && sig != SIGHUP && sig != SIGPIPE; }

}  // namespace multilane
