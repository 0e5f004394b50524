// job_key.cc: the job key rule (job_key.h).
#include "vocab/job_key.h"

#include <cstdint>
#include <cstdio>

namespace mla {
namespace {

bool KeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-' || c == '+' || c == ':' || c == '@' || c == '/';
}

}  // namespace

bool ValidJobKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxJobKeyLength || key[0] == '-') return false;
  for (char c : key)
    if (!KeyChar(c)) return false;
  return true;
}

std::string JobKeyRule() {
  return "1 to " + std::to_string(kMaxJobKeyLength) + " letters, digits or . _ - + : @ /, not starting with -";
}

std::string Fnv1a64Hex(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(h));
  return digest;
}

std::string DefaultJobKey(const std::string& program, const std::string& cmdline) {
  std::string name;
  for (char c : program.substr(0, kMaxJobKeyLength - 13)) name += KeyChar(c) ? c : '_';
  if (name.empty() || name[0] == '-') name = "job" + name;
  return name.substr(0, kMaxJobKeyLength - 13) + ":" + Fnv1a64Hex(cmdline).substr(0, 12);
}

}  // namespace mla
