// fuzz_plugin_config.cc: the plugstack.conf key=value arguments
// (spank/plugin_config.h); the input is split at spaces and NUL bytes into
// arguments, as Slurm splits the plugin's line.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "spank/plugin_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == ' ' || c == '\0' || c == '\n' || c == '\t') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  multilane_spank::PluginConfig config;
  std::string error;
  if (!multilane_spank::ParsePluginConfig(static_cast<int>(argv.size()), argv.data(), &config, &error)) {
    if (error.empty()) std::abort();
    return 0;
  }
  // Only absolute paths are ever used as root.
  for (const std::string* path : {&config.library, &config.multilane, &config.database, &config.mps_dir})
    if (path->empty() || (*path)[0] != '/') std::abort();
  if (config.resolve_timeout_s <= 0) std::abort();
  return 0;
}
