#!/bin/bash
# report_overhead.sh: what the job report (MULTILANE_REPORT) costs per
# MPI_Allreduce.  Runs mlallreduce_bench with the report off and on,
# alternately (off/on, then on/off, ...) so that drift of a noisy machine
# falls on both, and prints per size the median time per call of each and
# their ratio.
#
# Usage: benchmarks/report_overhead.sh [BUILD_DIR]        (default build/default)
# Environment (all optional):
#   NP=4            ranks (mpirun -np)
#   REPS=5          runs of each setting
#   MIN=4K MAX=4M FACTOR=4   the sizes (mlallreduce_bench -b/-e/-f)
#   ALGO=auto       the benchmark's algorithm: auto is mla_allreduce, i.e. what an
#                   application's MPI_Allreduce gets (the system MPI without a profile)
#   SAMPLE=         MULTILANE_REPORT_SAMPLE for the "on" runs (default: the library's, 64)
#   BENCH_ARGS=     more mlallreduce_bench options (e.g. "-n 2000")
#   MPIRUN="mpirun --oversubscribe --bind-to none"   (--bind-to core where there are
#                   cores enough: far less noise)
# Prints the table on stdout; the raw rows go to $OUT (default: a temporary file).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build/default}
bench=$build/benchmarks/mlallreduce_bench
[ -x "$bench" ] || { echo "report_overhead.sh: no $bench: build the target mlallreduce_bench first" >&2; exit 2; }
source "$here/scripts/env.sh"
NP=${NP:-4}; REPS=${REPS:-5}; MIN=${MIN:-4K}; MAX=${MAX:-4M}; FACTOR=${FACTOR:-4}; ALGO=${ALGO:-auto}
MPIRUN=${MPIRUN:-mpirun --oversubscribe --bind-to none}
reports=$(mktemp -d)
OUT=${OUT:-$reports/rows.txt}
trap 'rm -rf "$reports"' EXIT
: > "$OUT"

run() {  # run off|on rep
  local setting=$1 rep=$2
  local env=(env -u MULTILANE_REPORT -u MULTILANE_REPORT_SAMPLE)
  if [ "$setting" = on ]; then
    env+=(MULTILANE_REPORT="$reports")
    [ -n "${SAMPLE:-}" ] && env+=(MULTILANE_REPORT_SAMPLE="$SAMPLE")
  fi
  # shellcheck disable=SC2086
  "${env[@]}" $MPIRUN -np "$NP" "$bench" -b "$MIN" -e "$MAX" -f "$FACTOR" -a "$ALGO" -z 0 ${BENCH_ARGS:-} 2>/dev/null |
    awk -v s="$setting" -v r="$rep" '!/^#/ && NF >= 6 { print s, r, $1, $6 }' >> "$OUT"
}

for rep in $(seq 1 "$REPS"); do
  if [ $((rep % 2)) = 1 ]; then run off "$rep"; run on "$rep"; else run on "$rep"; run off "$rep"; fi
  echo "report_overhead.sh: round $rep of $REPS done" >&2
done
n_reports=$(find "$reports" -name 'multilane-report-*.json' | wc -l)
[ "$n_reports" = "$REPS" ] || echo "report_overhead.sh: warning: $n_reports report files for $REPS runs with the report on" >&2

/usr/bin/python3 - "$OUT" "$NP" "$REPS" "$ALGO" <<'PY'
import statistics, sys
path, np_, reps, algo = sys.argv[1:5]
t = {}
for line in open(path):
    s, r, size, us = line.split()
    t.setdefault((int(size), s), []).append(float(us))
print("# job report overhead: mlallreduce_bench -a %s, %s ranks, median of %s runs per setting" % (algo, np_, reps))
print("# median and least time per call over the runs; on/off of the medians and of the least times")
print("# %10s %10s %10s %8s %10s %10s %8s" % ("size (B)", "off (us)", "on (us)", "on/off", "off min", "on min", "on/off"))
for size in sorted({k[0] for k in t}):
    off, on = t.get((size, "off"), []), t.get((size, "on"), [])
    if not off or not on:
        continue
    mo, mn = statistics.median(off), statistics.median(on)
    print("  %10d %10.2f %10.2f %8.3f %10.2f %10.2f %8.3f" % (size, mo, mn, mn / mo, min(off), min(on),
                                                            min(on) / min(off)))
PY
