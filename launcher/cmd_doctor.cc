// cmd_doctor.cc: `multilane doctor`: checks what runs - the library, probe
// and CUDA module this command would use (each loaded in a child process, so
// a damaged file cannot crash the doctor), the databases and their profiles
// per partition, MPI, and where Slurm is installed the plugstack line, the
// plugin, the Slurm version it was built for and the cli_filter - and says
// what to fix.  Exit status 1 when anything is wrong; the last line says so.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "launcher/commands.h"
#include "launcher/context.h"
#include "db/node_type.h"
#include "db/paths.h"
#include "db/profile_store.h"
#include "db/resolve.h"
#include "db/snapshot.h"
#include "launcher/doctor_slurm.h"
#include "launcher/mpi_choice.h"
#include "launcher/mps_daemon.h"
#include "launcher/mps_leftover.h"
#include "launcher/run_mps.h"
#include "vocab/outside_input.h"
#include "vocab/mpi_families.h"
#include "install_defaults.h"     // generated: kBuildLibrary (a build tree's library)
#include "spank/plugin_config.h"  // spank/: the plugin's own parser of its plugstack arguments
#include "launcher/process.h"
#include "launcher/slurm_partition.h"

namespace multilane {
namespace {

struct DoctorOptions {
  std::vector<std::string> databases;
  bool system = false;
  std::string load_check;  // hidden: load this file and print what it exports
  bool lazy = false;       // hidden: with --load-check, resolve symbols lazily (a Slurm plugin)
};

struct Doctor {
  int errors = 0;
  std::set<std::string> unusable;  // profile texts found unusable: never "ok" later
  void Ok(const std::string& what) { std::printf("  ok     %s\n", what.c_str()); }
  void Note(const std::string& what) { std::printf("  note   %s\n", what.c_str()); }
  void Error(const std::string& what, const std::string& fix) {
    std::printf("  ERROR  %s\n         fix: %s\n", what.c_str(), fix.c_str());
    ++errors;
  }
};

// The child's side of LoadInChild: prints what the file exports.
int LoadCheck(const std::string& path, bool lazy) {
  void* handle = dlopen(path.c_str(), (lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    std::printf("error=%s\n", why ? why : "dlopen failed");
    return 3;
  }
  using VersionFn = const char* (*)();
  if (auto version = reinterpret_cast<VersionFn>(dlsym(handle, "mla_version"))) std::printf("version=%s\n", version());
  if (auto pv = static_cast<const unsigned*>(dlsym(handle, "plugin_version"))) std::printf("plugin_version=%u\n", *pv);
  std::printf("loads=yes\n");
  return 0;
}

struct Loaded {
  bool ok = false;
  std::string why;  // when !ok: the loader's message or the crash
  std::map<std::string, std::string> values;
  std::string Get(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? "?" : it->second;
  }
};

// Loads `path` in a child (`multilane doctor --load-check`): a truncated
// library can crash the loader (SIGBUS), which must not crash the doctor.
Loaded LoadInChild(const std::string& path, bool lazy) {
  Loaded l;
  std::vector<std::string> argv = {SelfPath(), "doctor", "--load-check", path};
  if (lazy) argv.push_back("--lazy");
  std::string out;
  const int status = RunAndCapture(argv, &out);
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) l.values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  if (status == 0 && l.values["loads"] == "yes") {
    l.ok = true;
  } else if (status > 128) {
    l.why = "loading it crashed (signal " + std::to_string(status - 128) + "): the file is damaged or truncated";
  } else {
    l.why = l.values.count("error") ? l.values["error"] : out.substr(0, out.find('\n'));
  }
  return l;
}

// Runs a program briefly (`--version`) and, when it cannot even start (the
// loader's exit status 127), returns the loader's own message.
std::string StartProblem(const std::string& program) {
  std::string out;
  const int status = RunAndCapture({program, "--version"}, &out);
  if (status == 0) return "";
  const std::string first = out.substr(0, out.find('\n'));
  if (status == 127) return "cannot start: " + (first.empty() ? std::string("exit status 127") : first);
  if (status > 128) return "crashed at start (signal " + std::to_string(status - 128) + ")";
  return "";  // it started (and may not know --version): not a start problem
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

// The fix for a broken part of the installation: rebuild in a build tree,
// reinstall elsewhere (a node has no source).
std::string ReinstallFix(const Installation& in, const std::string& variable) {
  if (in.library == kBuildLibrary) {
    std::string build = kBuildLibrary;
    build = build.substr(0, build.rfind('/'));
    build = build.substr(0, build.rfind('/'));
    return "rebuild this build tree (cmake --build " + build + "), or set " + variable;
  }
  return "reinstall multilane (its package, or `cmake --install` of the same version) on this node, or set " +
         variable + " to the right file";
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
        std::to_string(health.profiles) + " profile(s)" +
        (mldb::IsPublishedSnapshot(path) ? ", a published snapshot" : ""));
  const std::vector<mldb::ProfileRecord> listed = store->List(&error);
  if (!error.empty())
    d->Error(label + " database " + path + ": its profiles cannot be listed: " + error,
             "move " + path + " away and tune again, or restore a backup");
  for (const mldb::ProfileRecord& p : listed) {
    // What jobs get is the profile text, read by the library's own parser:
    // a profile it rejects (or whose rows say otherwise) is a problem here,
    // not a warning in every job.
    if (!p.disagreement.empty()) {
      d->Error(label + " database " + path + ": profile " + std::to_string(p.id) +
                   " is not what jobs can use: " + p.disagreement,
               "tune that node type again (or import a corrected profile)");
      d->unusable.insert(p.profile_text);
    }
    if (p.profile_text.find(" oversubscribed=") == std::string::npos) continue;
    const std::string what = label + " database " + path + ": profile " + std::to_string(p.id) +
                             " was tuned oversubscribed (more ranks than cores): a test profile";
    if (label == "system")
      d->Error(what, "tune that node type again without oversubscribing");
    else
      d->Note(what);
  }
}

void CheckInstallation(Doctor* d, const Installation& in) {
  std::printf("installation (what this command uses)\n");
  const Loaded lib = LoadInChild(in.library, false);
  if (!lib.ok) {
    d->Error("libmlallreduce " + in.library + " does not load: " + lib.why, ReinstallFix(in, "MULTILANE_LIBRARY"));
  } else if (lib.Get("version") != LibraryVersion()) {
    d->Error(in.library + " is version " + lib.Get("version") + ", this command " + LibraryVersion(),
             ReinstallFix(in, "MULTILANE_LIBRARY"));
  } else {
    d->Ok("libmlallreduce " + lib.Get("version") + " at " + in.library + " (loads)");
  }
  const std::string& module = in.cuda_module;
  if (access(module.c_str(), F_OK) == 0) {
    const Loaded cuda = LoadInChild(module, false);
    if (cuda.ok)
      d->Ok("CUDA module " + module + " (loads)");
    else if (cuda.why.find("libcuda.so") != std::string::npos)
      d->Note("CUDA module " + module + " needs the NVIDIA driver (" + cuda.why +
              "): none here, so device buffers go to the system MPI");
    else
      d->Error("CUDA module " + module + " does not load: " + cuda.why + "; device buffers go to the system MPI",
               "install the CUDA runtime it needs, or " + ReinstallFix(in, "MULTILANE_LIBRARY"));
  } else {
    d->Note("no CUDA module beside the library: device buffers go to the system MPI");
  }
  if (access(in.probe.c_str(), X_OK) != 0) {
    d->Error("probe program " + in.probe + " is missing or not executable", ReinstallFix(in, "MULTILANE_PROBE"));
  } else {
    const std::string problem = StartProblem(in.probe);
    if (problem.empty())
      d->Ok("probe program " + in.probe + " (starts)");
    else
      d->Error("probe program " + in.probe + ": " + problem, ReinstallFix(in, "MULTILANE_PROBE"));
  }
}

// The profiles of the database at `path`; none when it cannot be opened
// (CheckDatabase says why).
std::vector<mldb::ProfileRecord> ProfilesIn(const std::string& path) {
  std::string error;
  auto store = mldb::ProfileStore::Open(path, mldb::ProfileStore::Access::kReadOnly, &error);
  return store ? store->List(&error) : std::vector<mldb::ProfileRecord>{};
}

// `what` (a node type or a partition) is served by `p`: ok, unless the
// doctor found that profile unusable above (then jobs run without multilane).
void Served(Doctor* d, const std::string& what, const mldb::ProfileRecord& p, const std::string& detail) {
  const std::string line = what + ": profile " + std::to_string(p.id) + " (tuned " + p.tuned_at + detail + ")";
  if (d->unusable.count(p.profile_text) == 0)
    d->Ok(line);
  else
    d->Error(line + " is the one found unusable above: jobs there run without multilane",
             "tune that node type again (or import a corrected profile)");
}

// A family installed here: its row of the table and its MPI's version key.
struct InstalledFamily {
  const mla::MpiFamilyInfo* row;
  std::string version;
};

// The families whose probe is installed beside this command.
std::vector<InstalledFamily> InstalledFamilies(const Installation& in) {
  std::vector<InstalledFamily> out;
  for (const mla::MpiFamilyInfo& f : mla::MpiFamilies()) {
    std::string error;
    const std::string v = MpiVersionOfFamily(f.name, ProbeOfFamily(in.probe, f.name), &error);
    if (!v.empty()) out.push_back({&f, v});
  }
  return out;
}

// Whether a database of `databases` holds a profile of `node_type` for the
// MPI version `mpi` (any partition).
bool HasProfileFor(const std::vector<std::string>& databases, const std::string& node_type, const std::string& mpi) {
  for (const std::string& path : databases)
    for (const mldb::ProfileRecord& p : ProfilesIn(path))
      if (p.node_type_key == node_type && p.mpi_version == mpi) return true;
  return false;
}

// Once one installed family has a profile here, every other one needs its
// own: without, its jobs run without multilane, quietly.  The node type
// holds the MPI version, so each family's is this node's fingerprint with
// that family's version (as its tune collects it).
void CheckFamilyProfiles(Doctor* d, const std::vector<std::string>& databases, const mldb::NodeFingerprint& fp,
                         const std::vector<InstalledFamily>& families) {
  std::vector<const InstalledFamily*> missing;
  for (const InstalledFamily& f : families) {
    mldb::NodeFingerprint of_family = fp;
    of_family.mpi_version = f.version;
    if (!HasProfileFor(databases, of_family.Key(), f.version)) missing.push_back(&f);
  }
  if (missing.size() == families.size()) return;  // nothing tuned yet: CheckProfiles says so
  for (const InstalledFamily* f : missing)
    d->Error(f->row->version_words.front() + " ('" + f->version +
                 "') is installed, but no profile of this node type is for it: its jobs run without multilane",
             "`multilane tune --mpi " + f->row->name +
                 "`, with --partition P for each partition its jobs use (docs/admin.md, \"Tuning a partition\")");
}

// Profiles that serve this node type, per partition.
void CheckProfiles(Doctor* d, const std::vector<std::string>& databases, const std::string& node_type,
                   const std::string& mpi) {
  std::vector<std::string> notes;
  auto profile = mldb::ResolveProfile(databases, node_type, "", LibraryVersion(), mpi, &notes);
  if (profile) Served(d, "this node type", *profile, "");
  // Partitions: those Slurm lists, and those profiles were tuned for.
  std::set<std::string> partitions;
  std::string sinfo;
  if (RunAndCapture({"sinfo", "-h", "-o", "%R"}, &sinfo) == 0) {
    std::istringstream lines(sinfo);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) partitions.insert(line);
  }
  for (const std::string& path : databases)
    for (const mldb::ProfileRecord& p : ProfilesIn(path))
      if (!p.partition.empty() && p.node_type_key == node_type) partitions.insert(p.partition);
  for (const std::string& partition : partitions) {
    auto hit = mldb::ResolveProfile(databases, node_type, partition, LibraryVersion(), mpi, nullptr);
    if (hit)
      Served(d, "partition " + partition, *hit, hit->partition.empty() ? ", for any partition" : "");
    else
      d->Note("partition " + partition + ": no profile for this node type and versions (`multilane tune --partition " +
              partition + "`, which stores into the system database)");
  }
  if (!profile && partitions.empty())
    d->Note("no profile for this node type and library version yet: run `multilane tune`");
}

// Profiles that no job of this installation gets: node types and partitions
// whose every profile was tuned with another multilane or MPI version than
// the installed ones (an upgrade without a retune: each job there runs
// without multilane, quietly).
void CheckVersions(Doctor* d, const std::vector<std::string>& databases, const std::vector<InstalledFamily>& families) {
  std::vector<std::string> mpi_versions, installed;
  std::set<mla::MpiFamily> kinds;  // installed here: profiles of other families are not judged
  for (const InstalledFamily& f : families) {
    kinds.insert(f.row->family);
    mpi_versions.push_back(f.version);
    installed.push_back("'" + f.version + "'");
  }
  std::vector<mldb::ProfileRecord> all;
  std::vector<std::string> where;  // the database of each of `all`
  for (const std::string& path : databases) {
    if (access(path.c_str(), F_OK) != 0) continue;
    for (const mldb::ProfileRecord& p : ProfilesIn(path)) {
      if (kinds.count(mla::MpiFamilyFromVersion(p.mpi_version)) == 0) continue;
      all.push_back(p);
      where.push_back(path);
    }
  }
  std::string now = "libmlallreduce " + LibraryVersion() + " with MPI ";
  for (size_t i = 0; i < installed.size(); ++i) now += (i == 0 ? "" : " or ") + installed[i];
  for (const mldb::ProfileRecord& p : mldb::OutdatedProfiles(all, LibraryVersion(), mpi_versions)) {
    std::string path;
    for (size_t i = 0; i < all.size() && path.empty(); ++i)
      if (all[i].id == p.id && all[i].node_type_key == p.node_type_key && all[i].tuned_at == p.tuned_at)
        path = where[i];
    const bool system = path == mldb::SystemDatabasePath();
    const mla::MpiFamily family = mla::MpiFamilyFromVersion(p.mpi_version);
    const std::string mpi =
        family == mla::MpiFamilies().front().family ? "" : " --mpi " + mla::MpiFamilyRow(family).name;
    d->Error(path + ": profile " + std::to_string(p.id) + " of node type " + p.node_type_key +
                 (p.partition.empty() ? "" : ", partition " + p.partition) + " was " + mldb::TunedWith(p) +
                 ", and this node has " + now + ": every job there misses it and runs without multilane",
             "tune again with the installed versions: `multilane tune" +
                 (p.partition.empty() ? (system ? std::string(" --system") : std::string())
                                      : " --partition " + p.partition + (system ? "" : " --db " + path)) +
                 mpi + "` (docs/admin.md, \"Upgrading\")");
  }
}

// This node's Slurm version (0 when no Slurm command says it).
unsigned InstalledSlurmVersion() {
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{{"slurmd", "-V"}, {"sinfo", "--version"}, {"srun", "--version"}}) {
    std::string out;
    unsigned v = 0;
    if (RunAndCapture(argv, &out) == 0 && (v = ParseSlurmVersion(out)) != 0) return v;
  }
  return 0;
}

