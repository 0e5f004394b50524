#!/bin/bash
# build_overhead.sh: whether a change of the code made the library's own
# path slower.  Runs the 8-byte row of two builds' mlallreduce_bench
# alternately (A/B, then B/A, ...) so that drift of a noisy machine falls on
# both, and prints per build the median time per call of `mpi` (PMPI_Allreduce
# directly), `passthrough` (mla_allreduce_with: the library's dispatch) and
# `auto` (mla_allreduce: what an application's MPI_Allreduce gets, profile
# look-up included), and the ratios to `mpi` measured in the same run.
#
# Usage: benchmarks/build_overhead.sh BUILD_A BUILD_B      (two build folders)
# Environment (all optional):
#   NP=4 REPS=7 ITERS=20000 SIZE=8
#   MPIRUN="mpirun --oversubscribe --bind-to none"   (--bind-to core where there are cores enough)
#   PROFILE=    a MULTILANE_PROFILE for `auto` (default: one that keeps the system MPI)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: build_overhead.sh BUILD_A BUILD_B" >&2; exit 2; }
for b in "$1" "$2"; do
  [ -x "$b/benchmarks/mlallreduce_bench" ] || { echo "build_overhead.sh: no $b/benchmarks/mlallreduce_bench: build it first" >&2; exit 2; }
done
source "$here/scripts/env.sh"
NP=${NP:-4}; REPS=${REPS:-7}; ITERS=${ITERS:-20000}; SIZE=${SIZE:-8}
MPIRUN=${MPIRUN:-mpirun --oversubscribe --bind-to none}
PROFILE=${PROFILE:-"multilane-profile 1;host 0 inf passthrough"}
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

run() {  # run LABEL BUILD
  # shellcheck disable=SC2086
  $MPIRUN -np "$NP" -x MULTILANE_PROFILE="$PROFILE" "$2/benchmarks/mlallreduce_bench" -b "$SIZE" -e "$SIZE" \
    -t int32 -a mpi,passthrough,auto -n "$ITERS" -w 1000 |
    awk -v label="$1" '!/^#/ && NF >= 10 { print label, $5, $6 }' >> "$rows"
}

for rep in $(seq 1 "$REPS"); do
  if [ $((rep % 2)) -eq 1 ]; then run A "$1"; run B "$2"; else run B "$2"; run A "$1"; fi
done

python3 - "$rows" "$1" "$2" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"# {len(rows)} rows; A = {sys.argv[2]}, B = {sys.argv[3]}; median time per call (us) over the runs")
print(f"{'build':>5} {'mpi':>9} {'passthrough':>12} {'auto':>9} {'pass/mpi':>9} {'auto/mpi':>9}")
for label in ("A", "B"):
    t = {a: statistics.median(float(r[2]) for r in rows if r[0] == label and r[1] == a)
         for a in ("mpi", "passthrough", "auto")}
    print(f"{label:>5} {t['mpi']:9.3f} {t['passthrough']:12.3f} {t['auto']:9.3f} "
          f"{t['passthrough'] / t['mpi']:9.3f} {t['auto'] / t['mpi']:9.3f}")
PY
