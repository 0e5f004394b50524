#include "launcher/context.h"

#include <mpi.h>
#include <pwd.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <filesystem>

#include "install_defaults.h"  // generated: the build tree's outputs
#include "mlallreduce.h"
#include "multilane/install_paths.h"  // generated: the installed layout
#include "db/paths.h"
#include "vocab/mpi_families.h"

namespace multilane {
namespace {

std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

// True when a and b name the same existing file.
bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  return !a.empty() && !b.empty() && std::filesystem::equivalent(a, b, ec) && !ec;
}

// dir/relative, normalised ("/opt/m/bin/../lib/x" -> "/opt/m/lib/x"); an
// absolute `relative` (a part outside the prefix) is returned as it is.
std::string Beside(const std::string& dir, const char* relative) {
  if (relative[0] == '/') return relative;
  return (std::filesystem::path(dir) / relative).lexically_normal().string();
}

}  // namespace

Installation FindInstallation() {
  Installation in;
  in.command = SelfPath();
  in.build_tree = SameFile(in.command, kBuildCommand);
  if (in.build_tree) {
    in.library = kBuildLibrary;
    in.probe = kBuildProbe;
    in.plugin = kBuildPlugin;
    in.cli_filter = kBuildCliFilter;
    in.plugstack = kBuildPlugstack;
  } else {
    const std::string dir = in.command.empty() ? std::string(multilane_install::kPrefix) + "/bin"
                                               : in.command.substr(0, in.command.rfind('/'));
    in.library = Beside(dir, multilane_install::kBinToLibrary);
    in.probe = Beside(dir, multilane_install::kBinToProbe);
    in.plugin = Beside(dir, multilane_install::kBinToPlugin);
    in.cli_filter = Beside(dir, multilane_install::kBinToCliFilter);
    in.plugstack = Beside(dir, multilane_install::kBinToPlugstack);
  }
  const char* lib = std::getenv("MULTILANE_LIBRARY");
  const char* probe = std::getenv("MULTILANE_PROBE");
  if (lib && *lib) in.library = lib;
  if (probe && *probe) in.probe = probe;
  in.cuda_module =
      in.library.substr(0, in.library.rfind('/') + 1) + mla::FamilyCudaModuleFile(mla::BuildDefaultFamily());
  return in;
}

std::string MpiLibraryVersion() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) return "unknown MPI";
  return mla::MpiVersionKey(std::string_view(version, static_cast<size_t>(len)));
}

std::string LibraryVersion() { return MLA_VERSION_STRING; }

std::string CurrentUser() {
  if (const passwd* pw = getpwuid(geteuid())) return pw->pw_name;
  return "uid " + std::to_string(geteuid());
}

bool InSlurmAllocation() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return job != nullptr && *job != '\0';
}

bool RanksStayOnThisNode(bool launcher_is_srun) {
  if (launcher_is_srun) return false;
  const char* nodes = std::getenv("SLURM_JOB_NUM_NODES");
  return !InSlurmAllocation() || nodes == nullptr || std::atoi(nodes) <= 1;
}

std::vector<std::string> DatabasesToRead(const std::vector<std::string>& explicit_paths) {
  return explicit_paths.empty() ? mldb::DefaultDatabasePaths() : explicit_paths;
}

std::string HistoryDatabase(const std::vector<std::string>& explicit_paths) {
  return explicit_paths.empty() ? mldb::UserDatabasePath() : explicit_paths.front();
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "multilane: error: %s\n", message.c_str());
  return 1;
}

}  // namespace multilane
