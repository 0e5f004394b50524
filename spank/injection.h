// injection.h: what the step's user_init puts into the step's environment on
// one node.  A job is all in or all out (docs/admin.md, "All in or all out"):
// wherever the library itself can load, every node of a --multilane step
// preloads it, with the node's profile or, where the node has none, with
// MULTILANE_OFF=<reason>; the library then agrees with the other ranks at
// start-up and, if any rank votes off, every rank runs unchanged.  Only a
// library that is missing or does not load leaves LD_PRELOAD alone.
#ifndef MULTILANE_SPANK_INJECTION_H_
#define MULTILANE_SPANK_INJECTION_H_

#include <map>
#include <string>

#include "spank/subprocess.h"

namespace multilane_spank {

struct Injection {
  enum class Kind {
    kProfile,  // LD_PRELOAD and MULTILANE_PROFILE (the look-up found one)
    kOff,      // LD_PRELOAD and MULTILANE_OFF (no usable profile on this node)
    kNone,     // nothing (the library is missing or does not load)
  };
  Kind kind = Kind::kNone;
  std::string line;  // what the user is told, ending with the fix; empty with kProfile
};

// Whether `path` is an ELF file we may name in LD_PRELOAD; false with the
// reason and the fix in *why.
bool LooksLikeLibrary(const std::string& path, std::string* why);

// Decides from the profile look-up (`lookup`, run as `multilane resolve
// --check-library library`; `kv` its parsed output) and LooksLikeLibrary's
// answer.  kNone when the library does not look like one, or the look-up
// says library_loads=no; kOff when the look-up failed (could not start, timed
// out, died, exit status not 0, output without found= and library_loads=) or
// found no profile; kProfile otherwise.  Where the look-up gave no answer,
// whether the library loads is unknown: LooksLikeLibrary alone decides.
Injection DecideInjection(const SubprocessResult& lookup, const std::map<std::string, std::string>& kv,
                          const std::string& multilane, const std::string& library, bool library_looks_ok,
                          const std::string& library_why);

// MULTILANE_OFF's value for `line` said on `node`: one line ("node: line"),
// control characters made spaces, at most 1024 bytes.
std::string OffReason(const std::string& node, const std::string& line);

}  // namespace multilane_spank

#endif  // MULTILANE_SPANK_INJECTION_H_
