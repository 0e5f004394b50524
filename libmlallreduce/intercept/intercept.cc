// intercept.cc: the MPI functions libmlallreduce interposes through the MPI
// profiling interface.  Each does its part and calls the PMPI_ version.
// MPI_Allreduce itself is defined without mpi.h in intercept_allreduce.cc
// (its handles differ in width between the families) and comes here through
// InterceptedAllreduce.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include "mlallreduce.h"
#include "libmlallreduce/dispatch.h"
#include "libmlallreduce/startup/mpi_family.h"
#include "libmlallreduce/startup/pmix_channel.h"
#include "libmlallreduce/runtime.h"
#include "libmlallreduce/intercept/intercept_abi.h"
#include "libmlallreduce/intercept/intercept_init.h"
#include "libmlallreduce/startup/startup.h"
#include "libmlallreduce/base/stats.h"
#include "vocab/terminal_text.h"

#define MLA_INTERPOSE extern "C" __attribute__((visibility("default")))

namespace {

// A handle as the caller passed it in a register: a pointer (Open MPI) or an
// int (MPICH's ABI).
template <typename Handle>
Handle FromBits(std::uintptr_t bits) {
  if constexpr (std::is_pointer_v<Handle>)
    return reinterpret_cast<Handle>(bits);
  else
    return static_cast<Handle>(bits);
}

}  // namespace

namespace mla::lib {

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
    const std::string version = mla::lib::LoadedMpiVersion(&path);
    const mla::MpiFamily family = mla::MpiFamilyFromVersion(version);
    if (family == mla::MpiFamily::kNeither || std::string(mla::MpiFamilyName(family)) == MLA_MPI_FAMILY) return false;
    if (mla::lib::LaunchedAsRankZero()) {
      mla::PrintLine(std::string("warning: this is multilane's " MLA_MPI_FAMILY " build but the job's MPI is ") +
                     mla::MpiFamilyName(family) + " (" + mla::MpiVersionKey(version) +
                     "); multilane is off and the job runs unchanged; inject libmlallreduce.so, which picks the "
                     "build of the job's MPI");
    }
    return true;
  }();
  return foreign;
#endif
}

int InterceptedAllreduce(mla_entry entry, const void* sendbuf, void* recvbuf, int count, std::uintptr_t datatype,
                         std::uintptr_t op, std::uintptr_t comm) {
  return EntryAllreduce(entry, sendbuf, recvbuf, count, FromBits<MPI_Datatype>(datatype), FromBits<MPI_Op>(op),
                        FromBits<MPI_Comm>(comm));
}

void CountPassedOn(mla_entry entry) { CountEntry(entry, true); }

void* SystemMpiFunction(const char* name) { return dlsym(RTLD_DEFAULT, name); }

int MissingMpiFunction(const char* name) {
  mla::PrintLine(std::string("error: ") + name + " called but the MPI in this process has no " + name +
                 "; build the program against the MPI it runs with");
  return MPI_ERR_OTHER;
}

}  // namespace mla::lib

namespace {

// MPI_Init under the other family's MPI: this build cannot make MPI calls
// through that ABI, but where the launcher offers PMIx it still votes off in
// the start-up agreement, so the job's other ranks go off with it.
int ForeignInit(const std::function<int()>& init) {
  mla::lib::Ballot off;
  off.version = MLA_VERSION_STRING;
  off.on = false;
  off.counts = false;  // it cannot read the others' ballots through this ABI
  off.reason = "multilane's " MLA_MPI_FAMILY
               " build was injected into a job of another MPI; inject "
               "libmlallreduce.so, which picks the build of the job's MPI";
  mla::lib::CastBallot(off);
  const int rc = init();
  mla::lib::ReleaseBallotChannel();
  return rc;
}

}  // namespace

namespace mla::lib {

int InitWithLibrary(const std::function<int()>& init) {
  PmixMpiInitBegins();
  if (ForeignMpi()) {
    const int rc = ForeignInit(init);
    PmixMpiInitEnds();
    return rc;
  }
  BeforeMpiInit();
  const int rc = init();
  PmixMpiInitEnds();
  if (rc == MPI_SUCCESS) OnMpiInitialized();
  return rc;
}

int FinalizeWithLibrary() {
  if (!ForeignMpi()) OnMpiFinalizing();
  return PMPI_Finalize();
}

}  // namespace mla::lib

MLA_INTERPOSE int MPI_Init(int* argc, char*** argv) {
  return mla::lib::InitWithLibrary([&] { return PMPI_Init(argc, argv); });
}

MLA_INTERPOSE int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return mla::lib::InitWithLibrary([&] { return PMPI_Init_thread(argc, argv, required, provided); });
}

MLA_INTERPOSE int MPI_Finalize(void) { return mla::lib::FinalizeWithLibrary(); }

#ifdef MLA_SIMULATION
// An SMPI program (simulation/): SimGrid is its only MPI.
MLA_INTERPOSE int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm) {
  return mla_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
#endif
