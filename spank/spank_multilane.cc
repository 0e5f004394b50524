// spank_multilane.cc: the Slurm entry points of spank_multilane.so.  Each one
// catches everything (no exception may cross into Slurm) and dispatches to
// the file of its context (plugin.h).  Only slurm_spank_* and plugin_*
// symbols are exported (exports.map).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "spank/plugin.h"

// Everything Slurm looks up is built with default visibility (the rest of the
// module is hidden, and exports.map keeps it so).
#pragma GCC visibility push(default)
extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
}
SPANK_PLUGIN(multilane, 1)
#pragma GCC visibility pop

namespace multilane_spank {

PluginState& State() {
  static PluginState state;
  return state;
}

bool Enabled(const PluginState& state) {
  if (state.user_seen) return state.user.enabled;
  return state.config.default_on;
}

void Error(const std::string& message) { slurm_error("multilane: %s", message.c_str()); }
void Info(const std::string& message) { slurm_info("multilane: %s", message.c_str()); }
void Say(const std::string& message) { slurm_spank_log("multilane: %s", message.c_str()); }

namespace {

// --multilane's callback: runs when the option is parsed (srun, sbatch,
// salloc: from the command line or the environment; slurmstepd: twice, so it
// must be idempotent).
int OnOption(int /*val*/, const char* optarg, int remote) {
  try {
    mla::UserOptions parsed;
    std::string error;
    if (!mla::ParseUserOptions(optarg, &parsed, &error)) {
      Error(error);
      return -1;
    }
    if (parsed.help && !remote) {
      std::fputs(mla::UserOptionsHelp(), stdout);
      std::fflush(stdout);
      std::exit(0);
    }
    State().user = parsed;
    State().user_seen = true;
    return 0;
  } catch (...) {
    return -1;
  }
}

struct spank_option kOption = {
    const_cast<char*>("multilane"),
    const_cast<char*>("[MODE]"),
    const_cast<char*>("Run MPI_Allreduce through multilane with the tuned layout; "
                      "MODE: auto, off, ranks-per-gpu:N, verbose, report[:DIR] (comma-separated); "
                      "--multilane=help explains"),
    2,
    0,
    OnOption};

template <typename F>
int Guard(const char* where, F&& body, int on_exception) {
  try {
    return body();
  } catch (const std::exception& e) {
    Error(std::string("internal error in ") + where + ": " + e.what() + "; continuing without multilane");
  } catch (...) {
    Error(std::string("internal error in ") + where + "; continuing without multilane");
  }
  return on_exception;
}

// Parses the plugstack.conf arguments, then runs body; a bad argument is
// logged and the job goes on (prolog and epilog never fail a job).
template <typename F>
int WithConfig(int ac, char** av, F&& body) {
  std::string error;
  if (!ParsePluginConfig(ac, av, &State().config, &error)) {
    Error(error);
    return 0;
  }
  return body();
}

}  // namespace

struct spank_option* MultilaneOption() {
  return &kOption;
}

}  // namespace multilane_spank

using namespace multilane_spank;

#pragma GCC visibility push(default)

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return Guard(
      "init",
      [&] {
        std::string error;
        const spank_context_t ctx = spank_context();
        if (!ParsePluginConfig(ac, av, &State().config, &error)) {
          Error(error);
          // The admin's configuration is wrong: jobs that load the plugin stop
          // and say so; slurmd itself keeps running, so the node stays up.
          return ctx == S_CTX_SLURMD ? 0 : -1;
        }
        if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR || ctx == S_CTX_REMOTE || ctx == S_CTX_JOB_SCRIPT) {
          if (spank_option_register(sp, &kOption) != ESPANK_SUCCESS) {
            Error("cannot register the --multilane option");
            return -1;
          }
        }
        return 0;
      },
      -1);
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char** /*av*/) {
  const spank_context_t ctx = spank_context();
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) return 0;
  return Guard(
      "init_post_opt", [&] { return SubmitInitPostOpt(sp); }, 0);
}

extern "C" int slurm_spank_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
  return Guard(
      "user_init", [&] { return StepUserInit(sp); }, 0);
}

extern "C" int slurm_spank_task_init_privileged(spank_t sp, int /*ac*/, char** /*av*/) {
  return Guard(
      "task_init_privileged", [&] { return StepTaskInitPrivileged(sp); }, 0);
}

extern "C" int slurm_spank_task_init(spank_t sp, int /*ac*/, char** /*av*/) {
  return Guard(
      "task_init", [&] { return StepTaskInit(sp); }, 0);
}

// In the job script context Slurm calls no init: the plugstack.conf
// arguments come with the callback itself.
extern "C" int slurm_spank_job_prolog(spank_t sp, int ac, char** av) {
  return Guard(
      "job_prolog", [&] { return WithConfig(ac, av, [&] { return JobProlog(sp); }); }, 0);
}

extern "C" int slurm_spank_job_epilog(spank_t sp, int ac, char** av) {
  return Guard(
      "job_epilog", [&] { return WithConfig(ac, av, [&] { return JobEpilog(sp); }); }, 0);
}

#pragma GCC visibility pop
