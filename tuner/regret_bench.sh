#!/bin/bash
# regret_bench.sh: how much a budgeted tune loses against an exhaustive one.
#
#   tuner/regret_bench.sh [BUILD_DIR] [BUDGET_S]
#   REGRET_MODE=separate tuner/regret_bench.sh [BUILD_DIR] [BUDGET_S]
#
# Runs mlprobe on this machine as 2 virtual nodes of 2 ranks (host memory,
# 4 KiB - 64 MiB, the default candidate space).  Default (REGRET_MODE=compare):
# one `mlprobe --compare` launch that, per size, runs the budgeted successive-
# halving search and right after it an exhaustive sweep, so both see the same
# machine state; the budget applies to the budgeted parts only.
# REGRET_MODE=separate: the old form, a budgeted launch then an --exhaustive
# launch (on a noisy machine the two drift apart).  Then prints the profile of
# the budgeted search, the per-size regret table (mlregret) and the wall times
# of the budgeted tune.  Prints figures; not a test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build/default}
budget=${2:-40}
mode=${REGRET_MODE:-compare}
case "$mode" in
  compare|separate) ;;
  *) echo "regret_bench.sh: REGRET_MODE must be compare or separate, not '$mode'" >&2; exit 2 ;;
esac
source "$here/../scripts/env.sh"
work=$(mktemp -d /tmp/mlregret.XXXXXX)
cat > "$work/plan.json" <<JSON
{"sizes": ["4K", "16K", "64K", "256K", "1M", "4M", "16M", "64M"],
 "memory": "host", "datatype": "fp32", "op": "sum",
 "budget_s": $budget, "reps_per_round": 3, "max_rounds": 4, "noise_floor": 0.03}
JSON
run() {
  mpirun --oversubscribe --bind-to none -np 4 -x MULTILANE_RANKS_PER_NODE=2 \
    "$build/tuner/mlprobe" --plan "$work/plan.json" "$@"
}
if [ "$mode" = compare ]; then
  echo "== compare: per size budgeted (budget ${budget} s over all sizes) then exhaustive, one launch"
  t0=$(date +%s.%N)
  run --compare --out "$work/compare.json" --profile "$work/profile.txt" | grep -v '^progress ' || true
  t1=$(date +%s.%N)
  test -s "$work/compare.json"
else
  echo "== budgeted (budget ${budget} s)"
  t0=$(date +%s.%N)
  run --out "$work/budgeted.json" --profile "$work/profile.txt"
  t1=$(date +%s.%N)
  echo "== exhaustive"
  run --out "$work/exhaustive.json" --exhaustive | tail -n 1
fi
echo "== profile from the budgeted tune"
cat "$work/profile.txt"
echo "== regret"
if [ "$mode" = compare ]; then
  "$build/tuner/mlregret" "$work/compare.json"
  python3 -c 'import json,sys; print("budgeted tune wall time (in the probe, validation + budgeted rounds): %.1f s" % json.load(open(sys.argv[1]))["budgeted_wall_s"])' "$work/compare.json"
  printf 'whole --compare launch incl. mpirun: %.1f s\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
else
  "$build/tuner/mlregret" "$work/budgeted.json" "$work/exhaustive.json"
  printf 'budgeted tune wall time incl. mpirun: %.1f s\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
fi
echo "(files in $work)"
