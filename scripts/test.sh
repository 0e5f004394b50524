#!/usr/bin/env bash
# The test command: installs dependencies, checks the layout of the C and
# C++ files (scripts/check_format.sh), builds the default and the
# sanitizer (ASan/UBSan) presets and runs every test of both with CTest, the
# SMPI simulation build's reduction check, then
# the ThreadSanitizer preset's thread tests (label threads) and each fuzz
# target for 10 s (scripts/fuzz.sh), and last the second platform: the suites
# again in a Debian 13 root (scripts/platform-stage.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
# Files outside the tree: the invoking user's multilane folders and the
# system's, recorded now and compared at the end (scripts/outside_files.py);
# a run that changed any fails, naming what changed.  The run itself gets a
# home of its own (scripts/env.sh: mla_test_home).
mkdir -p build
outside=build/outside-files.json
python3 scripts/outside_files.py snapshot "$outside"
mla_test_home "$PWD/build/test-command-home"
JOBS=$(nproc)
# stage TEXT: the stage's heading, with the time spent so far and how much
# of it the cores sat idle (core-seconds, from /proc/stat: room left for the
# background stage).
idle0=$(awk '/^cpu /{print $5 + $6}' /proc/stat)
stage() {
  local idle; idle=$(awk -v t0="$idle0" '/^cpu /{printf "%d", ($5 + $6 - t0) / 100}' /proc/stat)
  echo "=== multilane: $* ($(date -u +%H:%M:%S) UTC, ${SECONDS} s in, ${idle} core-s idle) ==="
}

# The second platform in the background: its root comes from Debian's
# archive (mostly download and unpacking) while this platform builds; once
# this platform's default build is done (build/platform-go), the tree is
# built in that root on the cores this platform's tests leave idle; once
# this platform's default tests are done (build/platform-test-go: every
# Slurm test of this platform has run) its suites run there, beside this
# platform's later stages, whose Slurm (the packages' end-to-end test) uses
# the default ports: the root's clusters get ports of their own
# (MLA_SLURMCTLD_PORT, MLA_SLURMD_PORT) and munged, spool and namespaces of
# their own.  Most of its tests run one at a time and leave a core idle
# (550 of its 590 s, measured); the later stages here fill it.
# SCHED_IDLE for the build, not nice 19: an oversubscribed Open MPI rank
# yields its core while it waits, and the kernel hands a yielded core to a
# nice-19 compiler for a whole time slice; with the build at nice 19 the MPI
# tests here ran 3-10 times slower (mpi_allreduce_np3: 2.8 s idle, 16.9 s
# beside two nice-19 busy loops, 4.6 s beside two SCHED_IDLE ones).  Once
# this platform's default tests end, the build still running is promoted to
# the normal priority (promote_tree), and its tests run at the normal
# priority, as this platform's do.
# Its exit status goes to a file of its own: bash forgets a finished
# background job's status when one of its later children is given the same
# PID (with pid_max 32768 a 40-minute run wraps PIDs many times), and `wait`
# then answers 127 for a build that passed.
platform_log=build/platform-background.log
platform_rc=build/platform-background.rc
rm -f build/platform-go build/platform-test-go "$platform_rc"
chrt --idle 0 ionice -c 3 bash -c 'rc=0
         bash scripts/platform-stage.sh prepare || rc=$?
         if [ "$rc" = 0 ]; then
           while [ ! -e build/platform-go ]; do sleep 5; done
           bash scripts/platform-stage.sh build || rc=$?
         fi
         if [ "$rc" = 0 ]; then
           while [ ! -e build/platform-test-go ]; do sleep 5; done
           echo "platform-stage: Debian 13 suites start ($(date -u +%H:%M:%S) UTC)"
           MLA_SLURMCTLD_PORT=17817 MLA_SLURMD_PORT=17818 \
             chrt --other 0 ionice -c 2 bash scripts/platform-stage.sh test || rc=$?
           echo "platform-stage: Debian 13 suites end ($(date -u +%H:%M:%S) UTC)"
         fi
         echo "$rc" > "$1"' bash "$platform_rc" > "$platform_log" 2>&1 &
