// context_job_script.cc: the job prolog and epilog (root, on every node of
// the job): with mps=yes in plugstack.conf and multilane on for the job, one
// CUDA MPS control daemon per job and node, as the job's user, with private
// pipe and log directories (mps_dir/job-ID/{pipe,log}, mode 0700); the
// epilog stops it and removes the directories.  The steps point their tasks
// at it (context_step.cc).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "plugin.h"
#include "subprocess.h"

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
  if (given) {
    UserOptions parsed;
    std::string error;
    if (ParseUserOptions(value, &parsed, &error)) {
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

bool MakeDir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
  if (mkdir(path.c_str(), mode) != 0 && errno != EEXIST) return false;
  struct stat st;
  // Never follow a link someone left in our place.
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return chown(path.c_str(), uid, gid) == 0 && chmod(path.c_str(), mode) == 0;
}

}  // namespace

int JobProlog(spank_t sp) {
  const PluginState& s = State();
  if (!s.config.mps) return 0;
  JobIds ids;
  if (!GetJob(sp, &ids) || !JobWantsMultilane(sp)) return 0;
  const std::string dir = JobDir(ids);
  if (!MakeDir(s.config.mps_dir, 0755, 0, 0) || !MakeDir(dir, 0700, ids.uid, ids.gid) ||
      !MakeDir(dir + "/pipe", 0700, ids.uid, ids.gid) || !MakeDir(dir + "/log", 0700, ids.uid, ids.gid)) {
    Error("cannot create the MPS directories under " + s.config.mps_dir + " (" + std::strerror(errno) +
          "); job " + std::to_string(ids.job) + " runs without an MPS daemon");
    return 0;
  }
  const SubprocessResult r = RunCapture({s.config.mps_control, "-d"}, MpsEnvironment(ids), ids.uid, ids.gid, kMpsTimeoutS);
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
  if (!s.config.mps) return 0;
  JobIds ids;
  if (!GetJob(sp, &ids)) return 0;
  const std::string dir = JobDir(ids);
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return 0;  // no daemon was started for this job
  const SubprocessResult r = RunCapture({s.config.mps_control}, MpsEnvironment(ids), ids.uid, ids.gid, kMpsTimeoutS, "quit\n");
  if (!r.ran || r.exit_status != 0) {
    Error("stopping the MPS daemon of job " + std::to_string(ids.job) + " failed: " +
          (r.ran ? "exit status " + std::to_string(r.exit_status) : r.error));
  }
  // What is inside is removed as the user (root never follows what the user
  // left in there); the emptied directory itself by root.
  RunCapture({"/usr/bin/find", dir, "-mindepth", "1", "-delete"}, {{"PATH", "/usr/bin:/bin"}}, ids.uid, ids.gid,
             kMpsTimeoutS);
  if (rmdir(dir.c_str()) != 0) Error("cannot remove " + dir + ": " + std::strerror(errno));
  return 0;
}

}  // namespace multilane_spank
