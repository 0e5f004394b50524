# The shared vocabulary's sources, for the library target (vocab/CMakeLists.txt)
# and the SMPI simulation build, which compiles everything with smpicxx.
set(MLA_VOCAB_SOURCES
  algo_names.cc
  atomic_file.cc
  byte_size.cc
  elf_needed.cc
  job_key.cc
  json_text.cc
  mpi_families.cc
  outside_input.cc
  price.cc
  profile.cc
  ranks_per_gpu.cc
  terminal_text.cc
  utc_time.cc
  verbose_level.cc
  user_options.cc
)
list(TRANSFORM MLA_VOCAB_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
