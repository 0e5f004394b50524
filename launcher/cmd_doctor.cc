// cmd_doctor.cc: `multilane doctor`: checks the installation, the databases,
// MPI and GPUs, and says what to fix.  Exit status 1 when something is broken.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands.h"
#include "context.h"
#include "db/node_type.h"
#include "db/paths.h"
#include "db/profile_store.h"
#include "db/resolve.h"

namespace multilane {
namespace {

struct Doctor {
  int errors = 0;
  void Ok(const std::string& what) { std::printf("  ok     %s\n", what.c_str()); }
  void Note(const std::string& what) { std::printf("  note   %s\n", what.c_str()); }
  void Error(const std::string& what, const std::string& fix) {
    std::printf("  ERROR  %s\n         fix: %s\n", what.c_str(), fix.c_str());
    ++errors;
  }
};

bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

void CheckDatabase(Doctor* d, const std::string& label, const std::string& path, const std::string& fix_missing) {
  if (path.empty()) {
    d->Note(label + " database: none (no HOME); set MULTILANE_USER_DB");
    return;
  }
  if (access(path.c_str(), F_OK) != 0) {
    d->Note(label + " database " + path + " does not exist yet: " + fix_missing);
    return;
  }
  std::string error;
  auto store = mldb::ProfileStore::Open(path, mldb::ProfileStore::Access::kReadOnly, &error);
  if (!store) {
    d->Error(label + " database: " + error,
             "move " + path + " away (mv " + path + " " + path + ".broken) and tune again, or restore a backup");
    return;
  }
  auto health = store->Check();
  if (!health.ok) {
    for (const std::string& p : health.problems) d->Error(label + " database " + path + ": " + p, "see above");
    return;
  }
  d->Ok(label + " database " + path + ": schema " + std::to_string(health.schema_version) + ", " +
        std::to_string(health.profiles) + " profile(s)");
}

int RunDoctor() {
  Doctor d;
  std::printf("multilane doctor (libmlallreduce %s)\n", LibraryVersion().c_str());
  const Installation in = FindInstallation();

  std::printf("installation\n");
  void* lib = dlopen(in.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    d.Error("libmlallreduce cannot be loaded from " + in.library + ": " + (why ? why : "?"),
            "build multilane (cmake --build) or set MULTILANE_LIBRARY to the library's path");
  } else {
    using VersionFn = const char* (*)();
    auto version = reinterpret_cast<VersionFn>(dlsym(lib, "mla_version"));
    std::string v = version ? version() : "?";
    if (v != LibraryVersion())
      d.Error(in.library + " is version " + v + ", this command " + LibraryVersion(), "install matching versions");
    else
      d.Ok("libmlallreduce " + v + " at " + in.library);
    dlclose(lib);
  }
  const std::string module = in.library.substr(0, in.library.rfind('/') + 1) + "libmlallreduce_cuda.so";
  if (access(module.c_str(), R_OK) == 0) d.Ok("CUDA module at " + module);
  else d.Note("no CUDA module next to the library: device buffers go to the system MPI (build with nvcc to add it)");
  if (access(in.probe.c_str(), X_OK) == 0) d.Ok("probe program " + in.probe);
  else d.Error("probe program " + in.probe + " is missing", "build multilane or set MULTILANE_PROBE");

  std::printf("MPI\n");
  const std::string mpi = MpiLibraryVersion();
  d.Ok(mpi);
  if (InSlurmAllocation()) {
    if (OnPath("srun")) d.Ok("inside Slurm job " + std::string(std::getenv("SLURM_JOB_ID")) + ": probes run with srun");
    else d.Error("SLURM_JOB_ID is set but srun is not on PATH", "load Slurm's environment (PATH)");
  } else if (OnPath("mpirun")) {
    d.Ok("mpirun on PATH: probes outside Slurm run with mpirun");
  } else {
    d.Error("mpirun is not on PATH", "install Open MPI (apt-get install openmpi-bin) or fix PATH");
  }

  std::printf("this node\n");
  const mldb::NodeFingerprint fp = mldb::CollectNodeFingerprint(mpi);
  d.Ok("node type " + fp.Key() + ": " + fp.Description());
  if (fp.gpus.empty()) d.Note("no GPU seen through NVML: host-memory profiles only");
  else d.Ok(std::to_string(fp.gpus.size()) + " GPU(s), CUDA driver " + fp.cuda_driver_version);

  std::printf("databases\n");
  CheckDatabase(&d, "user", mldb::UserDatabasePath(), "`multilane tune` creates it");
  CheckDatabase(&d, "system", mldb::SystemDatabasePath(), "the admin creates it with `multilane tune --system`");
  std::vector<std::string> notes;
  auto profile = mldb::ResolveProfile(mldb::DefaultDatabasePaths(), fp.Key(), "", LibraryVersion(), mpi, &notes);
  if (profile) d.Ok("profile " + std::to_string(profile->id) + " serves this node type (tuned " + profile->tuned_at + ")");
  else d.Note("no profile for this node type and library version yet: run `multilane tune`");

  std::printf("%s\n", d.errors ? "problems found: see the fixes above" : "all good");
  return d.errors ? 1 : 0;
}

}  // namespace

void AddDoctorCommand(CLI::App& app, int* status) {
  CLI::App* cmd = app.add_subcommand("doctor", "Check the installation, databases, MPI and GPUs, and say what to fix");
  cmd->callback([status] { *status = RunDoctor(); });
}

}  // namespace multilane
