#!/usr/bin/env bash
# On a GPU host, after `scripts/gpu-run.sh OUTDIR build`: tunes device memory
# over several ranks-per-GPU values (`multilane tune --memory device`, two
# virtual nodes sharing the host's GPUs), shows the profile, then benchmarks
# the tuned profile (`auto`) beside the forced configurations and the staged
# system MPI in one run, at the recommended layout, under MPS when the tune
# used it.  Writes seven files to OUTDIR: tune.txt, tune.err, show.txt,
# bench-auto.txt/.json, the probe's plans and results (tune-files.tar.gz)
# and tune.db.
#   scripts/gpu-tune-bench.sh OUTDIR
# Variables: PPG (1,2,4,8), SIZES (4K:1G), STEP (4), BUDGET (240 s),
# VNODES (2), ALGOS (mpi,auto,lane,hier,split,lane:mpi,split:mpi),
# BENCH_TIMEOUT (300 s), TUNE_FROM (a folder with the tune.db and tune.txt of
# an earlier run: benchmark those, no new tune).
set -euo pipefail
OUT=$(realpath -m "${1:?usage: scripts/gpu-tune-bench.sh OUTDIR}")
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
source scripts/env.sh
export NCCL_NVLS_ENABLE=0
BUILD=build/gpu
ML=$BUILD/launcher/multilane
BENCH=$BUILD/benchmarks/mlallreduce_bench
VNODES=${VNODES:-2}
NGPU=$(nvidia-smi -L | grep -c '^GPU')
DB=$OUT/tune.db
rm -f "$DB"

KEEP=$(mktemp -d /tmp/mla-tune-files.XXXXXX)
trap 'tar czf "$OUT/tune-files.tar.gz" -C "$KEEP" . 2>/dev/null || true' EXIT
start=$(date +%s)
if [ -n "${TUNE_FROM:-}" ]; then
  cp "$TUNE_FROM/tune.db" "$DB"; cp "$TUNE_FROM/tune.txt" "$OUT/tune.txt"
else
"$ML" tune --memory device --ranks-per-gpu "${PPG:-1,2,4,8}" --virtual-nodes "$VNODES" --sizes "${SIZES:-4K:1G}" \
  --step "${STEP:-4}" --budget "${BUDGET:-240}" --db "$DB" --keep "$KEEP" 2> "$OUT/tune.err" | tee "$OUT/tune.txt"
echo "gpu-tune-bench: the tune took $(( $(date +%s) - start )) s (wall, launches included)" | tee -a "$OUT/tune.txt"
fi
"$ML" show --db "$DB" > "$OUT/show.txt"
rec=$(sed -n 's/^recommended ranks per GPU: //p' "$OUT/tune.txt")
mps=$(grep '^multilane-profile' "$OUT/tune.txt" | sed 's/.* mps=\([a-z]*\).*/\1/' | tail -1)
np=$((VNODES * rec * NGPU))
echo "gpu-tune-bench: recommended $rec rank(s) per GPU (mps=$mps): benchmark with $np ranks"

xs=(-x NCCL_NVLS_ENABLE -x MULTILANE_RANKS_PER_NODE)
export MULTILANE_RANKS_PER_NODE=$((np / VNODES))
mpsdir=""
if [ "$mps" = on ] && [ "$rec" -gt 1 ]; then
  mpsdir=$(mktemp -d /tmp/mla-mps.XXXXXX)
  trap 'scripts/mps.sh stop "$mpsdir" >/dev/null 2>&1 || true; tar czf "$OUT/tune-files.tar.gz" -C "$KEEP" . 2>/dev/null || true' EXIT
  scripts/mps.sh start "$mpsdir" >/dev/null
  export CUDA_MPS_PIPE_DIRECTORY=$mpsdir/pipe
  xs+=(-x CUDA_MPS_PIPE_DIRECTORY)
fi
timeout "${BENCH_TIMEOUT:-300}" "$ML" run --db "$DB" --ranks-per-gpu auto -- mpirun -np "$np" --bind-to none --map-by :OVERSUBSCRIBE "${xs[@]}" \
  "$BENCH" -m cuda -b 4K -e "$(SZ=${SIZES:-4K:1G}; echo "${SZ#*:}")" -f "${STEP:-4}" -T 0.3 -a "${ALGOS:-mpi,auto,lane,hier,split,lane:mpi,split:mpi}" \
  -J "$OUT/bench-auto.json" > "$OUT/bench-auto.txt" 2>&1 || { echo "gpu-tune-bench: the benchmark failed"; tail -30 "$OUT/bench-auto.txt"; }
cat "$OUT/bench-auto.txt"
