# The library's host sources (no CUDA), shared by the library target
# (libmlallreduce/CMakeLists.txt) and the SMPI simulation build (simulation/);
# with the shared vocabulary (vocab/sources.cmake).  One list per room, from
# the bottom up (CONTRIBUTING.md, "Where things live").
set(MLA_LIBRARY_SOURCES
  base/cuda_presence.cc
  base/loaded_symbol.cc
  base/log.cc
  base/partition.cc
  base/stats.cc
  base/thread_counts.cc
  startup/ballot.cc
  startup/ballot_reader.cc
  startup/ballot_summary.cc
  startup/ballot_tree.cc
  startup/comm_scope.cc
  startup/config.cc
  startup/mpi_family.cc
  startup/one_program.cc
  startup/pmix_channel.cc
  startup/profile_file.cc
  startup/separate_worlds.cc
  startup/startup.cc
  shm/local_reduce.cc
  shm/node_allreduce.cc
  shm/node_area.cc
  shm/segment_file.cc
  shm/single_copy.cc
  shm/stale_segments.cc
  jobreport/gpu_sampler.cc
  jobreport/job_report.cc
  jobreport/job_report_render.cc
  algorithms/algo_fold.cc
  algorithms/algo_hier.cc
  algorithms/algo_three_step.cc
  algorithms/call_support.cc
  algorithms/node_shm.cc
  algorithms/system_choice.cc
  algorithms/topology.cc
  device/buffer_kinds.cc
  c_api_names.cc
  device_loader.cc
  dispatch.cc
  quick_route.cc
  runtime.cc
  tool_device.cc
  intercept/intercept.cc
  intercept/intercept_allreduce.cc
  intercept/intercept_entries.cc
  intercept/intercept_fortran.cc
)
list(TRANSFORM MLA_LIBRARY_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)

# The front libmlallreduce.so (front/), with what it shares with the family
# builds; also built as another version's front by tests/all_in/.
set(MLA_FRONT_SOURCES front/front.cc front/front_entries.cc startup/mpi_family.cc startup/startup.cc
  startup/ballot.cc startup/ballot_reader.cc startup/ballot_summary.cc startup/ballot_tree.cc startup/pmix_channel.cc
  base/loaded_symbol.cc)
list(TRANSFORM MLA_FRONT_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
