#!/usr/bin/env bash
# platform-inside.sh: the second platform's suites, run by platform-stage.sh
# inside its Debian 13 root on a copy of the tree (/src).  The default preset
# built and tested as on the first platform, then its Debian packages built,
# linted, installed and tested end to end (as the first platform's package
# stage does); the suites: unit, MPI (Open MPI 5 and MPICH
# 4.2), all-in, Fortran, mpi4py 4, launcher, report and Slurm 24.11 (one node
# and two), except the tests that need what only the first platform installs
# (install-deps.sh --platform says which): LAMMPS, Chromium, valgrind and the
# CUDA toolkit's driver stub.  A skipped test fails the stage, except one
# labelled mpi_limit (the platform's MPI cannot run it bare either).
#
# Usage: platform-inside.sh build|test: build only, or build (up to date) and
# test.
set -euo pipefail
step=${1:-test}
cd /src
bash scripts/install-deps.sh --platform
# shellcheck source=env.sh
source scripts/env.sh
JOBS=$(nproc)
echo "=== multilane, Debian 13: $(/usr/sbin/slurmd -V), $(mpirun --version | head -n 1), MPICH $(mpichversion 2>/dev/null | awk '/Version:/ {print $NF}'), $(g++ --version | head -n 1) ==="
cmake --preset default "${MLA_CCACHE_ARGS[@]}" "${MLA_TEST_BUILD_ARGS[@]}" >/dev/null
cmake --build --preset default -j "$JOBS"
# The packages of this platform (version suffix ~deb13), built by their own
# configuration as on the first platform.
cmake --preset package "${MLA_CCACHE_ARGS[@]}" "${MLA_TEST_BUILD_ARGS[@]}" >/dev/null
cmake --build --preset package -j "$JOBS"
if [ "$step" = build ]; then
  rm -rf build/package/packages
  cpack --preset package >/dev/null
  exit 0
fi
# As on the first platform: the root's own multilane files are left as they
# were (scripts/outside_files.py), the tests run in a home of their own.
outside=/tmp/platform-outside-files.json
python3 scripts/outside_files.py snapshot "$outside"
mla_test_home /tmp/platform-test-home
log=/tmp/platform-ctest.log
rc=0
ctest --preset default -j "$JOBS" -LE '^app$' -E '^(report_html|slurm_valgrind_slurmstepd|CudaDriverLoaded\..*)$' 2>&1 | tee "$log" || rc=$?
mla_slowest_tests build/default
# A skip is not a pass: every test must run, except those labelled mpi_limit
# (the platform's MPI cannot do what they need without multilane either; each
# says why), which are named here.
limited=$(ctest --preset default -N -L '^mpi_limit$' | sed -n 's/^ *Test *#[0-9]*: //p' | sort)
skipped=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (\(Skipped\|Not Run\|Disabled\))$/\1/p' "$log" | sort)
if [ -n "$skipped" ]; then
  unexpected=$(comm -23 <(echo "$skipped") <(echo "$limited"))
  if [ -n "$unexpected" ]; then
    echo "platform-inside: skipped on Debian 13, and a skip is not a pass: $(echo "$unexpected" | paste -sd' ')" >&2
    rc=1
  fi
  expected=$(comm -12 <(echo "$skipped") <(echo "$limited"))
  [ -z "$expected" ] || echo "platform-inside: not run, as this platform's MPI cannot do what they need (label mpi_limit): $(echo "$expected" | paste -sd' ')"
fi
[ "$rc" = 0 ] || exit "$rc"
# The packages: linted by this platform's lintian, installed with apt-get and
# tested end to end from the installed paths with the tree hidden, a Slurm
# 24.11 job running an algorithm from them included (tests/install/deb_e2e.sh).
[ -n "$(ls build/package/packages/*.deb 2>/dev/null)" ] || { rm -rf build/package/packages; cpack --preset package >/dev/null; }
ls -l build/package/packages/*.deb
lintian --fail-on error,warning build/package/packages/*.deb
bash tests/install/deb_e2e.sh build/package/packages
python3 scripts/outside_files.py compare "$outside"
