# MPI families: multilane builds its MPI parts (the library, mlprobe, the
# benchmark and the MPI tests) once per MPI family, from the same sources
# (docs/admin.md, "MPI families").
#
#   openmpi  Open MPI, found by find_package(MPI) (Debian's default MPI)
#   mpich    MPICH and the MPIs of its ABI (Debian's mpich + libmpich-dev),
#            located explicitly, never through the mpicc/mpirun on PATH,
#            which Debian's alternatives may point at either family
#
# Results:
#   MULTILANE_MPI_FAMILIES        the families built (openmpi first)
#   multilane_mpi_openmpi         INTERFACE target: Open MPI headers and library
#   multilane_mpi_mpich           INTERFACE target: MPICH headers and library
#   multilane_mpi_mpich_headers   INTERFACE target: MPICH headers only (the
#                                 library takes PMPI_* from the process's MPI)
#   MULTILANE_MPICH_MPIEXEC       hydra's mpiexec (mpiexec.mpich)
#
# multilane_family_suffix(<out> <family>): "" for openmpi (the historical target
# names), "_mpich" for mpich.
#
# The file names of each family's build: cmake/MultilaneFamilyFiles.cmake.
include(${CMAKE_CURRENT_LIST_DIR}/MultilaneFamilyFiles.cmake)
set(MULTILANE_MPICH "AUTO" CACHE STRING "Build the MPICH family too: AUTO (when installed), ON or OFF")

add_library(multilane_mpi_openmpi INTERFACE)
target_link_libraries(multilane_mpi_openmpi INTERFACE MPI::MPI_C)
set(MULTILANE_MPI_FAMILIES openmpi)

if(NOT MULTILANE_MPICH STREQUAL "OFF")
  find_path(MULTILANE_MPICH_INCLUDE_DIR mpi.h
    PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/mpich /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/mpich/include
    NO_DEFAULT_PATH DOC "MPICH's mpi.h (Debian: libmpich-dev)")
  find_library(MULTILANE_MPICH_LIBRARY NAMES mpich
    PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/mpich/lib
    NO_DEFAULT_PATH DOC "MPICH's libmpich.so (Debian: libmpich-dev)")
  find_program(MULTILANE_MPICH_MPIEXEC NAMES mpiexec.mpich mpiexec.hydra
    DOC "MPICH's hydra mpiexec (Debian: mpich)")
  if(MULTILANE_MPICH_INCLUDE_DIR AND MULTILANE_MPICH_LIBRARY AND MULTILANE_MPICH_MPIEXEC)
    add_library(multilane_mpi_mpich_headers INTERFACE)
    target_include_directories(multilane_mpi_mpich_headers SYSTEM INTERFACE ${MULTILANE_MPICH_INCLUDE_DIR})
    add_library(multilane_mpi_mpich INTERFACE)
    target_link_libraries(multilane_mpi_mpich INTERFACE multilane_mpi_mpich_headers ${MULTILANE_MPICH_LIBRARY})
    list(APPEND MULTILANE_MPI_FAMILIES mpich)
  elseif(MULTILANE_MPICH STREQUAL "ON")
    message(FATAL_ERROR "MULTILANE_MPICH=ON but MPICH was not found (mpi.h: ${MULTILANE_MPICH_INCLUDE_DIR}, "
                        "libmpich: ${MULTILANE_MPICH_LIBRARY}, mpiexec: ${MULTILANE_MPICH_MPIEXEC}); "
                        "apt-get install mpich libmpich-dev (scripts/install-deps.sh)")
  endif()
endif()
message(STATUS "multilane: MPI families ${MULTILANE_MPI_FAMILIES}")

function(multilane_family_suffix out family)
  list(GET MULTILANE_KNOWN_FAMILIES 0 default_family)
  if(family STREQUAL default_family)
    set(${out} "" PARENT_SCOPE)
  else()
    set(${out} "_${family}" PARENT_SCOPE)
  endif()
endfunction()

