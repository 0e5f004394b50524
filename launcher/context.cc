#include "context.h"

#include <mpi.h>
#include <pwd.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "install_defaults.h"  // generated: kBuildLibrary, kBuildProbe
#include "mlallreduce.h"
#include "db/paths.h"

namespace multilane {
namespace {

bool Exists(const std::string& path) { return !path.empty() && access(path.c_str(), R_OK) == 0; }

std::string SelfDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string self(buf, static_cast<size_t>(n));
  return self.substr(0, self.rfind('/'));
}

}  // namespace

Installation FindInstallation() {
  Installation in;
  const std::string dir = SelfDir();
  const char* lib = std::getenv("MULTILANE_LIBRARY");
  const char* probe = std::getenv("MULTILANE_PROBE");
  if (lib && *lib) in.library = lib;
  else if (Exists(kBuildLibrary)) in.library = kBuildLibrary;
  else in.library = dir + "/../lib/libmlallreduce.so";
  if (probe && *probe) in.probe = probe;
  else if (Exists(kBuildProbe)) in.probe = kBuildProbe;
  else in.probe = dir + "/mlprobe";
  return in;
}

std::string MpiLibraryVersion() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) return "unknown MPI";
  std::string s(version, static_cast<size_t>(len));
  // Open MPI counts the terminating NUL in len.
  s = s.substr(0, s.find_first_of(std::string("\r\n\0", 3)));
  while (!s.empty() && (s.back() == ' ' || s.back() == ',')) s.pop_back();
  return s;
}

std::string LibraryVersion() { return MLA_VERSION_STRING; }

std::string CurrentUser() {
  if (const passwd* pw = getpwuid(geteuid())) return pw->pw_name;
  return "uid " + std::to_string(geteuid());
}

std::string UtcNow() {
  time_t now = time(nullptr);
  struct tm tm_utc;
  gmtime_r(&now, &tm_utc);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
  return buf;
}

bool InSlurmAllocation() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return job != nullptr && *job != '\0';
}

std::vector<std::string> DatabasesToRead(const std::vector<std::string>& explicit_paths) {
  return explicit_paths.empty() ? mldb::DefaultDatabasePaths() : explicit_paths;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "multilane: error: %s\n", message.c_str());
  return 1;
}

}  // namespace multilane
