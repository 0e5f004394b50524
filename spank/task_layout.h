// task_layout.h: which GPU and which CPUs a task of a step gets, from the
// step's GPU list and the task's local index.  Pure logic (unit-tested).
//
// Tasks are laid out in blocks: with T tasks and G GPUs on the node, local
// task i uses GPU floor(i * G / T) (mla::GpuOfRank, vocab/ranks_per_gpu.h,
// as the probe and the benchmark place ranks), so that tasks 0..T/G-1 share
// the first GPU, and the CPUs the tasks may use are cut into T contiguous blocks, so
// that the tasks of one GPU sit on neighbouring cores.
#ifndef MULTILANE_SPANK_TASK_LAYOUT_H_
#define MULTILANE_SPANK_TASK_LAYOUT_H_

#include <string>
#include <vector>

namespace multilane_spank {

// Splits a list such as "0,1" or "GPU-a,GPU-b" at commas; empty items dropped.
std::vector<std::string> SplitList(const std::string& text);

// The GPU (an item of `step_gpus`) of local task `task` of `tasks`; "" when
// the step has no GPUs or the arguments are out of range.
std::string GpuOfTask(const std::vector<std::string>& step_gpus, int task, int tasks);

// The CPUs of local task `task` of `tasks`, from the node's usable CPUs
// `cpus` (sorted ascending).  With fewer CPUs than tasks, tasks share CPUs.
std::vector<int> CpusOfTask(const std::vector<int>& cpus, int task, int tasks);

// "0-3,8" style list of sorted CPU numbers.
std::string CpuListString(const std::vector<int>& cpus);

}  // namespace multilane_spank

#endif  // MULTILANE_SPANK_TASK_LAYOUT_H_
