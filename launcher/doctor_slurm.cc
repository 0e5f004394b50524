// doctor_slurm.cc: reading Slurm's configuration for `doctor`
// (doctor_slurm.h).
#include "launcher/doctor_slurm.h"

#include <glob.h>
#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace multilane {
namespace {

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

std::string Folder(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

void ReadPlugstackFile(const std::string& path, int depth, std::vector<PlugstackLine>* out,
                       std::vector<std::string>* problems) {
  std::ifstream in(path);
  if (!in) {
    problems->push_back(path + ": cannot be read");
    return;
  }
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    const std::string line = Trim(text.substr(0, text.find('#')));
    if (line.empty()) continue;
    std::istringstream words(line);
    PlugstackLine p;
    words >> p.kind;
    if (p.kind == "include") {
      std::string pattern;
      words >> pattern;
      if (pattern.empty() || depth >= 8) {
        problems->push_back(path + ":" + std::to_string(n) + ": " + line);
        continue;
      }
      if (pattern[0] != '/') pattern = Folder(path) + "/" + pattern;
      glob_t g;
      if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) ReadPlugstackFile(g.gl_pathv[i], depth + 1, out, problems);
      }
      globfree(&g);
      continue;
    }
    if (p.kind != "required" && p.kind != "optional") {
      problems->push_back(path + ":" + std::to_string(n) + ": " + line);
      continue;
    }
    words >> p.plugin;
    for (std::string a; words >> a;) p.args.push_back(a);
    p.file = path;
    p.line = n;
    out->push_back(p);
  }
}

}  // namespace

std::string SlurmConfPath() {
  const char* env = std::getenv("SLURM_CONF");
  return env != nullptr && *env != '\0' ? env : "/etc/slurm/slurm.conf";
}

bool ReadSlurmConf(const std::string& path, SlurmConf* out) {
  std::ifstream in(path);
  if (!in) return false;
  out->path = path;
  out->plugstack = Folder(path) + "/plugstack.conf";
  for (std::string text; std::getline(in, text);) {
    const std::string line = Trim(text.substr(0, text.find('#')));
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, eq)), value = Trim(line.substr(eq + 1));
    if (strcasecmp(key.c_str(), "PlugStackConfig") == 0)
      out->plugstack = value;
    else if (strcasecmp(key.c_str(), "CliFilterPlugins") == 0)
      out->cli_filter = value;
    else if (strcasecmp(key.c_str(), "MpiDefault") == 0)
      out->mpi_default = value;
  }
  return true;
}

std::vector<PlugstackLine> ReadPlugstack(const std::string& path, std::vector<std::string>* problems) {
  std::vector<PlugstackLine> out;
  ReadPlugstackFile(path, 0, &out, problems);
  return out;
}

unsigned ParseSlurmVersion(const std::string& text) {
  std::smatch m;
  static const std::regex re("([0-9]+)\\.([0-9]+)\\.([0-9]+)");
  if (!std::regex_search(text, m, re)) return 0;
  return (static_cast<unsigned>(std::stoul(m[1])) << 16) | (static_cast<unsigned>(std::stoul(m[2])) << 8) |
         static_cast<unsigned>(std::stoul(m[3]));
}

std::string FormatSlurmVersion(unsigned v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%u.%02u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
  return buf;
}

CliFilterSettings ReadCliFilter(const std::string& path) {
  CliFilterSettings s;
  std::ifstream in(path);
  static const std::regex setting("^local (MULTILANE|DATABASE|DEFAULT) = \"([^\"]*)\"");
  for (std::string line; std::getline(in, line);) {
    if (line.find("cli_filter.lua: the companion of spank_multilane.so") != std::string::npos) s.ours = true;
    std::smatch m;
    if (!std::regex_search(line, m, setting)) continue;
    if (m[1] == "MULTILANE")
      s.multilane = m[2];
    else if (m[1] == "DATABASE")
      s.database = m[2];
    else
      s.default_mode = m[2];
  }
  return s;
}

}  // namespace multilane
