# The library's host sources (no CUDA), shared by the library target
# (libmlallreduce/CMakeLists.txt) and the SMPI simulation build (simulation/);
# with the shared vocabulary (vocab/sources.cmake).
set(MLA_LIBRARY_SOURCES
  atomic_file.cc
  ballot.cc
  ballot_reader.cc
  buffer_kinds.cc
  config.cc
  profile_file.cc
  call_support.cc
  comm_scope.cc
  cuda_presence.cc
  device_loader.cc
  dispatch.cc
  gpu_sampler.cc
  intercept.cc
  intercept_allreduce.cc
  intercept_entries.cc
  intercept_fortran.cc
  job_report.cc
  job_report_render.cc
  loaded_symbol.cc
  log.cc
  mpi_family.cc
  one_program.cc
  partition.cc
  pmix_channel.cc
  stats.cc
  system_choice.cc
  tool_device.cc
  topology.cc
  algo_fold.cc
  algo_hier.cc
  algo_three_step.cc
  runtime.cc
  startup.cc
)
list(TRANSFORM MLA_LIBRARY_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)

# The front libmlallreduce.so (front/), with what it shares with the family
# builds; also built as another version's front by tests/all_in/.
set(MLA_FRONT_SOURCES front/front.cc front/front_entries.cc mpi_family.cc startup.cc ballot.cc ballot_reader.cc pmix_channel.cc
  loaded_symbol.cc)
list(TRANSFORM MLA_FRONT_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
