# The file names of each MPI family's build, spelled here only: the targets
# take them (OUTPUT_NAME), and vocab/ reads them from the header this writes
# (vocab/family_files.h.in; mla::FamilyLibraryFile and friends).  No MPI
# needed: the simulation build includes it too.
#
#   MULTILANE_KNOWN_FAMILIES   every family vocab/mpi_families.cc knows, built
#                              or not, the default family (whose programs
#                              carry no suffix) first
#   multilane_family_files(<family>)
#       sets MLA_FAMILY_LIBRARY, MLA_FAMILY_CUDA_MODULE, MLA_FAMILY_PROBE and
#       MLA_FAMILY_BENCH in the caller (OUTPUT_NAMEs: no "lib", no ".so")
#   multilane_family_files_header(<dir>)
#       writes <dir>/vocab/family_files.h, a row of file names per family
include_guard(GLOBAL)
set(MULTILANE_KNOWN_FAMILIES openmpi mpich)

function(multilane_family_files family)
  list(GET MULTILANE_KNOWN_FAMILIES 0 default_family)
  if(family STREQUAL default_family)
    set(tail "")
  else()
    set(tail "-${family}")
  endif()
  set(MLA_FAMILY_LIBRARY mlallreduce-${family} PARENT_SCOPE)
  set(MLA_FAMILY_CUDA_MODULE mlallreduce_cuda${tail} PARENT_SCOPE)
  set(MLA_FAMILY_PROBE mlprobe${tail} PARENT_SCOPE)
  set(MLA_FAMILY_BENCH mlallreduce_bench${tail} PARENT_SCOPE)
endfunction()

function(multilane_family_files_header dir)
  set(MLA_FAMILY_FILE_ROWS "")
  foreach(family IN LISTS MULTILANE_KNOWN_FAMILIES)
    multilane_family_files(${family})
    # The library carries its SOVERSION (the project's major version); the
    # CUDA module is a plain module (PREFIX "lib").
    string(APPEND MLA_FAMILY_FILE_ROWS
      "    {\"${family}\", \"${CMAKE_SHARED_LIBRARY_PREFIX}${MLA_FAMILY_LIBRARY}${CMAKE_SHARED_LIBRARY_SUFFIX}.${PROJECT_VERSION_MAJOR}\",\n"
      "     \"lib${MLA_FAMILY_CUDA_MODULE}${CMAKE_SHARED_MODULE_SUFFIX}\", \"${MLA_FAMILY_PROBE}\"},\n")
  endforeach()
  configure_file(${PROJECT_SOURCE_DIR}/vocab/family_files.h.in ${dir}/vocab/family_files.h @ONLY)
endfunction()
