#!/usr/bin/env bash
# Issue 28 on the GPU host: `auto` (the tuned profile, which now also probes
# the system MPI's own algorithms) against `mpi-best` (the fastest of the
# system MPI's default and each of its own algorithms, measured in the same
# run).  Run from the tree's root with the Debian 12 headers the host lacks
# unpacked from .debs/ (libsqlite3-dev, libcli11-dev, nlohmann-json3-dev);
# writes to $OUT.
#   MODE=host   the observed-algorithm tests (host and device buffers), then
#               `multilane tune` of host memory with 8 ranks as 2 virtual nodes
#               (4 per GPU; 4K-64M, --budget 60) and the benchmark with that
#               profile (SKIP_OBSERVED=1: without the tests);
#   MODE=device `multilane tune --memory device` with 1-8 ranks per GPU as 2
#               virtual nodes (4K-64M, --budget 240), then the benchmark of the
#               recommended layout with that profile.
set -uo pipefail
source docs/results/gpu-host-build.sh
gpu_host_build multilane mlprobe mlallreduce_bench mlallreduce mlallreduce_front coll_base_counter profile_choice_app
{ uptime; nproc; mpirun --version | head -1; nvidia-smi -L; } > $OUT/machine-$MODE.txt
run_bench() {  # run_bench NAME NP MEMORY DB [mpirun flags...]
  local name=$1 np=$2 mem=$3 db=$4; shift 4
  $B/launcher/multilane run --db $db -- mpirun --oversubscribe --bind-to none -np $np \
    -x MULTILANE_RANKS_PER_NODE=$((np / 2)) -x MULTILANE_STATS=1 -x NCCL_NVLS_ENABLE "$@" \
    $B/benchmarks/mlallreduce_bench -m $mem -b 4K -e 64M -f 4 -a mpi,mpi-best,auto,passthrough,lane,hier,split \
    -J $OUT/$name.json > $OUT/$name.txt 2>&1
  echo "bench rc=$?" >> $OUT/$name.txt
}
if [ "$MODE" = host ]; then
  [ -n "${SKIP_OBSERVED:-}" ] || ( cd $B && ctest -R "system_algorithms?_observed" --output-on-failure > $OUT/observed.txt 2>&1; echo "rc=$?" >> $OUT/observed.txt )
  [ -n "${SKIP_OBSERVED:-}" ] || tail -12 $OUT/observed.txt
  start=$(date +%s)
  # On a GPU host a launch is (ranks per GPU) x GPUs x nodes: 4 x 1 x 2 = 8 ranks.
  $B/launcher/multilane tune --ranks-per-gpu 4 --virtual-nodes 2 --sizes 4K:64M --budget 60 --db $OUT/host.db \
    > $OUT/tune-host.txt 2>&1
  echo "tune rc=$? wall_s=$(( $(date +%s) - start ))" >> $OUT/tune-host.txt
  $B/launcher/multilane show --db $OUT/host.db > $OUT/show-host.txt 2>&1
  run_bench bench-host-8 8 host $OUT/host.db -x MULTILANE_RANKS_PER_GPU=4
else
  start=$(date +%s)
  $B/launcher/multilane tune --memory device --ranks-per-gpu 1,2,4,8 --virtual-nodes 2 --sizes 4K:64M \
    --budget 240 --db $OUT/device.db > $OUT/tune-device.txt 2>&1
  echo "tune rc=$? wall_s=$(( $(date +%s) - start ))" >> $OUT/tune-device.txt
  $B/launcher/multilane show --db $OUT/device.db > $OUT/show-device.txt 2>&1
  rec=$(sed -n 's/^recommended ranks per GPU: //p' $OUT/tune-device.txt)
  run_bench bench-device-ppg${rec:-2} $((2 * ${rec:-2})) cuda $OUT/device.db -x MULTILANE_RANKS_PER_GPU=${rec:-2}
fi
uptime >> $OUT/machine-$MODE.txt
grep -h -E "tune rc|winner|^host|^device" $OUT/tune-*.txt | head -40
grep -h -E "^ +[0-9]+ .* (mpi|mpi-best|auto) |rc=" $OUT/bench-*.txt
