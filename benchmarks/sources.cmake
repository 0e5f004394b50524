# mlallreduce_bench's sources, shared by the benchmark target
# (benchmarks/CMakeLists.txt) and the SMPI simulation build (simulation/).
set(MLA_BENCH_SOURCES
  allreduce_bench.cc
  bench.cc
  bound.cc
  memkind.cc
  options.cc
  overhead.cc
  run_info.cc
  validate.cc
)
list(TRANSFORM MLA_BENCH_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