// The plugstack line that names spank_multilane.so (the first, when several
// do: an error), or false with a note where none does.
bool FindOurPlugstackLine(Doctor* d, const SlurmConf& conf, PlugstackLine* line) {
  if (access(conf.plugstack.c_str(), R_OK) != 0) {
    d->Note("no plugstack file " + conf.plugstack + " (PlugStackConfig): --multilane is not enabled here");
    return false;
  }
  std::vector<std::string> problems;
  std::vector<PlugstackLine> lines = ReadPlugstack(conf.plugstack, &problems);
  for (const std::string& p : problems)
    d->Error("plugstack line not understood: " + p, "fix or remove it (Slurm refuses the whole file)");
  std::vector<PlugstackLine> ours;
  for (const PlugstackLine& l : lines)
    if (l.plugin.find("spank_multilane") != std::string::npos) ours.push_back(l);
  if (ours.empty()) {
    d->Note("no plugstack line names spank_multilane.so (read " + conf.plugstack +
            " and its includes): --multilane is not enabled here");
    return false;
  }
  if (ours.size() > 1) {
    std::string where;
    for (const PlugstackLine& l : ours) where += " " + l.file + ":" + std::to_string(l.line);
    d->Error("spank_multilane.so is named " + std::to_string(ours.size()) + " times:" + where,
             "keep one line (Slurm would load the plugin twice)");
  }
  *line = ours.front();
  return true;
}

