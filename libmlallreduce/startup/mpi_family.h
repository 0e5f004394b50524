// mpi_family.h: which MPI family a process runs on.  A PMPI interposer is
// bound to its MPI's ABI (handle types, constants), so multilane builds one
// library per family (docs/admin.md, "MPI families"); the front library and
// each family build use these functions to find the MPI that is loaded.
#ifndef MLA_MPI_FAMILY_H_
#define MLA_MPI_FAMILY_H_

#include <cstdint>
#include <string>

#include "vocab/mpi_families.h"

namespace mla::lib {

// MpiFamily, MpiFamilyFromVersion, MpiFamilyName and MpiVersionKey: the family
// table (vocab/mpi_families.h).

// The MPI loaded in this process: the object that defines
// PMPI_Get_library_version, looked up in the global scope and, failing that
// (an MPI opened with RTLD_LOCAL, as a Python extension may), in every loaded
// object.  Found, it is made global (RTLD_GLOBAL) so that a family build opened
// later binds to it.  Sets *path to its file and returns its version text
// (callable before MPI_Init); returns "" when no MPI is loaded.
std::string LoadedMpiVersion(std::string* path);

// The handles of one family's ABI that the start-up agreement needs, for
// code compiled without mpi.h (the front library): MPI_COMM_WORLD,
// MPI_UNSIGNED_LONG_LONG, MPI_MAX and MPI_IN_PLACE as the family's mpi.h
// defines them (MPICH's ABI fixes integers; Open MPI's are the addresses of
// objects in libmpi, looked up in the global scope, then in `mpi`, a
// dlopen handle of libmpi).
struct MpiAbiHandles {
  std::uintptr_t comm_world = 0;
  std::uintptr_t unsigned_long_long = 0;
  std::uintptr_t op_max = 0;
  const void* in_place = nullptr;
};

// Fills *handles for `family`; false when a handle cannot be found (or the
// family is kNeither).
bool FindMpiAbiHandles(MpiFamily family, void* mpi, MpiAbiHandles* handles);

// True on the process a launcher started as rank 0 (PMI_RANK, PMIX_RANK,
// OMPI_COMM_WORLD_RANK or SLURM_PROCID), or when none of them is set: where a
// line printed before MPI_Init should appear.
bool LaunchedAsRankZero();

}  // namespace mla::lib

#endif  // MLA_MPI_FAMILY_H_
