// tune_layout.cc: oversubscribed probes (tune_layout.h).
#include "launcher/tune/tune_layout.h"

#include <sched.h>
#include <unistd.h>

#include "vocab/terminal_text.h"

namespace multilane {

int UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

std::string OversubscribedMark(int ranks_per_node, int cores) {
  return std::to_string(ranks_per_node) + "/" + std::to_string(cores);
}

LayoutVerdict CheckOversubscription(int ranks_per_node, int cores, bool allowed, bool to_system) {
  LayoutVerdict v;
  if (ranks_per_node <= cores) return v;
  const std::string what = mla::CountOf(ranks_per_node, "rank") + " on a node with " +
                           mla::CountOf(cores, "usable core") +
                           " is oversubscribed: its timings measure the OS scheduler as much as the "
                           "algorithms";
  if (to_system) {
    v.verdict = Oversubscription::kRefused;
    v.message = what +
                ", so it is never published as the node type's profile in the system database; tune with "
                "--np " +
                std::to_string(cores) + " (or fewer ranks per node)";
  } else if (!allowed) {
    v.verdict = Oversubscription::kRefused;
    v.message = what + "; tune with --np " + std::to_string(cores) +
                " (or fewer ranks per node), or give --allow-oversubscribed for a test (the profile is then marked "
                "oversubscribed=" +
                OversubscribedMark(ranks_per_node, cores) + ")";
  } else {
    v.verdict = Oversubscription::kMarked;
    v.message = "OVERSUBSCRIBED: " + what +
                "; the profile is stored marked oversubscribed=" + OversubscribedMark(ranks_per_node, cores) +
                " (for tests, not for production jobs)";
  }
  return v;
}

}  // namespace multilane
