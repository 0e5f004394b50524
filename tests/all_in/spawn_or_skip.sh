#!/usr/bin/env bash
# spawn_or_skip.sh SPAWN_PROGRAM LAUNCHER [LAUNCHER FLAGS...] -- CHECK COMMAND...
# Runs the check command when this MPI can spawn at all (one parent, one
# child, no multilane, within 60 s); else exits 77, which CTest shows as
# skipped, never as passed.  Tests that use it carry the label mpi_limit,
# the only skips the second platform's stage accepts.  Seen refusing every
# MPI_Comm_spawn without multilane: Debian 12's MPICH 4.0.2 and Debian 13's
# 4.2.1 (ch4:ucx, "Error in spawn call").
set -uo pipefail
program=$1
shift
launcher=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do launcher+=("$1"); shift; done
[ $# -gt 1 ] || { echo "spawn_or_skip: no '--' CHECK COMMAND" >&2; exit 2; }
shift
if ! out=$(env -u LD_PRELOAD timeout -k 5 60 "${launcher[@]}" -n 1 "$program" 1 -u LD_PRELOAD 2>&1); then
  echo "spawn_or_skip: this MPI cannot spawn without multilane either, so the case cannot run here:" >&2
  echo "$out" | tail -5 >&2
  exit 77
fi
exec "$@"
