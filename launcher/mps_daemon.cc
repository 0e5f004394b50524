// mps_daemon.cc: a private MPS control daemon (mps_daemon.h).
#include "launcher/mps_daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "launcher/process.h"
#include "vocab/outside_input.h"

namespace multilane {

std::string MpsControlProgram() {
  if (const char* v = std::getenv("MULTILANE_MPS_CONTROL"); v != nullptr && *v != '\0') return v;
  const char* path = std::getenv("PATH");
  std::string rest = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= rest.size();) {
    size_t colon = rest.find(':', start);
    if (colon == std::string::npos) colon = rest.size();
    const std::string dir = rest.substr(start, colon - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/nvidia-cuda-mps-control";
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = colon + 1;
  }
  return "";
}

bool MpsDaemon::Start(const std::string& program, const std::string& dir, std::string* error) {
  Stop();
  const std::string pipe = dir + "/pipe", log = dir + "/log";
  for (const std::string& d : {dir, pipe, log}) {
    if (mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) {
      *error =
          "cannot create " + mla::TerminalExcerpt(d) + ": " + std::strerror(errno) + "; check that its folder is yours";
      return false;
    }
    chmod(d.c_str(), 0700);
  }
  setenv("CUDA_MPS_PIPE_DIRECTORY", pipe.c_str(), 1);
  setenv("CUDA_MPS_LOG_DIRECTORY", log.c_str(), 1);
  program_ = program;
  std::string output;
  const int rc = RunAndCapture({program, "-d"}, &output);
  if (rc != 0) {
    // Its output is outside text (a driver's message, or anything a stand-in
    // prints): echoed as an excerpt, never with its control bytes.
    *error = mla::TerminalExcerpt(program) + " -d failed (exit status " + std::to_string(rc) +
             "): " + mla::TerminalExcerpt(output) + "; see " + mla::TerminalExcerpt(log + "/control.log");
    unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    unsetenv("CUDA_MPS_LOG_DIRECTORY");
    return false;
  }
  running_ = true;
  // The daemon answers once it is up.
  for (int i = 0; i < 50; ++i) {
    if (RunWithInput({program}, "get_server_list\n", &output) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  *error = "the MPS control daemon did not answer within 5 s; see " + mla::TerminalExcerpt(log + "/control.log");
  Stop();
  return false;
}

void MpsDaemon::Stop() {
  if (!running_) return;
  std::string output;
  RunWithInput({program_}, "quit\n", &output);
  running_ = false;
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
  unsetenv("CUDA_MPS_LOG_DIRECTORY");
}

}  // namespace multilane
