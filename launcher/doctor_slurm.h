// doctor_slurm.h: what `multilane doctor` reads of a Slurm installation:
// slurm.conf's few settings that concern multilane, the plugstack.conf lines
// (with their `include` globs), the installed Slurm's version and the
// cli_filter script's settings.  Parsing only: the checks are in
// cmd_doctor.cc.
#ifndef MULTILANE_LAUNCHER_DOCTOR_SLURM_H_
#define MULTILANE_LAUNCHER_DOCTOR_SLURM_H_

#include <string>
#include <vector>

namespace multilane {

// $SLURM_CONF when set, else /etc/slurm/slurm.conf.
std::string SlurmConfPath();

struct SlurmConf {
  std::string path;
  std::string plugstack;             // PlugStackConfig, else plugstack.conf beside slurm.conf
  std::string cli_filter;            // CliFilterPlugins ("" when not set)
  std::string mpi_default = "none";  // MpiDefault (Slurm's default when not set: none)
};

// Reads `Key=Value` lines of slurm.conf (keys case-insensitive, `#`
// comments).  false when the file cannot be read.
bool ReadSlurmConf(const std::string& path, SlurmConf* out);

struct PlugstackLine {
  std::string file;  // the file it is in
  int line = 0;      // 1-based
  std::string kind;  // "required" or "optional"
  std::string plugin;
  std::vector<std::string> args;
};

// The plugin lines of plugstack.conf `path` and of every file its `include`
// lines name (glob patterns, relative to the including file's folder, at
// most 8 levels deep), in order.  Lines that are neither are listed in
// *problems (file:line: text).
std::vector<PlugstackLine> ReadPlugstack(const std::string& path, std::vector<std::string>* problems);

// Slurm's version number (SLURM_VERSION_NUM: major << 16 | minor << 8 |
// micro) from text holding "22.05.8" (`slurmd -V`, `sinfo --version`); 0
// when none.
unsigned ParseSlurmVersion(const std::string& text);

// "22.05.8" from a version number.
std::string FormatSlurmVersion(unsigned version);

struct CliFilterSettings {
  bool ours = false;  // the script is multilane's cli_filter.lua
  std::string multilane, database, default_mode;
};

// The settings at the top of cli_filter.lua (`local MULTILANE = "..."`).
CliFilterSettings ReadCliFilter(const std::string& path);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_DOCTOR_SLURM_H_