// The plugin of `line` loads, and was built for this node's Slurm.
void CheckPluginLoads(Doctor* d, const PlugstackLine& line, unsigned installed) {
  const Loaded plugin = LoadInChild(line.plugin, true);
  if (!plugin.ok) {
    d->Error("the plugin " + line.plugin + " does not load: " + plugin.why,
             "install slurm-spank-multilane built for this Slurm (or fix the path on the plugstack line)");
    return;
  }
  const unsigned built = static_cast<unsigned>(std::strtoul(plugin.Get("plugin_version").c_str(), nullptr, 10));
  if (installed == 0) {
    d->Note("the plugin loads (built for Slurm " + FormatSlurmVersion(built) +
            "); this node's Slurm version is unknown (no slurmd -V, sinfo --version)");
  } else if ((built >> 8) != (installed >> 8)) {
    d->Error("the plugin was built for Slurm " + FormatSlurmVersion(built) + ", this node runs " +
                 FormatSlurmVersion(installed) + ": Slurm refuses to load it",
             "install the plugin built against this Slurm version");
  } else {
    d->Ok("the plugin loads and matches Slurm " + FormatSlurmVersion(installed));
  }
}

// The command and the library the plugstack line names start and load, in
// this command's version.
void CheckWhatTheLineNames(Doctor* d, const multilane_spank::PluginConfig& config, const Installation& in) {
  if (access(config.multilane.c_str(), X_OK) != 0) {
    d->Error("multilane=" + config.multilane + " is missing or not executable: jobs run without multilane",
             "install multilane on this node, or point multilane= at it");
  } else {
    const std::string problem = StartProblem(config.multilane);
    if (!problem.empty())
      d->Error("multilane=" + config.multilane + ": " + problem + ": jobs run without multilane",
               "reinstall multilane on this node (its library must be where its RUNPATH says)");
    else if (RealPath(config.multilane) != RealPath(SelfPath()))
      d->Note("multilane=" + config.multilane + " is not this command (" + SelfPath() + ")");
    else
      d->Ok("multilane=" + config.multilane + " (starts)");
  }
  const Loaded lib = LoadInChild(config.library, false);
  if (!lib.ok)
    d->Error("library=" + config.library + " does not load: " + lib.why,
             "install multilane's library there, or fix library=");
  else if (lib.Get("version") != LibraryVersion())
    d->Error("library=" + config.library + " is version " + lib.Get("version") + ", this command " + LibraryVersion(),
             "install matching versions of multilane and its library");
  else if (RealPath(config.library) != RealPath(in.library))
    d->Note("library=" + config.library + " is not the library this command uses (" + in.library + ")");
  else
    d->Ok("library=" + config.library + " (loads, " + LibraryVersion() + ")");
  CheckDatabase(d, "plugstack database=", config.database,
                "the admin creates it with `multilane tune --partition P` (docs/admin.md, \"Tuning a partition\")");
}

