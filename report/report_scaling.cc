// report_scaling.cc: the strong-scaling model (report_scaling.h).
#include "report/report_scaling.h"

#include <algorithm>
#include <cstdio>

namespace mlreport {

double RingFactor(int n, double k) {
  if (n < 2) return 1;
  const double now = 2.0 * (n - 1) / n;
  const double kn = k * n;
  return (2.0 * (kn - 1) / kn) / now;
}

double AllreduceGrowth(int n, const BetweenNodes& between, double k) {
  const double s = between.nodes >= 2 ? between.share : 0;
  return (1 - s) * RingFactor(n, k) + s * RingFactor(between.nodes, k);
}

BetweenNodes EstimateBetweenNodes(int machines, bool profile_tuned_on_one_machine,
                                  const std::vector<PricedCalls>& priced) {
  BetweenNodes b;
  b.nodes = std::max(machines, 1);
  if (b.nodes < 2) {
    b.basis = "one node";
    b.note = "the job ran on one machine: no step between nodes (the one a larger job would add is not modelled)";
    return b;
  }
  double job_us = 0, profile_us = 0;
  for (const PricedCalls& p : priced) {
    if (p.calls <= 0 || p.job_us <= 0 || p.profile_us <= 0) continue;
    job_us += p.calls * p.job_us;
    profile_us += p.calls * p.profile_us;
  }
  if (profile_tuned_on_one_machine && job_us > 0) {
    b.share = std::clamp(1 - profile_us / job_us, 0.0, 1.0);
    b.basis = "profile";
    char text[256];
    std::snprintf(text, sizeof text,
                  "the profile, tuned on one machine, prices the job's priced calls at %.4g s; they took %.4g s "
                  "on %d machines: the difference, %.0f %%, is the step between nodes",
                  profile_us * 1e-6, job_us * 1e-6, b.nodes, 100 * b.share);
    b.note = text;
    return b;
  }
  b.share = 1;
  b.basis = "assumed";
  b.note = std::string(profile_tuned_on_one_machine ? "no call of the job is priced by the profile"
                                                    : "no profile tuned on one machine to compare with") +
           ": the whole allreduce is taken as the step between nodes, an upper bound on its growth";
  return b;
}

}  // namespace mlreport
