// tune_budget.cc: planning and accounting a tune's time (tune_budget.h).
#include "launcher/tune/tune_budget.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace multilane {
namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

double ExpectedLaunchSeconds(int ranks, bool srun) {
  // Measured on small machines: mpirun starts and ends 4 ranks in about
  // 0.5 s; srun adds the step's creation.  Storing the profile takes
  // well under 0.1 s.
  return (srun ? 2.0 : 0.8) + 0.05 * std::max(ranks, 1) + 0.1;
}

BudgetPlan PlanBudget(double budget_s, double spent_s, double launch_s) {
  BudgetPlan p;
  p.budget_s = budget_s;
  p.reserve_s = std::max(0.0, spent_s) + std::max(0.0, launch_s);
  const double floor = budget_s / 3;
  p.probe_s = std::max(floor, budget_s - p.reserve_s);
  if (budget_s - p.reserve_s < floor) {
    p.warning = "--budget " + Seconds(budget_s) + " is small for this tune: about " + Seconds(p.reserve_s) +
                " go to preparing, starting and ending the MPI job, so the tune will take about " +
                Seconds(p.reserve_s + p.probe_s) + "; give a larger --budget to keep to it";
  }
  return p;
}

RepeatPlan PlanRepeat(double share_s, double launch_s) {
  RepeatPlan p;
  p.first_s = share_s;
  const double least = (kMinRepeatMeasuringS + std::max(0.0, launch_s)) / kRepeatShare;
  if (share_s < least) {
    p.why_not = "this launch's share of --budget (" + Seconds(share_s) + ") is below " + Seconds(least) +
                ", so its noise is one launch's; a larger --budget measures each winner in a second launch too";
    return p;
  }
  p.repeat_s = kRepeatShare * share_s;
  p.first_s = share_s - p.repeat_s;
  return p;
}

double RepeatMeasuringSeconds(double planned_s, double share_s, double used_s, double launch_s, std::string* why_not) {
  const double left = share_s - used_s - std::max(0.0, launch_s);
  const double measuring = std::min(planned_s, left);
  if (measuring >= kMinRepeatMeasuringS) return measuring;
  *why_not = "the first launch took " + Seconds(used_s) + " of this launch's " + Seconds(share_s) +
             " (starting and ending its MPI job " + Seconds(launch_s) + "), which leaves the repeat under " +
             Seconds(kMinRepeatMeasuringS) +
             " of measurements; a larger --budget measures each winner in a "
             "second launch too";
  return 0;
}

std::string ExplainOverrun(const TuneTimes& t) {
  const double over = t.total_s - t.budget_s;
  if (t.budget_s <= 0 || over <= kBudgetSlack * t.budget_s) return "";
  // Each part's excess over what the plan gave it.
  const double measuring = t.measuring_s >= 0 ? t.measuring_s : t.probe_s;
  const double launch = t.measuring_s >= 0 ? std::max(0.0, t.probe_s - t.measuring_s) : 0;
  const double planned_overheads = std::max(0.0, t.budget_s - t.probe_budget_s);
  std::vector<std::pair<double, std::string>> causes = {
      {measuring - t.probe_budget_s,
       "the measurements took " + Seconds(measuring) + " of their " + Seconds(t.probe_budget_s) +
           " (at every size the system MPI and the previous size's two best get one round whatever the "
           "budget, which takes long where one call does: fewer or smaller --sizes or a larger --step shorten it)"},
      {t.before_s + launch + t.after_s - planned_overheads,
       "preparing (" + Seconds(t.before_s) + "), starting and ending the MPI job (" + Seconds(launch) +
           ") and storing (" + Seconds(t.after_s) + ") took more than the " + Seconds(planned_overheads) + " planned"},
  };
  std::sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  char head[160];
  std::snprintf(head, sizeof head, "the tune took %.1f s, %.1f s (%.0f%%) over its --budget of %.1f s: ", t.total_s,
                over, 100 * over / t.budget_s, t.budget_s);
  return head + causes.front().second;
}

}  // namespace multilane
