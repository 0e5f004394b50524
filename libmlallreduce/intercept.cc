// intercept.cc: the MPI functions libmlallreduce interposes through the MPI
// profiling interface.  Each does its part and calls the PMPI_ version.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "mlallreduce.h"
#include "mpi_family.h"
#include "runtime.h"

#define MLA_INTERPOSE extern "C" __attribute__((visibility("default")))

namespace {

// True when the MPI in this process is the other family's (this build was
// injected directly into a program of the other MPI, not through the front
// libmlallreduce.so): one line says so and every call goes to that MPI
// unchanged.  An MPI of neither known family counts as this build's own (a
// program linked against this build was compiled with its mpi.h).
bool ForeignMpi() {
#ifdef MLA_SIMULATION
  return false;  // an SMPI program (simulation/): SimGrid is its only MPI
#else
  static const bool foreign = [] {
    std::string path;
    const std::string version = mla::LoadedMpiVersion(&path);
    const mla::MpiFamily family = mla::MpiFamilyFromVersion(version);
    if (family == mla::MpiFamily::kNeither || std::string(mla::MpiFamilyName(family)) == MLA_MPI_FAMILY) return false;
    if (mla::LaunchedAsRankZero()) {
      std::fprintf(stderr,
                   "multilane: warning: this is multilane's " MLA_MPI_FAMILY " build but the job's MPI is %s (%s); "
                   "multilane is off and the job runs unchanged; inject libmlallreduce.so, which picks the build "
                   "of the job's MPI\n",
                   mla::MpiFamilyName(family), mla::FirstLine(version).c_str());
    }
    return true;
  }();
  return foreign;
#endif
}

}  // namespace

MLA_INTERPOSE int MPI_Init(int* argc, char*** argv) {
  if (ForeignMpi()) return PMPI_Init(argc, argv);
  mla::CurrentConfig();
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) mla::OnMpiInitialized();
  return rc;
}

MLA_INTERPOSE int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  if (ForeignMpi()) return PMPI_Init_thread(argc, argv, required, provided);
  mla::CurrentConfig();
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) mla::OnMpiInitialized();
  return rc;
}

MLA_INTERPOSE int MPI_Finalize(void) {
  if (ForeignMpi()) return PMPI_Finalize();
  mla::OnMpiFinalizing();
  return PMPI_Finalize();
}

MLA_INTERPOSE int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm) {
  if (ForeignMpi()) return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  return mla_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
