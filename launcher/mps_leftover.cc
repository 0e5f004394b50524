// mps_leftover.cc: the records of `run`'s private MPS folders, and the
// search for what a killed run left (mps_leftover.h).
#include "launcher/mps_leftover.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "launcher/output_file.h"
#include "launcher/process.h"
#include "vocab/outside_input.h"

namespace multilane {
namespace {

constexpr char kRecordHeader[] = "multilane-mps-owner 1";

// A decimal number of at most 19 digits (fits in int64), no sign.
bool ParseCount(std::string_view word, uint64_t* out) {
  if (word.empty() || word.size() > 19) return false;
  uint64_t v = 0;
  for (const char c : word) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// "NAME PID START": the pid (> 0, a pid_t) and the start time.
bool ParseOwnerLine(std::string_view line, std::string_view name, pid_t* pid, uint64_t* start) {
  if (line.substr(0, name.size() + 1) != std::string(name) + " ") return false;
  line.remove_prefix(name.size() + 1);
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return false;
  uint64_t p = 0;
  if (!ParseCount(line.substr(0, space), &p) || p == 0 || p > 0x7fffffff) return false;
  if (!ParseCount(line.substr(space + 1), start)) return false;
  *pid = static_cast<pid_t>(p);
  return true;
}

// The environment variables a control program reads, set for one call and
// put back as they were after it.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    setenv(name, value.c_str(), 1);
  }
  ~ScopedVariable() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// The pid in `folder`/pipe/nvidia-cuda-mps-control.pid when it names a live
// process of this user (the daemon writes it there and removes it on quit);
// 0 otherwise.
pid_t LiveDaemonPid(const std::string& folder) {
  std::string text;
  if (mla::ReadFileBounded(folder + "/pipe/nvidia-cuda-mps-control.pid", 64, /*refuse_links=*/true, &text).outcome !=
      mla::FileRead::Outcome::kRead)
    return 0;
  uint64_t pid = 0;
  const size_t end = text.find_first_not_of("0123456789");
  if (!ParseCount(std::string_view(text).substr(0, end), &pid) || pid == 0 || pid > 0x7fffffff) return 0;
  uid_t owner = 0;
  if (!ProcessRuns(static_cast<pid_t>(pid), 0) || !ProcessOwner(static_cast<pid_t>(pid), &owner) || owner != getuid())
    return 0;
  return static_cast<pid_t>(pid);
}

// `folder` is this user's own: a real folder (not a link), owned by getuid()
// and writable by no one else, so that nothing in it was planted by another.
bool OwnFolder(const std::string& folder) {
  struct stat st;
  return lstat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// One leftover whose run and job have ended: quits its daemon, removes it.
std::string StopOne(const std::string& program, const std::string& folder, const MpsOwnerRecord& r) {
  const std::string name = mla::TerminalExcerpt(folder);
  const std::string whose = "the folder of a `multilane run` (pid " + std::to_string(r.run_pid) +
                            ") that ended without cleaning up (killed with SIGKILL, or it crashed)";
  int rc = -1;
  if (!program.empty()) {
    ScopedVariable pipe("CUDA_MPS_PIPE_DIRECTORY", folder + "/pipe");
    ScopedVariable log("CUDA_MPS_LOG_DIRECTORY", folder + "/log");
    std::string output;
    rc = RunWithInput({program}, "quit\n", &output);
  }
  if (rc != 0) {
    if (const pid_t daemon = LiveDaemonPid(folder); daemon != 0)
      return "MPS: " + name + " is " + whose + ", and its daemon (pid " + std::to_string(daemon) + ") " +
             (program.empty() ? "cannot be told to quit (no nvidia-cuda-mps-control)" : "did not take `quit`") +
             ": stop it (kill " + std::to_string(daemon) + ") and remove the folder (rm -r " + name + ")";
  }
  std::error_code ec;
  std::filesystem::remove_all(folder, ec);
  if (ec)
    return "MPS: " + name + " is " + whose + "; cannot remove it: " + ec.message() + "; remove it (rm -r " + name + ")";
  return "MPS: " + std::string(rc == 0 ? "stopped the daemon in " : "removed ") + name + ", " + whose +
         (rc == 0 ? ", and removed the folder" : "");
}

}  // namespace

std::string FormatMpsOwnerRecord(const MpsOwnerRecord& r) {
  std::string text =
      std::string(kRecordHeader) + "\nrun " + std::to_string(r.run_pid) + " " + std::to_string(r.run_start) + "\n";
  if (r.job_pid > 0) text += "job " + std::to_string(r.job_pid) + " " + std::to_string(r.job_start) + "\n";
  return text;
}

bool ParseMpsOwnerRecord(std::string_view text, MpsOwnerRecord* out) {
  MpsOwnerRecord r;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return false;  // every line ends with a newline
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    ++line_no;
    if (line_no == 1) {
      if (line != kRecordHeader) return false;
    } else if (line_no == 2) {
      if (!ParseOwnerLine(line, "run", &r.run_pid, &r.run_start)) return false;
    } else if (line_no == 3) {
      if (!ParseOwnerLine(line, "job", &r.job_pid, &r.job_start)) return false;
    } else {
      return false;
    }
  }
  if (line_no < 2) return false;
  *out = r;
  return true;
}

MpsOwnerRecord ThisRunRecord() {
  MpsOwnerRecord r;
  r.run_pid = getpid();
  ProcessStat st;
  if (ReadProcessStat(r.run_pid, &st)) r.run_start = st.start;
  return r;
}

std::string WriteMpsOwnerRecord(const std::string& folder, const MpsOwnerRecord& record) {
  std::string error;
  if (!WriteOutputFile(folder + "/" + kMpsOwnerFile, FormatMpsOwnerRecord(record), &error)) return error;
  return "";
}

std::vector<std::string> StopLeftoverMps(const std::string& program, bool name_unrecorded, const std::string& parent) {
  std::vector<std::string> lines;
  DIR* dir = opendir(parent.c_str());
  if (dir == nullptr) return lines;
  std::vector<std::string> folders;
  while (const dirent* e = readdir(dir)) {
    const std::string n = e->d_name;
    if (n.size() > std::strlen(kRunMpsPrefix) && n.compare(0, std::strlen(kRunMpsPrefix), kRunMpsPrefix) == 0)
      folders.push_back(parent + "/" + n);
  }
  closedir(dir);
  for (const std::string& folder : folders) {
    if (!OwnFolder(folder)) continue;  // another user's, a link, a file: not ours to read
    std::string text;
    MpsOwnerRecord r;
    const mla::FileRead read = mla::ReadFileBounded(folder + "/" + kMpsOwnerFile, 4096, /*refuse_links=*/true, &text);
    if (read.outcome != mla::FileRead::Outcome::kRead || !ParseMpsOwnerRecord(text, &r)) {
      // The record is written before the daemon starts, so a folder without
      // one holds no daemon; it may be a run's that is starting this moment.
      if (name_unrecorded)
        lines.push_back("MPS: " + mla::TerminalExcerpt(folder) +
                        " has no readable record of the `multilane run` that made it: if no run of yours is "
                        "starting now, remove it (rm -r " +
                        mla::TerminalExcerpt(folder) + ")");
      continue;
    }
    if (ProcessRuns(r.run_pid, r.run_start) || (r.job_pid > 0 && ProcessRuns(r.job_pid, r.job_start))) continue;
    lines.push_back(StopOne(program, folder, r));
  }
  return lines;
}

}  // namespace multilane
