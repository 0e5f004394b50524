// plugin_config.h: the admin's settings, the `key=value` arguments of the
// plugin's line in plugstack.conf:
//
//   optional /usr/lib/slurm/spank_multilane.so library=/usr/lib/multilane/libmlallreduce.so
//       multilane=/usr/bin/multilane database=/var/lib/multilane/profiles.db default=off mps=no
// (one line in the file)
//
// Only these paths are ever used where the plugin runs as root; nothing a user
// sets can replace them.
#ifndef MULTILANE_SPANK_PLUGIN_CONFIG_H_
#define MULTILANE_SPANK_PLUGIN_CONFIG_H_

#include <string>

namespace multilane_spank {

struct PluginConfig {
  std::string library = "/usr/lib/multilane/libmlallreduce.so";  // injected with LD_PRELOAD
  std::string multilane = "/usr/bin/multilane";                   // resolves the profile
  std::string database = "/var/lib/multilane/profiles.db";        // the system database
  bool default_on = false;                 // default=auto: multilane without --multilane
  bool mps = false;                        // mps=yes: one MPS control daemon per job and node
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

}  // namespace multilane_spank

#endif  // MULTILANE_SPANK_PLUGIN_CONFIG_H_
