# Run B on the GPU host (2026-12-06): issue 46 item 4, the shared-memory node step
# (lane:shm, hier:shm: transport shm) against the system MPI, its best algorithm and the node's bound,
# 16 ranks as one node and as 2 virtual nodes of 8, host buffers, 8 B to 256 MiB.
# From the repository root there, with .debs/ and $OUT set.
set -u
source docs/results/gpu-host-build.sh
gpu_host_build all
{ nvidia-smi -L; mpirun --version | head -1; lscpu | grep -E "Model name|L2|L3"; nproc; free -g | head -2;
  cat /proc/sys/kernel/yama/ptrace_scope; ls /dev/xpmem 2>&1; env | grep OMPI_MCA; } > $OUT/host.txt 2>&1
BENCH=$B/benchmarks/mlallreduce_bench
for layout in 1node 2nodes; do
  RPN=""; [ $layout = 2nodes ] && RPN="-x MULTILANE_RANKS_PER_NODE=8"
  timeout 230 mpirun --bind-to core -np 16 $RPN -x MULTILANE_VERBOSE=1 \
    $BENCH -b 8 -e 256M -f 4 -a mpi,mpi-best,lane,lane:shm,hier,hier:shm -T 0.25 -J $OUT/bench-$layout.json \
    > $OUT/bench-$layout.txt 2>&1 || echo "rc=$?" >> $OUT/bench-$layout.txt
  grep -v "^#  \|^# hosts" $OUT/bench-$layout.txt | tail -80
done
