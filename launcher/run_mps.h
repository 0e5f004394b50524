// run_mps.h: whether a job of `multilane run` gets a private MPS daemon.
// A profile's layouts of several ranks per GPU that `multilane tune` measured
// under MPS (its header says mps=on) hold only for a job that runs under MPS
// too: without it the ranks' kernels are time-sliced, and on the GPU host 16
// ranks on one H200 took ~4.5 ms per call from 4 KiB to 16 MiB where the tune
// had measured 47 us to 2.2 ms.  Under Slurm the plugin starts the job's
// daemon (mps= in plugstack.conf); this is the same for jobs started here.
// Ranks that mpirun starts on other hosts (-H) find no daemon at the folder
// they are given and run without MPS, as CUDA does where none answers.
#ifndef MULTILANE_LAUNCHER_RUN_MPS_H_
#define MULTILANE_LAUNCHER_RUN_MPS_H_

#include <string>

namespace multilane {

// --mps: auto (a daemon when the profile was measured under MPS and the job
// puts several ranks on a GPU), yes (a daemon whenever none serves the job
// yet) or no (never).
enum class RunMpsMode { kAuto, kYes, kNo };

// Parses "auto", "yes" or "no"; false for anything else.
bool ParseRunMpsMode(const std::string& text, RunMpsMode* mode);

// What ParseRunMpsMode accepts, for messages and --help.
const char* RunMpsModeChoices();

// What the decision rests on; the launcher gathers it.
struct RunMpsFacts {
  RunMpsMode mode = RunMpsMode::kAuto;
  std::string profile_mps;  // the profile header's mps= ("on", "off", "none" or "")
  int ranks_per_gpu = 1;    // the job's ranks per GPU
  bool ranks_here = true;   // the job's ranks all run on this node (RanksStayOnThisNode)
  std::string daemon;       // the pipe folder of an MPS daemon the job already reaches ("" when none)
  std::string program;      // the MPS control program (MpsControlProgram; "" when none)
};

// The decision: `start` a private daemon for the job, or not; `note` is a
// line for the user ("" when there is nothing to say) that says why a job
// the profile expects under MPS runs without it, and what to do.
struct RunMpsPlan {
  bool start = false;
  std::string note;
};

// Pure: the rule described above, from `facts` alone.
RunMpsPlan PlanRunMps(const RunMpsFacts& facts);

// The pipe folder of an MPS daemon that a CUDA program started now would
// use: CUDA_MPS_PIPE_DIRECTORY when it is set (the user's own choice), else
// `site_folder` when a daemon of this user or of the site serves it, else "".
// A daemon of the site is one that root runs (an administrator's, or a
// service's: nvidia-cuda-mps-control -d as root); one of this user is one
// they started themselves.  So `site_folder` serves only when the folder
// (a real one, not a link, writable by its owner alone), its `control`
// socket and its pid file (a regular file, not a link) are all owned by
// this user or root, and the pid file names a live process (not a zombie)
// that this user or root owns: a daemon that quit leaves its sockets, and
// another user's folder there (made first in the shared /tmp) is theirs,
// never the job's.  When such a folder is there but refused, *refused (if
// given) says why in one line; else it is cleared.
// `site_folder`: where CUDA looks without the variable (tests name another).
std::string ReachableMpsPipe(const std::string& site_folder = "/tmp/nvidia-mps", std::string* refused = nullptr);

// Whether `multilane run` passes signal `sig` on to the job it waits for.
// Not SIGINT and SIGQUIT (a terminal's keys) nor SIGHUP (a terminal that
// closes, a dropped ssh session, a shell that ends): those reach the whole
// job by themselves, and mpirun takes a second SIGINT as "abort at once";
// not SIGPIPE (a write of multilane's own); every other one (SIGTERM of
// kill or a batch system, SIGUSR1, ...) is passed on.  Either way the daemon
// is stopped once the job has ended.
bool PassesSignalOn(int sig);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_RUN_MPS_H_
