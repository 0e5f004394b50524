#!/bin/bash
# regret_bench.sh: how much a budgeted tune loses against an exhaustive one.
#
#   tuner/regret_bench.sh [BUILD_DIR] [BUDGET_S]
#
# Runs mlprobe on this machine as 2 virtual nodes of 2 ranks (host memory,
# 4 KiB - 64 MiB, the default candidate space), once with successive halving
# within the budget and once --exhaustive, then prints the per-size regret
# table (mlregret) and the wall time of the budgeted tune.  Prints figures;
# not a test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build/default}
budget=${2:-40}
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
echo "== budgeted (budget ${budget} s)"
t0=$(date +%s.%N)
run --out "$work/budgeted.json" --profile "$work/profile.txt"
t1=$(date +%s.%N)
echo "== exhaustive"
run --out "$work/exhaustive.json" --exhaustive | tail -n 1
echo "== profile from the budgeted tune"
cat "$work/profile.txt"
echo "== regret"
"$build/tuner/mlregret" "$work/budgeted.json" "$work/exhaustive.json"
printf 'budgeted tune wall time incl. mpirun: %.1f s\n' "$(echo "$t1 - $t0" | bc -l)"
echo "(files in $work)"
