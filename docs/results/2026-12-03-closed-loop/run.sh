#!/bin/bash
# The job report of the closed loop (docs/history.md "A worked example"), on
# this machine without Slurm: the communication-heavy test job (loop_job) run
# under one job key at 1 and then 2 ranks per GPU (2 and 4 ranks, 2 "GPUs"),
# each with its report on (after a short tune, so that the library runs); then `multilane report` of the second run, as text
# and as a page, and a screenshot of the page (headless Chromium).
#
#   BUILD=build/default OUT=DIR bash docs/results/2026-12-03-closed-loop/run.sh
set -euo pipefail
B=$(realpath "${BUILD:-build/default}")
OUT=$(realpath -m "${OUT:?set OUT to a folder}")
mkdir -p "$OUT/reports"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export MULTILANE_USER_DB=$OUT/state/user.db MULTILANE_REPORT=$OUT/reports MULTILANE_JOB_KEY=comm-split
# A short tune of this machine (host memory), so that the runs go through the library.
"$B/launcher/multilane" tune --db "$MULTILANE_USER_DB" --budget 5 --sizes 4M:16M --np 2 --memory host \
  --allow-oversubscribed > "$OUT/tune.txt" 2>&1
for ppg in 1 2; do
  "$B/launcher/multilane" run --ranks-per-gpu "$ppg" -- \
    mpirun -np $((2 * ppg)) "$B/tests/slurm/loop_job" 40 16777216 58 split
done
last=$(ls -t "$OUT"/reports/*.json | head -1)
"$B/launcher/multilane" report "$last" > "$OUT/report.txt"
"$B/launcher/multilane" report --html "$OUT/report.html" "$last"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,3400 \
  --screenshot="$OUT/report.png" "file://$OUT/report.html" 2>/dev/null
