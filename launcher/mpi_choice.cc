// mpi_choice.cc: the MPI family of a job (mpi_choice.h).
#include "mpi_choice.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "context.h"
#include "process.h"

namespace multilane {
namespace {

namespace fs = std::filesystem;

// argv[0] as execvp would find it, links followed; "" when not found.
std::string ResolveProgram(const std::string& word) {
  std::error_code ec;
  if (word.find('/') != std::string::npos) {
    fs::path p = fs::weakly_canonical(word, ec);
    return ec ? word : p.string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const fs::path candidate = fs::path(dir) / word;
    if (access(candidate.c_str(), X_OK) == 0) {
      fs::path p = fs::canonical(candidate, ec);
      return ec ? candidate.string() : p.string();
    }
    start = end + 1;
  }
  return "";
}

bool IsHydra(const std::string& program) {
  const std::string name = fs::path(program).filename().string();
  return name.find("mpich") != std::string::npos || name.find("hydra") != std::string::npos;
}

}  // namespace

std::string JobMpiFamily(const std::string& requested, const std::vector<std::string>& command, std::string* error) {
  if (requested == "openmpi" || requested == "mpich") return requested;
  if (!requested.empty() && requested != "auto") {
    *error = "--mpi '" + requested + "' must be auto, openmpi or mpich";
    return "";
  }
  if (command.empty()) return "openmpi";
  if (IsHydra(command[0])) return "mpich";
  const std::string program = ResolveProgram(command[0]);
  return !program.empty() && IsHydra(program) ? "mpich" : "openmpi";
}

std::string ProbeOfFamily(const std::string& probe, const std::string& family) {
  if (family == "openmpi") return probe;
  return (fs::path(probe).parent_path() / ("mlprobe-" + family)).string();
}

std::string LauncherOfFamily(const std::string& family) { return family == "mpich" ? "mpiexec.mpich" : "mpirun"; }

std::string MpiVersionOfFamily(const std::string& family, const std::string& probe, std::string* error) {
  if (family == "openmpi") return MpiLibraryVersion();
  std::string out;
  const int status = RunAndCapture({probe, "--mpi-version"}, &out);
  const std::string first = out.substr(0, out.find('\n'));
  if (status != 0 || first.empty()) {
    *error = "cannot learn the " + family + " MPI's version from " + probe + " --mpi-version (exit status " +
             std::to_string(status) + (first.empty() ? "" : ": " + first) + "); install multilane's " + family +
             " build (docs/admin.md, \"MPI families\")";
    return "";
  }
  return first;
}

}  // namespace multilane
