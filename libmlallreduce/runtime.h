// runtime.h: the library's process-wide state: its settings, loaded once, and
// what happens at MPI_Init and MPI_Finalize.
#ifndef MLA_RUNTIME_H_
#define MLA_RUNTIME_H_

#include "config.h"

namespace mla {

// Returns the settings, loading them from the environment on first use.
// Thread-safe; the result never changes afterwards.
const Config& CurrentConfig();

// Returns false when multilane is off for this process: bad settings, or
// settings that differ between ranks.  Thread-safe.
bool Enabled();

// Returns false when the ranks of MPI_COMM_WORLD were found at MPI_Init to run
// with different settings: then even calls with an explicit choice go to the
// system MPI, since the ranks would not build the same layout.
bool SettingsConsistent();

// This process's rank among the processes of MPI_COMM_WORLD on its host
// (MPI_COMM_TYPE_SHARED), or -1 before MPI_Init.  Virtual nodes and GPU
// groups on hosts without GPUs are cut from it, so that a sub-communicator
// sees the same nodes and GPUs as MPI_COMM_WORLD.
int HostRank();

// Runs right after PMPI_Init/PMPI_Init_thread succeeded: records the world
// rank, creates the attribute key, checks that every rank has the same
// settings (one small PMPI_Allreduce on MPI_COMM_WORLD) and prints the
// warnings for bad settings from rank 0.
void OnMpiInitialized();

// Runs right before PMPI_Finalize: prints the counters when asked and frees
// what the library cached on MPI_COMM_WORLD.
void OnMpiFinalizing();

}  // namespace mla

#endif  // MLA_RUNTIME_H_
