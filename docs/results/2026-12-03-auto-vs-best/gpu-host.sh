#!/usr/bin/env bash
# Issue 28: `auto` (the tuned profile, which now also probes the system MPI's
# own algorithms) against `mpi-best` (the fastest of the system MPI's default
# and each of its own algorithms, measured in the same run) on the GPU host's
# CPUs: `multilane tune` of host memory with 8 and then 4 ranks as 2 virtual
# nodes (4K-64M, --budget 60), then the benchmark through `multilane run`
# with that profile.  Run from the tree's root with the Debian 12 headers the
# host lacks unpacked from .debs/ (libsqlite3-dev, libcli11-dev,
# nlohmann-json3-dev); writes to $OUT.
set -uo pipefail
P=/tmp/pfx; mkdir -p $P; for d in .debs/*.deb; do dpkg -x $d $P; done
source scripts/env.sh
export NCCL_NVLS_ENABLE=0 PATH=$PATH:/usr/local/cuda/bin OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=build/e
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DMULTILANE_SPANK=OFF -DCMAKE_PREFIX_PATH=$P/usr \
  -DSQLite3_INCLUDE_DIR=$P/usr/include -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 > $OUT/cfg.log 2>&1 || { tail -30 $OUT/cfg.log; exit 1; }
cmake --build $B -j 16 --target multilane mlprobe mlallreduce_bench mlallreduce > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
{ uptime; nproc; mpirun --version | head -1; nvidia-smi -L; } > $OUT/machine.txt
for np in ${NPS:-8 4}; do
  DB=$OUT/profiles-$np.db
  start=$(date +%s)
  $B/launcher/multilane tune --np $np --virtual-nodes 2 --sizes 4K:64M --budget 60 --db $DB > $OUT/tune-$np.txt 2>&1
  echo "tune rc=$? wall_s=$(( $(date +%s) - start ))" >> $OUT/tune-$np.txt
  $B/launcher/multilane show --db $DB > $OUT/show-$np.txt 2>&1
  $B/launcher/multilane run --db $DB -- mpirun --oversubscribe -np $np -x MULTILANE_RANKS_PER_NODE=$((np / 2)) \
    -x MULTILANE_STATS=1 $B/benchmarks/mlallreduce_bench -b 4K -e 64M -f 4 \
    -a mpi,mpi-best,auto,passthrough,lane,hier,split -J $OUT/bench-$np.json > $OUT/bench-$np.txt 2>&1
  echo "bench rc=$?" >> $OUT/bench-$np.txt
done
uptime >> $OUT/machine.txt
for np in ${NPS:-8 4}; do tail -2 $OUT/tune-$np.txt; grep -E "^ *[0-9]+ .*(mpi-best|auto)|rc=" $OUT/bench-$np.txt; done
