// context_submit.cc: srun, sbatch and salloc (local and allocator contexts).
//
// The option itself is checked by its callback (spank_multilane.cc): a bad
// value stops the command with Slurm's "Invalid --multilane argument".  The
// layout (tasks per GPU) is set by the companion cli_filter script, because
// a SPANK plugin cannot change the job request; here the plugin only tells
// the user, with verbose, what will happen.
#include <cstdlib>

#include "spank/plugin.h"

namespace multilane_spank {

int SubmitInitPostOpt(spank_t /*sp*/) {
  const PluginState& s = State();
  if (!Enabled(s) || !s.user.verbose) return 0;
  const char* per_gpu = std::getenv("SLURM_NTASKS_PER_GPU");
  if (s.user.ranks_per_gpu > 0) {
    Say("asked for " + std::to_string(s.user.ranks_per_gpu) + " tasks per GPU");
  } else if (per_gpu != nullptr) {
    Say(std::string("tasks per GPU of this job: ") + per_gpu);
  }
  return 0;
}

}  // namespace multilane_spank
