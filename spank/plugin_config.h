// plugin_config.h: the admin's settings, the `key=value` arguments of the
// plugin's line in plugstack.conf:
//
//   optional /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_multilane.so
//       library=/usr/lib/x86_64-linux-gnu/libmlallreduce.so.0 multilane=/usr/bin/multilane
//       database=/var/lib/multilane/profiles.db default=off mps=auto
// (one line in the file; the packages ship it, commented out, in
// /etc/slurm/plugstack.conf.d/multilane.conf).  The path keys default to
// the paths of the configured install (install_paths.h).
//
// Only these paths are ever used where the plugin runs as root; nothing a user
// sets can replace them.
#ifndef MULTILANE_SPANK_PLUGIN_CONFIG_H_
#define MULTILANE_SPANK_PLUGIN_CONFIG_H_

#include <string>

#include "multilane/install_paths.h"

namespace multilane_spank {

struct PluginConfig {
  std::string library = multilane_install::kLibrary;          // injected with LD_PRELOAD
  std::string multilane = multilane_install::kCommand;        // resolves the profile
  std::string database = multilane_install::kSystemDatabase;  // the system database
  bool default_on = false;                                    // default=auto: multilane without --multilane
  bool mps = false;                                           // mps=yes: one MPS control daemon per job and node
  // mps=auto (the default): the daemon for jobs with GPUs on nodes where
  // mps_control is installed, unless the user asked for 1 task per GPU.
  bool mps_auto = true;
  std::string mps_control = "/usr/bin/nvidia-cuda-mps-control";
  std::string mps_dir = "/run/multilane";  // parent of the per-job pipe and log directories
  bool bind_cores = true;                  // bind=cores: each task to its share of the CPUs
  int resolve_timeout_s = 30;              // how long the profile look-up may take
};

// Parses the plugstack.conf arguments argv[0..argc) into *out.  Returns false
// and sets *error to one line naming the argument and the fix for a word
// without '=', an unknown key (the known keys are listed), a relative path
// or a bad value.
bool ParsePluginConfig(int argc, char** argv, PluginConfig* out, std::string* error);

// mps_dir with every "%h" replaced by `host` cut at its first '.' (for nodes
// that share a file system, e.g. several slurmd on one host); ParsePluginConfig
// applies it with this host's name.
std::string ExpandHostName(const std::string& path, const std::string& host);

}  // namespace multilane_spank

#endif  // MULTILANE_SPANK_PLUGIN_CONFIG_H_
