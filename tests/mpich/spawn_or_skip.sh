#!/usr/bin/env bash
# spawn_or_skip.sh MPIEXEC SPAWN_PROGRAM -- CHECK COMMAND...
# Runs the check command when this MPICH can spawn at all (one parent, one
# child, no multilane); else exits 77, which CTest shows as skipped, never as
# passed.  Debian 12's MPICH 4.0.2 (ch4:ucx) refuses every MPI_Comm_spawn
# ("Error in spawn call"), with or without multilane.
set -uo pipefail
mpiexec=$1 program=$2
shift 2
[ "${1:-}" = "--" ] && shift
if ! out=$(env -u LD_PRELOAD timeout 60 "$mpiexec" -n 1 "$program" 1 -u LD_PRELOAD 2>&1); then
  echo "spawn_or_skip: this MPICH cannot spawn without multilane either, so the case cannot run here:" >&2
  echo "$out" | tail -3 >&2
  exit 77
fi
exec "$@"
