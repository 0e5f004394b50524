// tune_budget.h: `multilane tune --budget S` is the time the whole tune
// takes, launch overheads included.  This plans the share the probes get and
// explains an overrun afterwards.
#ifndef MULTILANE_LAUNCHER_TUNE_BUDGET_H_
#define MULTILANE_LAUNCHER_TUNE_BUDGET_H_

#include <chrono>
#include <string>

namespace multilane {

// The seconds from `t` to now.
inline double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A tune's overrun beyond this fraction of --budget is reported.
constexpr double kBudgetSlack = 0.05;

struct BudgetPlan {
  double budget_s = 0;   // --budget
  double reserve_s = 0;  // kept for starting and ending the MPI job and storing the profile
  double probe_s = 0;    // what the probe's plan gets (its measurements)
  std::string warning;   // not empty: the budget is too small for the overheads (one line)
};

// The probe's share of `budget_s` after `spent_s` seconds already gone (the
// fingerprint, opening the database) and `launch_s` seconds expected for
// starting and ending the MPI job.  The probe gets at least a third of the
// budget: below that, *warning says the tune will overrun and by how much.
BudgetPlan PlanBudget(double budget_s, double spent_s, double launch_s);

// The expected seconds to start and end an MPI job of `ranks` ranks: with
// mpirun on this machine, or with srun inside an allocation.
double ExpectedLaunchSeconds(int ranks, bool srun);

// A launch's share of the budget split between its probe and a repeat
// launch of the same layout (tuner/repeat.h), which costs a second MPI start
// and end.
struct RepeatPlan {
  double first_s = 0;   // the first probe's share (its MPI start and end included)
  double repeat_s = 0;  // the repeat's; 0: no repeat
  std::string why_not;  // repeat_s == 0: why, ending with what gives one
};

// The repeat gets kRepeatShare of a launch's `share_s` when that leaves it
// at least kMinRepeatMeasuringS of measurements after its `launch_s` of MPI
// start and end; else the first probe gets it all.
constexpr double kRepeatShare = 0.25;
constexpr double kMinRepeatMeasuringS = 3;
RepeatPlan PlanRepeat(double share_s, double launch_s);

// The repeat's seconds of measurements once the first launch is over: what
// is left of the launch's `share_s` after the `used_s` seconds the first
// launch took, less one more MPI start and end as long as the first one's
// (`launch_s`, measured), and at most `planned_s` (PlanRepeat's).  So a
// machine slower to start MPI jobs than ExpectedLaunchSeconds says shortens
// the repeat instead of overrunning --budget.  0 with *why_not (ending with
// what gives one) when that is below kMinRepeatMeasuringS.
double RepeatMeasuringSeconds(double planned_s, double share_s, double used_s, double launch_s, std::string* why_not);

// Where a finished tune's time went.
struct TuneTimes {
  double budget_s = 0;        // --budget
  double total_s = 0;         // the whole command
  double before_s = 0;        // until the probe started
  double probe_budget_s = 0;  // planned for the measurements
  double probe_s = 0;         // the probe's process, start to end
  double measuring_s = -1;    // the probe's own measuring time (result "wall_s"); -1 unknown
  double after_s = 0;         // deciding and storing
};

// "" when total_s is within kBudgetSlack of budget_s; else one line saying by
// how many seconds and percent the tune overran, and the largest cause (the
// measurements beyond their share, MPI start/end, preparation, storing).
std::string ExplainOverrun(const TuneTimes& t);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_BUDGET_H_
