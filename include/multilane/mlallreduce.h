/*
 * mlallreduce.h: the public C interface of libmlallreduce.
 *
 * Most programs never include this header: injecting libmlallreduce.so with
 * LD_PRELOAD makes every MPI_Allreduce of an unchanged program go through the
 * library, which picks an algorithm from the profile in its environment (see
 * docs/variables.md and docs/profile-format.md).  Programs that want to call
 * the library directly, choose an algorithm per call (benchmarks, the tuner's
 * probes) or read its counters (tests, reports) use the functions below.
 *
 * Every function is safe to call from several threads at once when MPI was
 * initialised with MPI_THREAD_MULTIPLE, as long as concurrent collective calls
 * use different communicators (the MPI rule).
 */
#ifndef MLALLREDUCE_H_
#define MLALLREDUCE_H_

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "mlallreduce_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Same contract as MPI_Allreduce.  Decides like the interposed MPI_Allreduce:
 * the algorithm comes from MULTILANE_ALGO or the profile, else PMPI_Allreduce. */
MLA_API int mla_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm);

/* Same contract as MPI_Allreduce, run with the given choice whatever the
 * environment says.  Calls the algorithm cannot handle (see mla_call_supported)
 * go to PMPI_Allreduce and count as unsupported.  Every rank must pass the
 * same choice. */
MLA_API int mla_allreduce_with(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, const mla_choice* choice);

/* Returns 1 when a multilane algorithm can run this (datatype, op, comm)
 * combination, 0 when the call would go to PMPI_Allreduce whatever the
 * layout.  The layout is a separate condition: on an irregular one
 * (mla_comm_layout says regular = 0) every call goes to PMPI_Allreduce too.
 * When reason is not NULL it receives a static string saying why not (or ""
 * when supported). */
MLA_API int mla_call_supported(MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const char** reason);

/* Fills *layout for comm.  Collective over comm on the first call for a
 * communicator (it builds and caches the node and lane communicators).
 * Returns MPI_SUCCESS or an MPI error code; MPI_ERR_OTHER, with no call made,
 * when the start-up agreement at MPI_Init did not find every rank of the job
 * running multilane alike (or MPI_Init did not reach the library). */
MLA_API int mla_comm_layout(MPI_Comm comm, mla_layout* layout);

#ifdef __cplusplus
}
#endif

#endif /* MLALLREDUCE_H_ */
