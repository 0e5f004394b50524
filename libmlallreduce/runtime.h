// runtime.h: the library's process-wide state: its settings, loaded once, and
// what happens at MPI_Init and MPI_Finalize.
#ifndef MLA_RUNTIME_H_
#define MLA_RUNTIME_H_

#include "libmlallreduce/startup/config.h"

namespace mla::lib {

// Returns the settings, loading them from the environment on first use.
// Thread-safe; the result never changes afterwards.
const Config& CurrentConfig();

// Returns false when multilane is off for this process: before MPI_Init, or
// when the start-up agreement said off (a rank without multilane, another
// version, bad settings, settings that differ between ranks).  Thread-safe.
bool Enabled();

// Returns false unless the start-up agreement found every rank of
// MPI_COMM_WORLD running multilane, one version, with the same settings: then
// even calls with an explicit choice go to the system MPI, since the ranks
// would not build the same layout (or some would not take part at all).
bool SettingsConsistent();

// This process's rank among the processes of MPI_COMM_WORLD on its host
// (MPI_COMM_TYPE_SHARED), or -1 before MPI_Init.  Virtual nodes and GPU
// groups on hosts without GPUs are cut from it, so that a sub-communicator
// sees the same nodes and GPUs as MPI_COMM_WORLD.
int HostRank();

// Runs right before PMPI_Init/PMPI_Init_thread: casts this rank's ballot of
// the start-up agreement (startup.h) where the launcher offers PMIx.
void BeforeMpiInit();

// Runs right after PMPI_Init/PMPI_Init_thread succeeded: records the world
// rank and counts the start-up agreement's ballots (docs/all-in-or-all-out.md).
// Only when every rank runs multilane alike does it make collective calls of
// its own (the host split, the job report) and print the warnings for bad
// settings from rank 0; otherwise one rank prints why multilane is off.
void OnMpiInitialized();

// Runs right before PMPI_Finalize: prints the counters when asked and frees
// what the library cached on MPI_COMM_WORLD.
void OnMpiFinalizing();

}  // namespace mla::lib

#endif  // MLA_RUNTIME_H_
