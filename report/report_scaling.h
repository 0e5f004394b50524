// report_scaling.h: the strong-scaling model of `multilane report`
// (docs/report.md, "The scaling model"): how much longer one allreduce of the
// same message takes on k times the GPUs, split between the step between
// nodes and the steps inside them.  Pure functions.
#ifndef MULTILANE_REPORT_SCALING_H_
#define MULTILANE_REPORT_SCALING_H_

#include <string>
#include <vector>

namespace mlreport {

// The ring factor (2(kn-1)/kn) / (2(n-1)/n) for n >= 2, else 1: how much
// longer one bandwidth-bound ring allreduce of the same message takes on k
// times the n participants.
double RingFactor(int n, double k);

// The share of a job's allreduce time the model puts in the step between
// nodes, and where that share comes from.
struct BetweenNodes {
  int nodes = 1;      // the machines the job ran on (distinct hosts)
  double share = 0;   // s, a fraction of 1
  std::string basis;  // "one node", "profile" or "assumed"
  std::string note;   // how s was found, for people
};

// The growth of the allreduce time on k times the GPUs: the step between the
// `nodes` machines grows by the ring factor of the node count (the traffic
// through each node's network port), the rest by that of the `n` GPUs:
// (1 - s) RingFactor(n, k) + s RingFactor(nodes, k).
double AllreduceGrowth(int n, const BetweenNodes& between, double k);

// One priced bin for EstimateBetweenNodes: the job's calls, its own time per
// call and the profile's (tuned on one machine) at the same size.
struct PricedCalls {
  double calls = 0;
  double job_us = 0;
  double profile_us = 0;
};

// The share of the step between nodes in a job's allreduce time.  One
// machine: 0.  With bins priced by a profile tuned on one machine (its
// `nodes_virtual=yes`, or one node), 1 - (the profile's time of the job's
// calls / the job's own time), clamped to [0, 1]: what the job spent beyond
// what the same calls take inside one machine.  Otherwise 1 (the network
// bounds the step between nodes: an upper bound on the growth), and the note
// says it was assumed.
BetweenNodes EstimateBetweenNodes(int machines, bool profile_tuned_on_one_machine,
                                  const std::vector<PricedCalls>& priced);

}  // namespace mlreport

#endif  // MULTILANE_REPORT_SCALING_H_