// The cli_filter (the tuned layout at submission) is multilane's, with the
// plugstack line's settings.
void CheckCliFilter(Doctor* d, const SlurmConf& conf, const multilane_spank::PluginConfig& config) {
  if (conf.cli_filter.find("lua") == std::string::npos) {
    d->Note("CliFilterPlugins has no cli_filter/lua: --multilane jobs do not get the tuned tasks per GPU");
    return;
  }
  const std::string lua = conf.path.substr(0, conf.path.rfind('/') + 1) + "cli_filter.lua";
  const CliFilterSettings filter = ReadCliFilter(lua);
  if (!filter.ours) {
    d->Error(
        lua + " is not multilane's cli_filter.lua (or is missing)",
        "install multilane's cli_filter.lua there (slurm-spank-multilane), with the settings of the plugstack line");
    return;
  }
  const std::string mode = config.default_on ? "auto" : "off";
  if (filter.multilane != config.multilane || filter.database != config.database || filter.default_mode != mode)
    d->Error(lua + " settings (MULTILANE=" + filter.multilane + " DATABASE=" + filter.database +
                 " DEFAULT=" + filter.default_mode + ") differ from the plugstack line (multilane=" + config.multilane +
                 " database=" + config.database + " default=" + mode + ")",
             "set the three values at the top of " + lua + " as on the plugstack line");
  else
    d->Ok("cli_filter " + lua + " (settings match the plugstack line)");
}

