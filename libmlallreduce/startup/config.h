// config.h: the library's settings, read once from MULTILANE_* variables
// (docs/variables.md lists them).
#ifndef MLA_CONFIG_H_
#define MLA_CONFIG_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mlallreduce.h"
#include "vocab/profile.h"

namespace mla::lib {

// The flag path's default limit, and the most MULTILANE_DEVICE_FLAG_MAX may
// ask for (each rank holds 4 x this much device memory per communicator).
constexpr uint64_t kDefaultDeviceFlagMax = 64u << 10;  // docs/gpu.md: where it measured faster
constexpr uint64_t kMaxDeviceFlagMax = 16u << 20;

struct Config {
  // False when any variable was bad: every call then goes to the system MPI.
  bool enabled = true;
  // MULTILANE_ALGO (with MULTILANE_LANES, MULTILANE_CHUNK, MULTILANE_TRANSPORT): one choice for
  // every call, overriding the profile.
  bool has_forced = false;
  mla_choice forced{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  // MULTILANE_PROFILE or the file named by MULTILANE_PROFILE_FILE.
  Profile profile;
  std::string profile_source;  // "MULTILANE_PROFILE", "MULTILANE_PROFILE_FILE=path" or ""
  // MULTILANE_RANKS_PER_NODE: virtual nodes of this many consecutive ranks; 0 = real nodes.
  int ranks_per_node = 0;
  // MULTILANE_RANKS_PER_GPU: ranks sharing one GPU on hosts without GPUs; 0 = unset (1).
  int ranks_per_gpu = 0;
  // MULTILANE_NODE_STEP=shm: lane's and hier's steps inside a node run on a
  // shared-memory segment instead of the system MPI's collectives (mpi, the
  // default; docs/algorithms.md); shm-cma: also reading peers' buffers
  // directly where the kernel allows (shm_single_copy).
  bool shm_node_step = false;
  bool shm_single_copy = false;
  // Whether any call may take its node steps on shared memory: the setting
  // above, a forced choice or a profile entry with transport shm.
  bool MayUseNodeShm() const;
  // MULTILANE_STEP_TASKS: the tasks of the Slurm step, set by the plugin
  // (separate_worlds.h); 0 = not set.
  int step_tasks = 0;
  // MULTILANE_DEVICE_SYNC=stream: device calls wait (on the GPU) for the legacy
  // default stream only, instead of the whole device (docs/gpu.md).
  bool device_sync_stream = false;
  // MULTILANE_DEVICE_FLAG_MAX: device calls of up to this many bytes on one
  // node run on the flag path; 0 = never.
  uint64_t device_flag_max = kDefaultDeviceFlagMax;
  // MULTILANE_STATS=1: rank 0 prints its counters at MPI_Finalize.
  bool stats = false;
  // MULTILANE_VERBOSE=1: rank 0 prints the settings at MPI_Init; 2: also each rank its agreement's cost.
  int verbose = 0;
  // MULTILANE_REPORT=DIR: write the job report (docs/job-report-format.md)
  // into DIR at MPI_Finalize; empty = no report.
  std::string report_dir;
  // MULTILANE_HISTORY=DIR: with the report on, a copy of the job report
  // goes into DIR too, the user's history inbox that `multilane history`
  // records and empties (set by `multilane run`); empty = none.
  std::string history_dir;
  // MULTILANE_JOB_KEY: the job's key in the history (vocab/job_key.h); empty:
  // the program's name and a digest of its command line.
  std::string job_key;
  // MULTILANE_REPORT_SAMPLE: about one call in this many per communicator is
  // sampled for waiting time.
  int report_sample = 64;
  // MULTILANE_REPORT_INTERVAL: seconds between two GPU samples; 0 = no GPU
  // sampling.
  double report_interval_s = 1.0;
  // MULTILANE_OFF: the launcher found no usable profile for this rank's node
  // and says why; the rank votes off in the start-up agreement, so the whole
  // job runs unchanged (docs/all-in-or-all-out.md).  Empty: not set.  At
  // most kRelayedReasonBytes of it (vocab/terminal_text.h Excerpt).
  std::string launcher_off;
  // One message per bad variable, naming it, its value and the fix.
  std::vector<std::string> problems;
  // Messages about bad values that leave multilane on (a default is used
  // instead): the report's variables, which never change a call's result.
  std::vector<std::string> warnings;
  // Hash of every raw value read (the profile file's content included), so
  // ranks can check that they all run with the same settings.
  uint64_t fingerprint = 0;

  // A one-line description of the settings, for MULTILANE_VERBOSE.
  std::string Summary() const;
};

// Returns the value of a variable or nullptr; tests pass their own.
using EnvLookup = std::function<const char*(const char*)>;

// Reads the settings through `env`.  Never fails: problems are collected in
// Config::problems and turn `enabled` off.
Config LoadConfig(const EnvLookup& env);

// LoadConfig over the process environment.
Config LoadConfigFromEnvironment();

}  // namespace mla::lib

#endif  // MLA_CONFIG_H_
