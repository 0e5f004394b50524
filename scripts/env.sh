# Sourced by the project's scripts: settings for running Open MPI here.
# Open MPI refuses root unless told; CI and the developers' machines run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# More ranks than cores is how the tests and virtual nodes run on small machines:
# Open MPI 4 (ORTE) reads the first, Open MPI 5 (PRRTE) only the second
# (vocab/mpi_families.cc, the launcher generations).
export OMPI_MCA_rmaps_base_oversubscribe=1
export PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
# Waiting ranks: Open MPI 4.1 yields (sched_yield in its progress loop) by
# itself when mpirun counts more ranks than cores (strace, 3 ranks in a
# barrier on 2 cores: 25,000 yields; 2 ranks: none), so mpi_yield_when_idle
# is left to it.  Forced off, 3 ranks spin: mpi_allreduce_np3 took 546 s
# instead of 7.  Forced on for 2 ranks beside two busy loops, each yield
# hands a core to a loop for a time slice: 10-30 s instead of 1-2.4 s.  Where
# nothing tells Open MPI the cores are shared (srun on the test cluster's
# nodes, which claim 8 CPUs), the tests set it (tests/slurm).  MPICH 4.0.2
# (ch4:ucx) never yields: MPIR_CVAR_POLLS_BEFORE_YIELD changes nothing there.
unset OMPI_MCA_mpi_yield_when_idle
# Keep Open MPI quiet about missing high-speed interconnects on a plain host.
export OMPI_MCA_btl_base_warn_component_unused=0
# The default and the package builds compile the same files: where ccache is
# installed, the builds that pass MLA_CCACHE_ARGS to cmake share one cache in
# build/ccache, paths taken relative to the tree and the build folder's name
# left out, so the package build reuses the default build's objects.
export CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
MLA_CCACHE_ARGS=()
if command -v ccache >/dev/null; then
  MLA_CCACHE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# The test command's builds carry line tables only (-g1; CMakeLists.txt,
# MULTILANE_DEBUG_INFO): enough for backtraces and sanitizer reports, a third
# less compile time.
MLA_TEST_BUILD_ARGS=(-DMULTILANE_DEBUG_INFO=lines)
# mla_test_home DIR: the test command's own home (issue 41): HOME and the XDG
# folders multilane and the MPIs read made empty under DIR, and none of the
# variables that move multilane's files; the invoking user's are left alone
# (scripts/outside_files.py checks that they are).  Each CTest test gets one
# more of its own (cmake/MultilaneTestHomes.cmake).
mla_test_home() {
  rm -rf "$1"
  export HOME=$1
  export XDG_STATE_HOME=$1/.local/state XDG_CONFIG_HOME=$1/.config XDG_CACHE_HOME=$1/.cache XDG_DATA_HOME=$1/.local/share
  mkdir -p "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_DATA_HOME"
  unset MULTILANE_USER_DB MULTILANE_SYSTEM_DB MULTILANE_SYSTEM_WORK_DB MULTILANE_HISTORY MULTILANE_REPORT MULTILANE_JOB_KEY
}
# mla_slowest_tests BUILD_DIR: the 12 tests of that build's last CTest run
# that took longest, so that a stage's log says where its time went.
mla_slowest_tests() {
  echo "slowest tests of $1 (s):"
  sort -k3 -gr "$1/Testing/Temporary/CTestCostData.txt" 2>/dev/null | awk 'NF == 3 {printf "  %8.1f  %s\n", $3, $1}' | head -12 || true
}
