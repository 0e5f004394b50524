// plugin_config.cc: plugstack.conf `key=value` arguments (plugin_config.h).
#include "spank/plugin_config.h"

#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <map>

#include "vocab/refuse.h"

namespace multilane_spank {
namespace {

using Setter = std::function<bool(const std::string&, PluginConfig*, std::string*)>;

Setter AbsolutePath(std::string PluginConfig::*field) {
  return [field](const std::string& v, PluginConfig* c, std::string* why) {
    if (v.empty() || v[0] != '/') return mla::Refuse(why, "must be an absolute path");
    c->*field = v;
    return true;
  };
}

Setter YesNo(bool PluginConfig::*field) {
  return [field](const std::string& v, PluginConfig* c, std::string* why) {
    if (v == "yes" || v == "1" || v == "true") {
      c->*field = true;
    } else if (v == "no" || v == "0" || v == "false") {
      c->*field = false;
    } else {
      return mla::Refuse(why, "must be yes or no");
    }
    return true;
  };
}

const std::map<std::string, Setter>& Keys() {
  static const std::map<std::string, Setter> keys = {
      {"library", AbsolutePath(&PluginConfig::library)},
      {"multilane", AbsolutePath(&PluginConfig::multilane)},
      {"database", AbsolutePath(&PluginConfig::database)},
      {"mps_control", AbsolutePath(&PluginConfig::mps_control)},
      {"mps_dir",
       [](const std::string& v, PluginConfig* c, std::string* why) {
         if (!AbsolutePath(&PluginConfig::mps_dir)(v, c, why)) return false;
         char host[256] = {0};
         if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
         c->mps_dir = ExpandHostName(v, host);
         return true;
       }},
      {"mps",
       [](const std::string& v, PluginConfig* c, std::string* why) {
         c->mps_auto = v == "auto";
         if (c->mps_auto) {
           c->mps = false;
           return true;
         }
         if (YesNo(&PluginConfig::mps)(v, c, why)) return true;
         return mla::Refuse(
             why, "must be auto (a daemon for GPU jobs where nvidia-cuda-mps-control is installed), yes or no");
       }},
      {"default",
       [](const std::string& v, PluginConfig* c, std::string* why) {
         if (v == "auto" || v == "on") {
           c->default_on = true;
         } else if (v == "off") {
           c->default_on = false;
         } else {
           return mla::Refuse(
               why, "must be off (users opt in with --multilane) or auto (every job, unless --multilane=off)");
         }
         return true;
       }},
      {"bind",
       [](const std::string& v, PluginConfig* c, std::string* why) {
         if (v == "cores") {
           c->bind_cores = true;
         } else if (v == "none") {
           c->bind_cores = false;
         } else {
           return mla::Refuse(why, "must be cores or none");
         }
         return true;
       }},
      {"resolve_timeout",
       [](const std::string& v, PluginConfig* c, std::string* why) {
         char* end = nullptr;
         const long s = std::strtol(v.c_str(), &end, 10);
         if (v.empty() || *end != '\0' || s < 1 || s > 600)
           return mla::Refuse(why, "must be a number of seconds from 1 to 600");
         c->resolve_timeout_s = static_cast<int>(s);
         return true;
       }},
  };
  return keys;
}

std::string KnownKeys() {
  std::string list;
  for (const auto& [key, setter] : Keys()) list += (list.empty() ? "" : ", ") + key;
  return list;
}

}  // namespace

bool ParsePluginConfig(int argc, char** argv, PluginConfig* out, std::string* error) {
  PluginConfig c;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i] ? argv[i] : "";
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return mla::Refuse(error, "plugstack.conf: argument '" + arg + "' is not key=value; known keys: " + KnownKeys());
    const std::string key = arg.substr(0, eq);
    const auto it = Keys().find(key);
    if (it == Keys().end())
      return mla::Refuse(error, "plugstack.conf: unknown key '" + key + "'; known keys: " + KnownKeys());
    std::string why;
    if (!it->second(arg.substr(eq + 1), &c, &why))
      return mla::Refuse(error, "plugstack.conf: " + key + "='" + arg.substr(eq + 1) + "' " + why);
  }
  *out = c;
  return true;
}

std::string ExpandHostName(const std::string& path, const std::string& host) {
  const std::string short_host = host.substr(0, host.find('.'));
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'h') {
      out += short_host;
      ++i;
    } else {
      out += path[i];
    }
  }
  return out;
}

}  // namespace multilane_spank