platform_background=$!
# promote_tree PID...: each PID and every process under it (parents first, so
# what they start later inherits it) to the normal scheduling class and I/O
# priority.  Once this platform's default tests are done, the second
# platform's build, still running at SCHED_IDLE, would otherwise wait for the
# ASan build's cores and start its suites last, the run's critical path
# (measured: 10 min after this platform's tests ended).
promote_tree() {
  local pid
  for pid in "$@"; do
    chrt --other -a -p 0 "$pid" 2>/dev/null || true
    ionice -c 2 -p "$pid" 2>/dev/null || true
    # shellcheck disable=SC2046  # the children's PIDs, one word each
    promote_tree $(cat /proc/"$pid"/task/*/children 2>/dev/null)
  done
}
# On the way out, also after a failed stage: what the run changed outside
# the tree is shown (the end of the run checks it and fails on it).
on_exit() {
  kill "$platform_background" 2>/dev/null && bash scripts/platform-stage.sh stop || true
  [ -n "${outside_checked:-}" ] || python3 scripts/outside_files.py compare "$outside" || true
}
trap on_exit EXIT

# The layout first (seconds): every C and C++ file as .clang-format says,
# with Debian 12's clang-format 14.
stage "layout: clang-format (scripts/check_format.sh)"
bash scripts/check_format.sh

for preset in default asan; do
  stage "build and test, preset '$preset'"
  if [ "$preset" = default ]; then cmake --preset default "${MLA_CCACHE_ARGS[@]}" "${MLA_TEST_BUILD_ARGS[@]}" >/dev/null; else cmake --preset "$preset" "${MLA_TEST_BUILD_ARGS[@]}" >/dev/null; fi
  cmake --build --preset "$preset" -j "$JOBS"
  touch build/platform-go
  ctest --preset "$preset" -j "$JOBS"
  mla_slowest_tests "build/$preset"
  if [ ! -e build/platform-test-go ]; then
    touch build/platform-test-go
    promote_tree "$platform_background"
  fi
done

# The simulation build (SimGrid/SMPI, simulation/): the benchmark and the host
# algorithms compiled with smpicxx; its test runs them on 4 simulated nodes and
# checks every rank's result is the real reduction (docs/scale.md).
stage "simulation build and its reduction check (preset 'simulation')"
cmake --preset simulation >/dev/null
cmake --build --preset simulation -j "$JOBS"
ctest --preset simulation -j "$JOBS"

# The Debian packages, built by a configuration of their own (prefix /usr,
# no tests), checked with lintian, installed with apt-get and tested end to
# end against the installed paths with the source tree hidden
# (tests/install/deb_e2e.sh); removing them must leave the system database.
stage "Debian packages: build, lintian, install, end-to-end test, remove"
cmake --preset package "${MLA_CCACHE_ARGS[@]}" "${MLA_TEST_BUILD_ARGS[@]}" >/dev/null
cmake --build --preset package -j "$JOBS"
rm -rf build/package/packages
cpack --preset package >/dev/null
ls -l build/package/packages/*.deb
lintian --fail-on error,warning build/package/packages/*.deb
bash tests/install/deb_e2e.sh build/package/packages

stage "ThreadSanitizer, the tests that run threads (preset 'tsan')"
cmake --preset tsan "${MLA_TEST_BUILD_ARGS[@]}" >/dev/null
cmake --build --preset tsan -j "$JOBS"
ctest --preset tsan -j "$JOBS"

stage "fuzz every parser of outside input, 10 s each (preset 'fuzz')"
bash scripts/fuzz.sh 10

# The second platform (Debian 13: Slurm 24.11, Open MPI 5, MPICH 4.2, g++ 14)
# in a root made with mmdebstrap: the default preset's suites, Slurm included,
# and its packages end to end; not the sanitizer, fuzz and simulation stages
# (those check multilane's own code, the same on both platforms).  It ran in
# the background since this platform's default tests ended; its output is
# shown here.
stage "second platform: Debian 13 root, default preset, every suite, the packages (scripts/platform-stage.sh)"
wait "$platform_background" 2>/dev/null || true
cat "$platform_log"
rc=$(cat "$platform_rc" 2>/dev/null || echo "unknown: the background stage left no $platform_rc")
[ "$rc" = 0 ] || { echo "platform-stage: the Debian 13 stage failed (exit $rc); its output is above" >&2; exit 1; }
# After the package stages, which install into /var/lib/multilane and
# /etc/slurm and must remove what they made (tests/install/deb_e2e.sh).
stage "files outside the tree: as they were before the run (scripts/outside_files.py)"
outside_checked=1
python3 scripts/outside_files.py compare "$outside"
stage "done"
