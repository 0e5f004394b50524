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
// use: CUDA_MPS_PIPE_DIRECTORY when it is set, else `site_folder` when a
// control socket is there and the pid file beside it names a live process
// (a daemon of the site; a daemon that quit leaves its sockets behind); ""
// when neither.
// `site_folder`: where CUDA looks without the variable (tests name another).
std::string ReachableMpsPipe(const std::string& site_folder = "/tmp/nvidia-mps");

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_RUN_MPS_H_
