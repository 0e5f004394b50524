// context_job_script.cc: the job prolog and epilog (root, on every node of
// the job): with mps=yes in plugstack.conf and multilane on for the job, one
// CUDA MPS control daemon per job and node, as the job's user, with private
// pipe and log directories (job_dirs.h: mps_dir/job-ID/{pipe,log}, the
// user's, 0700, in a job folder only root can change); the epilog stops it
// and removes the job's folder completely.  The steps point their tasks at
// it when the folders are exactly what the prolog made (context_step.cc).
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "spank/job_dirs.h"
#include "spank/plugin.h"
#include "spank/subprocess.h"

namespace multilane_spank {
namespace {

constexpr int kMpsTimeoutS = 30;

struct JobIds {
  uint32_t job = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

bool GetJob(spank_t sp, JobIds* ids) {
  if (spank_get_item(sp, S_JOB_ID, &ids->job) != ESPANK_SUCCESS) return false;
  if (spank_get_item(sp, S_JOB_UID, &ids->uid) != ESPANK_SUCCESS) return false;
  if (spank_get_item(sp, S_JOB_GID, &ids->gid) != ESPANK_SUCCESS) ids->gid = static_cast<gid_t>(-1);
  return true;
}

// The option as the job was submitted with it (prolog and epilog read it
// from the job, not from the command line).
bool JobWantsMultilane(spank_t sp) {
  char* arg = nullptr;
  PluginState& s = State();
  const char* value = nullptr;
  bool given = false;
  if (spank_option_getopt(sp, MultilaneOption(), &arg) == ESPANK_SUCCESS) {
    value = arg;
    given = true;
  } else if (const char* env = std::getenv("SPANK__SLURM_SPANK_OPTION_multilane_multilane")) {
    // Slurm 22.05 hands the prolog the job's options as variables only.
    value = env;
    given = true;
  }
  // Slurm may hand a bare --multilane (no value) to the prolog as "" or as
  // the text "(null)" (a null value printed with %s: slurmd's log of 24.11
  // said `option (null)`); both are the bare option.
  if (value != nullptr && (*value == '\0' || std::strcmp(value, "(null)") == 0)) value = nullptr;
  if (given) {
    mla::UserOptions parsed;
    std::string error;
    if (mla::ParseUserOptions(value, &parsed, &error)) {
      s.user = parsed;
      s.user_seen = true;
    }
  }
  Info(std::string("job script: option ") + (given ? (value ? value : "(bare)") : "absent") + ", multilane " +
       (Enabled(s) ? "on" : "off"));
  return Enabled(s);
}

std::string JobDir(const JobIds& ids) { return State().config.mps_dir + "/job-" + std::to_string(ids.job); }

std::map<std::string, std::string> MpsEnvironment(const JobIds& ids) {
  std::map<std::string, std::string> env = {{"PATH", "/usr/bin:/bin"},
                                            {"LANG", "C"},
                                            {"CUDA_MPS_PIPE_DIRECTORY", JobDir(ids) + "/pipe"},
                                            {"CUDA_MPS_LOG_DIRECTORY", JobDir(ids) + "/log"}};
  // The job's GPUs on this node (the prolog's environment).
  if (const char* gpus = std::getenv("SLURM_JOB_GPUS"); gpus && *gpus) env["CUDA_VISIBLE_DEVICES"] = gpus;
  return env;
}

}  // namespace

// mps=yes: every multilane job; mps=auto: multilane jobs with GPUs on this
// node, where the control program is installed, unless the user asked for one
// task per GPU (the prolog cannot see the step's layout: a daemon serves only
// the processes that connect to it, so one too many costs nothing).
bool JobWantsMps(const PluginState& s) {
  if (s.config.mps) return true;
  if (!s.config.mps_auto) return false;
  const char* gpus = std::getenv("SLURM_JOB_GPUS");
  return gpus != nullptr && *gpus != '\0' && access(s.config.mps_control.c_str(), X_OK) == 0 &&
         s.user.ranks_per_gpu != 1;
}

int JobProlog(spank_t sp) {
  const PluginState& s = State();
  if (!s.config.mps && !s.config.mps_auto) return 0;
  JobIds ids;
  if (!GetJob(sp, &ids) || !JobWantsMultilane(sp) || !JobWantsMps(s)) return 0;
  const std::string dir = JobDir(ids);
  std::string why, note;
  const bool made = MakeJobDirs(s.config.mps_dir, ids.job, ids.uid, ids.gid, &why, &note);
  if (!note.empty()) Error(note);
  if (!made) {
    Error("cannot create the MPS directories: " + why + "; job " + std::to_string(ids.job) +
          " runs without an MPS daemon");
    return 0;
  }
  const SubprocessResult r =
      RunCapture({s.config.mps_control, "-d"}, MpsEnvironment(ids), ids.uid, ids.gid, kMpsTimeoutS);
  if (!r.ran || r.exit_status != 0) {
    Error("cannot start the MPS daemon " + s.config.mps_control + ": " +
          (r.ran ? "exit status " + std::to_string(r.exit_status) : r.error) + "; job " + std::to_string(ids.job) +
          " runs without it");
    return 0;
  }
  Info("started the MPS daemon of job " + std::to_string(ids.job) + " in " + dir);
  return 0;
}

int JobEpilog(spank_t sp) {
  const PluginState& s = State();
  if (!s.config.mps && !s.config.mps_auto) return 0;
  JobIds ids;
  if (!GetJob(sp, &ids)) return 0;
  if (!IsOwnJobDir(s.config.mps_dir, ids.job, ids.uid)) return 0;  // no daemon was started for this job
  const SubprocessResult r =
      RunCapture({s.config.mps_control}, MpsEnvironment(ids), ids.uid, ids.gid, kMpsTimeoutS, "quit\n");
  if (!r.ran || r.exit_status != 0) {
    Error("stopping the MPS daemon of job " + std::to_string(ids.job) +
          " failed: " + (r.ran ? "exit status " + std::to_string(r.exit_status) : r.error));
  }
  // Everything below job-ID goes, whatever the job put there: removed by
  // root without following a link and entering only the user's own folders
  // (job_dirs.h); one line names what is left.
  std::string why;
  if (!RemoveJobDirs(s.config.mps_dir, ids.job, ids.uid, &why)) Error(why + "; the admin removes it by hand");
  return 0;
}

}  // namespace multilane_spank
