// intercept.cc: the MPI functions libmlallreduce interposes through the MPI
// profiling interface.  Each does its part and calls the PMPI_ version.
#include <mpi.h>

#include "mlallreduce.h"
#include "runtime.h"

#define MLA_INTERPOSE extern "C" __attribute__((visibility("default")))

MLA_INTERPOSE int MPI_Init(int* argc, char*** argv) {
  mla::CurrentConfig();
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) mla::OnMpiInitialized();
  return rc;
}

MLA_INTERPOSE int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  mla::CurrentConfig();
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) mla::OnMpiInitialized();
  return rc;
}

MLA_INTERPOSE int MPI_Finalize(void) {
  mla::OnMpiFinalizing();
  return PMPI_Finalize();
}

MLA_INTERPOSE int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm) {
  return mla_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
