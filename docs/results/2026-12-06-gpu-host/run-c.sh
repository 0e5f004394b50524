# Run C on the GPU host (2026-12-06): issue 46 item 4 after the one-shot threshold change: the
# shared-memory node step (lane:shm) beside lane's MPI node steps (lane:mpi), the system MPI and
# its best algorithm, 16 ranks as one node and as 2 virtual nodes of 8, host buffers, 8 B to
# 128 MiB; then one node with MULTILANE_NODE_STEP=shm-cma (the single-copy read where the kernel
# allows it, for every choice whose transport is not mpi). From the repository root there, with
# .debs/ and $OUT set.
set -u
source docs/results/gpu-host-build.sh
gpu_host_build mlallreduce_bench mlallreduce_front mlallreduce
BENCH=$B/benchmarks/mlallreduce_bench
run() {  # NAME MPIRUN-ARGS...
  local name=$1; shift
  timeout 170 mpirun --bind-to core -np 16 -x MULTILANE_VERBOSE=1 "$@" \
    $BENCH -b 8 -e 128M -f 4 -a mpi,mpi-best,lane:mpi,lane:shm -T 0.2 -J $OUT/bench-$name.json \
    > $OUT/bench-$name.txt 2>&1 || echo "rc=$?" >> $OUT/bench-$name.txt
  grep -E "^multilane|^ +[0-9]+ |^# note: mpi-best" $OUT/bench-$name.txt | grep -v " mpi-best \| lane:mpi "
}
run 1node
run 2nodes -x MULTILANE_RANKS_PER_NODE=8
run 1node-cma -x MULTILANE_NODE_STEP=shm-cma