// slurm.conf's MpiDefault against the installed families: `srun` without
// --mpi starts the tasks of a family whose type it is not as worlds of one
// rank each (the tune passes --mpi itself; users' jobs do not).
void CheckMpiDefault(Doctor* d, const SlurmConf& conf, const std::vector<InstalledFamily>& families) {
  std::string served, unserved;
  for (const InstalledFamily& f : families) {
    const std::string& type = f.row->srun_mpi;
    const std::string name = f.row->version_words.front();
    if (conf.mpi_default.compare(0, type.size(), type) == 0)
      served += (served.empty() ? "" : ", ") + name;
    else
      unserved += (unserved.empty() ? "" : ", ") + name + " needs --mpi=" + type;
  }
  const std::string at = "MpiDefault=" + conf.mpi_default;
  if (unserved.empty())
    d->Ok(at + ": srun starts the tasks of " + served + " as one MPI world");
  else if (!served.empty())
    d->Note(at + " serves " + served + "; under srun, " + unserved + " (docs/user.md)");
  else
    d->Error(at + ": srun without --mpi starts every task as an MPI world of its own (" + unserved +
                 "): such jobs compute alone on every task",
             "set MpiDefault=" + families.front().row->srun_mpi + " in " + conf.path +
                 " (every node's copy), or tell users to run " + mla::SrunMpiAdvice());
}

