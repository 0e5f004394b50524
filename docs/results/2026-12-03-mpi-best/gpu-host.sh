#!/usr/bin/env bash
# Issue 28, item 3: mlallreduce_bench's default rows, now with mpi-best (the
# fastest of the system MPI's default and each of its own algorithms, forced
# inside the job) and vs_best, on the GPU host: host memory with 4 and 8
# ranks as 2 virtual nodes, device memory with 4 ranks on the one H200 (2
# virtual nodes, 2 ranks per GPU).  Run from the tree's root with the
# Debian 12 headers it lacks unpacked from .debs/; writes to $OUT.
set -uo pipefail
source docs/results/gpu-host-build.sh
gpu_host_build mlallreduce_bench coll_base_counter
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
