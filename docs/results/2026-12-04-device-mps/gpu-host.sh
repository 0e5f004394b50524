#!/usr/bin/env bash
# Issue 28, device buffers, on the GPU host (16 cores, one H200, Open MPI
# 4.1.6): `multilane tune --memory device` with 1, 2, 4 and 8 ranks per GPU
# as 2 virtual nodes (4K-64M, --budget 240; the bound is 5 minutes),
# then the benchmark of the recommended layout under `multilane run`, which
# now starts the private MPS daemon the profile was measured under (--mps
# auto).  Columns: the system MPI's default (mpi), the best of its own
# algorithms (mpi-best), auto, the library passing every call to the system
# MPI (passthrough) and the three algorithms forced.  (mpi-1pg and nccl need
# a GPU per virtual node: on this one-GPU host they would run on one rank.)  Run from
# the tree's root with the Debian 12 headers the host lacks in .debs/
# (libsqlite3-dev, libcli11-dev, nlohmann-json3-dev); writes to $OUT.
set -uo pipefail
source docs/results/gpu-host-build.sh
gpu_host_build multilane mlprobe mlallreduce_bench mlallreduce mlallreduce_front
D=$OUT/device; mkdir -p $D
{ uptime; nproc; mpirun --version | head -1; nvidia-smi -L; command -v nvidia-cuda-mps-control; } > $D/machine.txt
# What an MPS control daemon leaves in its pipe folder (run_mps.cc looks for
# the control socket of a site's daemon in /tmp/nvidia-mps).
( export CUDA_MPS_PIPE_DIRECTORY=/tmp/mpscheck/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mpscheck/log
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY && nvidia-cuda-mps-control -d && sleep 1
  ls -l $CUDA_MPS_PIPE_DIRECTORY; echo quit | nvidia-cuda-mps-control ) > $D/mps-pipe-folder.txt 2>&1
start=$(date +%s)
$B/launcher/multilane tune --memory device --ranks-per-gpu 1,2,4,8 --virtual-nodes 2 --sizes 4K:64M \
  --budget 240 --db $D/device.db > $D/tune.txt 2>&1
echo "tune rc=$? wall_s=$(( $(date +%s) - start ))" >> $D/tune.txt
$B/launcher/multilane show --db $D/device.db > $D/show.txt 2>&1
rec=$(sed -n 's/^recommended ranks per GPU: //p' $D/tune.txt); rec=${rec:-2}
# While the benchmark runs: is an MPS server serving it?
( sleep 25; pgrep -a nvidia-cuda-mps; nvidia-smi ) > $D/during-bench.txt 2>&1 &
start=$(date +%s)
$B/launcher/multilane run --db $D/device.db -- mpirun --oversubscribe --bind-to none -np $((2 * rec)) \
  -x MULTILANE_RANKS_PER_NODE=$rec -x MULTILANE_RANKS_PER_GPU=$rec -x MULTILANE_STATS=1 -x NCCL_NVLS_ENABLE \
  $B/benchmarks/mlallreduce_bench -m cuda -b 4K -e 64M -f 4 -a mpi,mpi-best,auto,passthrough,lane,hier,split \
  -J $D/bench-ppg$rec.json > $D/bench-ppg$rec.txt 2>&1
echo "bench rc=$? wall_s=$(( $(date +%s) - start ))" >> $D/bench-ppg$rec.txt
wait; uptime >> $D/machine.txt
rm -f $D/device.db-*
# At most 8 files come back: everything in one archive.
( cd $OUT && tar czf results.tar.gz device && rm -rf device )
tar xzf $OUT/results.tar.gz -C /tmp && cd /tmp/device
cat mps-pipe-folder.txt
grep -h -E "tune rc|recommended|repeat launch" tune.txt
grep -h -E "^ +[0-9]+ .* (mpi-best|auto) |rc=|MPS|note: auto" bench-ppg*.txt
head -3 during-bench.txt
