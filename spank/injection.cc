#include "spank/injection.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "vocab/terminal_text.h"
#include "vocab/refuse.h"

namespace multilane_spank {
namespace {

constexpr const char* kWithout = "; this step runs without multilane";
// MULTILANE_OFF: what the library repeats whole (vocab/terminal_text.h).
constexpr size_t kMaxOffReason = mla::kRelayedReasonBytes;

Injection Make(Injection::Kind kind, const std::string& line) {
  Injection i;
  i.kind = kind;
  i.line = line;
  return i;
}

std::string Value(const std::map<std::string, std::string>& kv, const char* key) {
  const auto it = kv.find(key);
  return it == kv.end() ? std::string() : it->second;
}

}  // namespace

bool LooksLikeLibrary(const std::string& path, std::string* why) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return mla::Refuse(why, "the library " + path + " does not exist (" + std::strerror(errno) +
                                "); the admin fixes library= in plugstack.conf");
  FILE* f = std::fopen(path.c_str(), "rb");
  char magic[4] = {0, 0, 0, 0};
  const bool elf = f != nullptr && std::fread(magic, 1, 4, f) == 4 &&
                   std::memcmp(magic,
                               "\x7f"
                               "ELF",
                               4) == 0;
  if (f) std::fclose(f);
  if (!elf)
    return mla::Refuse(why, "the library " + path + " is not a loadable shared object; the admin reinstalls multilane");
  return true;
}

Injection DecideInjection(const SubprocessResult& lookup, const std::map<std::string, std::string>& kv,
                          const std::string& multilane, const std::string& library, bool library_looks_ok,
                          const std::string& library_why) {
  using Kind = Injection::Kind;
  if (!library_looks_ok) return Make(Kind::kNone, library_why + kWithout);
  // An answer names whether the library loads and whether a profile was found.
  const bool answered = lookup.ran && lookup.exit_status == 0 && kv.count("library_loads") && kv.count("found");
  if (answered && Value(kv, "library_loads") != "yes") {
    return Make(Kind::kNone, "the library " + library + " does not load: " + Value(kv, "library_error") + kWithout +
                                 " (the admin reinstalls multilane)");
  }
  if (!answered) {
    std::string why = lookup.error;
    if (lookup.ran && lookup.exit_status == 0) {
      why = "it printed no found= and library_loads= lines";
    } else if (lookup.ran) {
      why = "exit status " + std::to_string(lookup.exit_status);
      if (!lookup.error_line.empty()) why += ": " + lookup.error_line;
    }
    return Make(Kind::kOff, "the profile look-up (" + multilane + " resolve) failed: " + why + kWithout +
                                " (the admin runs `multilane doctor` on this node)");
  }
  if (Value(kv, "found") != "yes") {
    const std::string why = Value(kv, "why");
    return Make(Kind::kOff, (why.empty() ? std::string("no profile") : why) + kWithout);
  }
  if (Value(kv, "profile").empty()) {
    return Make(Kind::kOff, "the profile look-up (" + multilane +
                                " resolve) found a profile but printed no profile= "
                                "line" +
                                kWithout + " (the admin runs `multilane doctor` on this node)");
  }
  return Make(Kind::kProfile, "");
}

std::string OffReason(const std::string& node, const std::string& line) {
  std::string out = (node.empty() ? std::string("a node") : node) + ": " + line;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  if (out.size() > kMaxOffReason) out = out.substr(0, kMaxOffReason - 3) + "...";
  return out;
}

}  // namespace multilane_spank
