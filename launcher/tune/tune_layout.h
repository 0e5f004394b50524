// tune_layout.h: whether a tune's probe has more ranks on a node than the node
// has cores (oversubscribed), and what `tune` does about it.  Timings of an
// oversubscribed probe measure the OS scheduler as much as the algorithms, so
// such a profile is never the node type's profile in the system database.
#ifndef MULTILANE_LAUNCHER_TUNE_LAYOUT_H_
#define MULTILANE_LAUNCHER_TUNE_LAYOUT_H_

#include <string>

namespace multilane {

// The CPUs this process may run on (its affinity mask; the online CPUs when
// that cannot be read).
int UsableCores();

enum class Oversubscription {
  kNo,       // ranks per node <= cores: nothing to say
  kMarked,   // oversubscribed, allowed: the profile is stored and marked
  kRefused,  // oversubscribed and not allowed here: nothing runs
};

struct LayoutVerdict {
  Oversubscription verdict = Oversubscription::kNo;
  std::string message;  // kMarked: the warning; kRefused: the error with the fix
};

// `ranks_per_node` ranks on a node of `cores` cores.  Oversubscribed probes
// are refused unless `allowed` (--allow-oversubscribed), and always when the
// profile would go to the system database (`to_system`).
LayoutVerdict CheckOversubscription(int ranks_per_node, int cores, bool allowed, bool to_system);

// The profile header's metadata value of a marked profile: "RANKS/CORES".
std::string OversubscribedMark(int ranks_per_node, int cores);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_LAYOUT_H_
