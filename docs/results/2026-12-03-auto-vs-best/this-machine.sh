#!/usr/bin/env bash
# Issue 28 on the build machine (2 cores, Open MPI 4.1.4): `multilane tune` of
# host memory, 4 ranks as 2 virtual nodes, 4K-64M, --budget 60 (the tune now
# probes the system MPI's own algorithms beside multilane's), then three runs
# of the benchmark with that profile: `mpi` (the system's default), `mpi-best`
# (the fastest of its default and each of its own algorithms, measured in the
# same run) and `auto` (the profile's choice) side by side.  4 ranks on 2
# cores are oversubscribed: three runs show the noise.  Run from the tree's
# root after a default build; writes to OUT (default docs/results/2026-12-03-auto-vs-best).
set -euo pipefail
OUT=${OUT:-docs/results/2026-12-03-auto-vs-best}
B=${BUILD:-build/default}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
DB=$(mktemp -d)/host.db
start=$(date +%s)
$B/launcher/multilane tune --np 4 --virtual-nodes 2 --sizes 4K:64M --budget 60 --db $DB --allow-oversubscribed \
  > $OUT/this-machine-tune.txt 2>&1
echo "tune wall_s=$(( $(date +%s) - start ))" >> $OUT/this-machine-tune.txt
for i in 1 2 3; do
  $B/launcher/multilane run --db $DB -- mpirun --oversubscribe -np 4 -x MULTILANE_RANKS_PER_NODE=2 \
    $B/benchmarks/mlallreduce_bench -b 4K -e 64M -f 4 -a mpi,mpi-best,auto -J $OUT/this-machine-bench-$i.json \
    > $OUT/this-machine-bench-$i.txt 2>&1
done
/usr/bin/python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
runs = [json.load(open(f"{out}/this-machine-bench-{i}.json")) for i in (1, 2, 3)]
def rows(r):
    return {(x["size"], x["algo"]): x for x in r["results"]}
print("| size | auto vs_mpi (3 runs) | auto vs_best (3 runs) | median vs_best | which of the system's won (run 1) |")
print("| ---: | --- | --- | ---: | --- |")
for b in sorted({x["size"] for x in runs[0]["results"]}):
    vm = [rows(r)[(b, "auto")]["vs_mpi"] for r in runs]
    vb = [rows(r)[(b, "auto")]["vs_best"] for r in runs]
    won = rows(runs[0])[(b, "mpi-best")].get("ran_as", "")
    size = f"{b // 1048576} MiB" if b >= 1048576 else f"{b // 1024} KiB"
    print(f"| {size} | {' '.join(f'{v:.2f}' for v in vm)} | {' '.join(f'{v:.2f}' for v in vb)} | "
          f"{statistics.median(vb):.2f} | {won} |")
PY
