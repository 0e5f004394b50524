#!/usr/bin/env bash
# platform-inside.sh: the second platform's suites, run by platform-stage.sh
# inside its Debian 13 root on a copy of the tree (/src).  The default preset
# built and tested as on the first platform: unit, MPI (Open MPI 5 and MPICH
# 4.2), all-in, Fortran, mpi4py 4, launcher, report and Slurm 24.11 (one node
# and two), except the tests that need what only the first platform installs
# (install-deps.sh --platform says which): LAMMPS, Chromium, valgrind and the
# CUDA toolkit's driver stub.  A skipped test fails the stage.
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
cmake --preset default >/dev/null
cmake --build --preset default -j "$JOBS"
[ "$step" = build ] && exit 0
log=/tmp/platform-ctest.log
rc=0
ctest --preset default -j "$JOBS" -LE '^app$' -E '^(report_html|slurm_valgrind_slurmstepd|CudaDriverLoaded\..*)$' 2>&1 | tee "$log" || rc=$?
if grep -q -E '\*\*\*Skipped|Not Run' "$log"; then
  echo "platform-inside: a test was skipped on Debian 13 (above): a skip is not a pass" >&2
  rc=1
fi
exit "$rc"