void CheckSlurm(Doctor* d, const Installation& in, const std::vector<InstalledFamily>& families) {
  SlurmConf conf;
  if (!ReadSlurmConf(SlurmConfPath(), &conf)) {
    std::printf("Slurm\n");
    d->Note("no " + SlurmConfPath() + ": not a Slurm node (or SLURM_CONF names another file)");
    return;
  }
  std::printf("Slurm (%s)\n", conf.path.c_str());
  if (!families.empty()) CheckMpiDefault(d, conf, families);
  const unsigned installed = InstalledSlurmVersion();
  PlugstackLine line;
  if (!FindOurPlugstackLine(d, conf, &line)) return;
  const std::string at = line.file + ":" + std::to_string(line.line);
  std::vector<char*> argv;
  std::vector<std::string> args = line.args;
  for (std::string& a : args) argv.push_back(a.data());
  multilane_spank::PluginConfig config;
  std::string error;
  if (!multilane_spank::ParsePluginConfig(static_cast<int>(argv.size()), argv.data(), &config, &error)) {
    d->Error(at + ": " + error, "correct the line (docs/admin.md lists the keys)");
    return;
  }
  d->Ok(at + ": " + line.kind + " " + line.plugin + " (keys valid)");
  CheckPluginLoads(d, line, installed);
  CheckWhatTheLineNames(d, config, in);
  CheckCliFilter(d, conf, config);
}

// Each family's launcher outside Slurm: its generation (Open MPI 4 with ORTE,
// 5 with PRRTE; vocab/mpi_families.cc), the command line tune's probes get,
// and an Open MPI launcher of another major version than the MPI this
// command was built with (its ranks would not start).
void CheckLaunchers(Doctor* d, const std::string& mpi) {
  for (const mla::MpiFamilyInfo& f : mla::MpiFamilies()) {
    std::string out;
    const bool is_default = &f == &mla::MpiFamilies().front();
    if (RunAndCapture({f.launcher, "--version"}, &out) == 127) {
      if (is_default)
        d->Error(f.launcher + " is not on PATH", "install Open MPI (apt-get install openmpi-bin) or fix PATH");
      continue;
    }
    const int major = mla::LauncherMajorVersion(out);
    const mla::LauncherGeneration* g = mla::FindLauncherGeneration(f, major);
    if (g == nullptr) {
      d->Note(f.launcher + " is " + f.name + " " + (major > 0 ? std::to_string(major) : "of an unknown version") +
              ", which multilane was not tested with (it knows " + f.name + " " + mla::LauncherGenerationChoices(f) +
              "; docs/admin.md, \"Support matrix\")");
      continue;
    }
    std::string line = f.launcher + " " + f.ranks_flag + " N";
    for (const std::string& flag : f.oversubscribe_flags) line += " " + flag;
    d->Ok(f.launcher + ": " + f.name + " " + std::to_string(major) + " (" + g->runtime +
          "): probes outside Slurm start with `" + line + "`");
    const int built = mla::LauncherMajorVersion(mpi);
    if (is_default && built != 0 && built != major)
      d->Error(f.launcher + " is " + f.name + " " + std::to_string(major) + " but this command's MPI is " + mpi +
                   ": probes and jobs it starts fail",
               "put the " + f.launcher + " of that MPI first on PATH, or install multilane built for " + f.name + " " +
                   std::to_string(major));
  }
}

