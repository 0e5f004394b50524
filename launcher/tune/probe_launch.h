// probe_launch.h: the probe launches of a `multilane tune` on this node or
// inside an allocation: the probe's command (the MPI family's launcher, or
// srun), its plan written and its result read back, a repeat launch where the
// budget leaves time for it (tuner/repeat.h), MPS for several ranks per GPU,
// and one progress bar over them all.
#ifndef MULTILANE_LAUNCHER_TUNE_PROBE_LAUNCH_H_
#define MULTILANE_LAUNCHER_TUNE_PROBE_LAUNCH_H_

#include <chrono>
#include <string>
#include <vector>

#include "launcher/tune/tune_budget.h"
#include "launcher/tune/tune_folder.h"
#include "vocab/mpi_families.h"
#include "tuner/plan.h"
#include "tuner/search.h"

namespace multilane {

// One probe launch as a tune runs it.
struct ProbeLaunch {
  int ranks_per_gpu = 0;  // 0: not set (a host tune without --ranks-per-gpu)
  int np = 0;
  int per_node = 0;
  bool mps = false;  // ran under a private MPS daemon
  // Filled from the probe's result:
  std::vector<mltuner::Measurement> measurements;
  mltuner::SearchResult decided;
  int nodes = 1;
  double measuring_s = -1;
  double probe_s = 0;
  double planned_measuring_s = 0;  // the seconds of measurements its probes' plans got
  std::string repeat_note;         // what the repeat launch did, or why there was none (one line)
};

// What every probe launch of a tune shares: the tune's request as resolved.
struct ProbeContext {
  const mla::MpiFamilyInfo& family;  // the MPI family to tune with: its launcher's row
  std::string probe;                 // the MPI family's probe program
  mltuner::Plan plan;                // the sizes and memory kinds every launch measures (its budget set per launch)
  const TuneFolder& folder;          // where the plans and results go
  std::string mps_program;           // the MPS control program; "" when there is none or no device memory is tuned
  int virtual_nodes = 0;             // --virtual-nodes: each launch's ranks split into that many nodes; 0: none
  std::string srun_mpi;              // srun's --mpi for the probes (SrunMpiOf); "": the cluster's MpiDefault
  bool exhaustive = false;           // --exhaustive: every candidate measured fully, no repeat
  double budget_s = 0;               // the whole tune's seconds (--budget)
  std::chrono::steady_clock::time_point start;  // when the tune started: the budget counts from there
};

// Runs every launch of *launches in turn, each with its share of what is
// left of the tune's budget, under one progress bar, and fills each from
// its probe's result.  Launches with several ranks on a GPU run under a
// private MPS daemon where the launch is on this machine.  Adds the probes'
// times to *times.  0, or the exit status of the tune with the message
// printed.
int RunLaunches(const ProbeContext& context, std::vector<ProbeLaunch>* launches, TuneTimes* times);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_PROBE_LAUNCH_H_
