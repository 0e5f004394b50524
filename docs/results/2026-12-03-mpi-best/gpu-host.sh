#!/usr/bin/env bash
# Issue 28, item 3: mlallreduce_bench's default rows, now with mpi-best (the
# fastest of the system MPI's default and each of its own algorithms, forced
# inside the job) and vs_best, on the GPU host: host memory with 4 and 8
# ranks as 2 virtual nodes, device memory with 4 ranks on the one H200 (2
# virtual nodes, 2 ranks per GPU).  Run from the tree's root with the
# Debian 12 headers it lacks unpacked from .debs/; writes to $OUT.
set -uo pipefail
P=/tmp/pfx; mkdir -p $P; for d in .debs/*.deb; do dpkg -x $d $P; done
source scripts/env.sh
export NCCL_NVLS_ENABLE=0 PATH=$PATH:/usr/local/cuda/bin
B=build/e
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DMULTILANE_SPANK=OFF -DCMAKE_PREFIX_PATH=$P/usr \
  -DSQLite3_INCLUDE_DIR=$P/usr/include -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 > $OUT/cfg.log 2>&1 || { tail -30 $OUT/cfg.log; exit 1; }
cmake --build $B -j 16 --target mlallreduce_bench coll_base_counter > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
{ uptime; nproc; mpirun --version | head -1; nvidia-smi -L; } > $OUT/machine.txt
( cd $B && ctest -R bench_system_algorithms_observed --output-on-failure > $OUT/observed.txt 2>&1; echo "rc=$?" >> $OUT/observed.txt )
mpirun --oversubscribe -np 4 -x MULTILANE_RANKS_PER_NODE=2 $B/benchmarks/mlallreduce_bench -b 4K -e 64M -f 4 \
  -J $OUT/host-4.json > $OUT/host-4.txt 2>&1
mpirun --oversubscribe -np 8 -x MULTILANE_RANKS_PER_NODE=4 $B/benchmarks/mlallreduce_bench -b 4K -e 64M -f 4 \
  -J $OUT/host-8.json > $OUT/host-8.txt 2>&1
mpirun --oversubscribe -np 4 -x MULTILANE_RANKS_PER_NODE=2 -x NCCL_NVLS_ENABLE $B/benchmarks/mlallreduce_bench -m cuda \
  -b 4K -e 64M -f 4 -J $OUT/device-4.json > $OUT/device-4.txt 2>&1
uptime >> $OUT/machine.txt
tail -3 $OUT/observed.txt; grep -E "mpi-best|note" $OUT/host-4.txt | head -20