// MPS on this node: what a `multilane run` killed with SIGKILL left is
// stopped and removed (mps_leftover.h), and a daemon in /tmp/nvidia-mps
// is named, or why a job does not use it (run_mps.h).
void CheckMps(Doctor* d) {
  std::printf("MPS\n");
  const std::vector<std::string> leftovers = StopLeftoverMps(MpsControlProgram(), /*name_unrecorded=*/true);
  for (const std::string& line : leftovers) d->Note(line);
  std::string refused;
  const std::string daemon = ReachableMpsPipe("/tmp/nvidia-mps", &refused);
  if (!daemon.empty())
    d->Ok("MPS daemon at " + mla::TerminalExcerpt(daemon) + ": jobs use it");
  else if (!refused.empty())
    d->Note(refused);
  if (leftovers.empty()) d->Ok("no MPS daemon or folder left by a `multilane run` of yours");
}

int RunDoctor(const DoctorOptions& opt) {
  if (!opt.load_check.empty()) return LoadCheck(opt.load_check, opt.lazy);
  Doctor d;
  std::printf("multilane doctor (multilane %s at %s)\n", LibraryVersion().c_str(), SelfPath().c_str());
  const Installation in = FindInstallation();
  CheckInstallation(&d, in);

  std::printf("MPI\n");
  const std::string mpi = MpiLibraryVersion();
  d.Ok(mpi);
  std::string found;
  if (InSlurmAllocation()) {
    if (RunAndCapture({"srun", "--version"}, &found) != 127)
      d.Ok("inside Slurm job " + std::string(std::getenv("SLURM_JOB_ID")) + ": probes run with srun");
    else
      d.Error("SLURM_JOB_ID is set but srun is not on PATH", "load Slurm's environment (PATH)");
  }
  CheckLaunchers(&d, mpi);

  std::printf("this node\n");
  const mldb::NodeFingerprint fp = mldb::CollectNodeFingerprint(mpi);
  d.Ok("node type " + fp.Key() + ": " + fp.Description());
  if (fp.gpus.empty())
    d.Note("no GPU seen through NVML: host-memory profiles only");
  else
    d.Ok(std::to_string(fp.gpus.size()) + " GPU(s), CUDA driver " + fp.cuda_driver_version);
  CheckMps(&d);

  std::printf("databases\n");
  std::vector<std::string> databases = opt.databases;
  if (!databases.empty()) {
    for (const std::string& db : databases) CheckDatabase(&d, "--db", db, "check the path");
  } else if (opt.system) {
    databases = {mldb::SystemDatabasePath()};
    CheckDatabase(&d, "system", databases[0],
                  "the admin creates it with `multilane tune --partition P` (docs/admin.md, \"Tuning a partition\")");
  } else {
    databases = mldb::DefaultDatabasePaths();
    CheckDatabase(&d, "user", mldb::UserDatabasePath(), "`multilane tune` creates it");
    CheckDatabase(&d, "system", mldb::SystemDatabasePath(),
                  "the admin creates it with `multilane tune --partition P` (docs/admin.md, \"Tuning a partition\")");
  }
  const std::vector<InstalledFamily> families = InstalledFamilies(in);
  CheckProfiles(&d, databases, fp.Key(), mpi);
  CheckFamilyProfiles(&d, databases, fp, families);
  CheckVersions(&d, databases, families);

  CheckSlurm(&d, in, families);

  if (d.errors == 0)
    std::printf("all good\n");
  else
    std::printf("%d problem(s) found: see the fixes above\n", d.errors);
  return d.errors ? 1 : 0;
}

}  // namespace

void AddDoctorCommand(CLI::App& app, int* status) {
  auto* opt = new DoctorOptions();  // lives as long as the app
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Check what runs: the library, probe and CUDA module, the databases and profiles per partition, MPI, "
      "and Slurm's plugstack line, plugin and cli_filter; say what to fix (exit 1 on any problem)");
  cmd->add_option("--db", opt->databases, "Check this database (repeatable) instead of the user's and the system's");
  cmd->add_flag("--system", opt->system, "Check the system database only (the admin's view)");
  cmd->add_option("--load-check", opt->load_check, "(internal: load FILE in this process and print its version)")
      ->group("");
  cmd->add_flag("--lazy", opt->lazy, "(internal)")->group("");
  cmd->callback([opt, status] { *status = RunDoctor(*opt); });
}

}  // namespace multilane
