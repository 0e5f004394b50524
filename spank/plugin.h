// plugin.h: what the Slurm contexts of spank_multilane.so share.  The entry
// points (slurm_spank_*) live in spank_multilane.cc and dispatch to one file
// per Slurm context:
//   context_submit.cc      srun, sbatch, salloc (local and allocator contexts)
//   context_step.cc        slurmstepd: inject the library, bind tasks to GPUs
//   context_job_script.cc  job prolog and epilog: the per-job MPS daemon
#ifndef MULTILANE_SPANK_PLUGIN_H_
#define MULTILANE_SPANK_PLUGIN_H_

extern "C" {
#include <slurm/spank.h>
}

#include <string>

#include "vocab/user_options.h"
#include "spank/plugin_config.h"

namespace multilane_spank {

// The state of the plugin in this process (each Slurm context is its own
// process, and slurmstepd forks the tasks after user_init).
struct PluginState {
  PluginConfig config;     // from plugstack.conf
  mla::UserOptions user;   // from --multilane (or its environment variable)
  bool user_seen = false;  // the option callback ran
  std::string step_gpus;   // the step's CUDA_VISIBLE_DEVICES before per-task binding
  bool injected = false;   // user_init set LD_PRELOAD with a profile (not MULTILANE_OFF) for this step
};
PluginState& State();

// True when multilane runs for this job: --multilane given and not `off`, or
// no option and the admin's default=auto.
bool Enabled(const PluginState& state);

// The --multilane option as registered with Slurm (spank_multilane.cc).
struct spank_option* MultilaneOption();

// Logging with the plugin's prefix: Error goes to the user (and the logs),
// Info to the logs, Say to the user's terminal or output file.
void Error(const std::string& message);
void Info(const std::string& message);
void Say(const std::string& message);

// Per context; each returns 0 or -1 (-1 only where Slurm should stop the
// command: bad options in srun/sbatch/salloc).
int SubmitInitPostOpt(spank_t sp);       // context_submit.cc
int StepUserInit(spank_t sp);            // context_step.cc
int StepTaskInitPrivileged(spank_t sp);  // context_step.cc
int StepTaskInit(spank_t sp);            // context_step.cc
int JobProlog(spank_t sp);               // context_job_script.cc
int JobEpilog(spank_t sp);               // context_job_script.cc

}  // namespace multilane_spank

#endif  // MULTILANE_SPANK_PLUGIN_H_
