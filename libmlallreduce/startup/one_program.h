// one_program.h: whether every rank of a job runs this very program, seen
// without a message (docs/all-in-or-all-out.md, "without PMIx").  A program
// linked with a family build carries multilane on the ranks that run it,
// but only the launcher knows what the other ranks run: an MPMD job
// (`mpiexec -n 2 ./linked : -n 2 ./plain`) looks the same to rank 0 as a job
// of one program, in its environment, in PMI's answers (appnum 0 on the
// first program's ranks) and in MPI's attributes.  What a rank can see is its
// own node: the processes its launcher started there.
#ifndef MLA_ONE_PROGRAM_H_
#define MLA_ONE_PROGRAM_H_

#include <string>
#include <vector>

namespace mla::lib {

// True when this process's parent (the launcher's process on this node:
// hydra's proxy, slurmstepd) has `world_size` children that run this
// process's own program file (the same file as /proc/self/exe), this one
// among them: then every rank of a job of `world_size` ranks is one of them
// and runs this program.  False when any of it cannot be read, on a job of
// several nodes, in an MPMD job, or under a wrapper between the launcher and
// the program.  Every rank of a one-node job sees the same children once
// MPI_Init returned (the MPI's start-up fence waited for all of them), so all
// decide alike.
bool EveryRankRunsThisProgram(int world_size);

// The process ids in the kernel's list of a task's children
// (/proc/PID/task/TID/children: decimal ids separated by spaces); what is
// not a positive decimal id is skipped.  At most `max_ids` ids.
std::vector<long> ParseChildIds(const std::string& text, size_t max_ids);

}  // namespace mla::lib

#endif  // MLA_ONE_PROGRAM_H_
