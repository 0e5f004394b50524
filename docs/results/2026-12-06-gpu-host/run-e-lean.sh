# Run E, lean (issue 44 item 6): the tree after the quick route's first step alone: --overhead
# with and without CUDA under two profiles, query.c, and the 16-rank run, in one command.
# From the repository root on the GPU host, with .debs/ and $OUT set.
set -u
source docs/results/gpu-host-build.sh
SECONDS=0
gpu_host_build mlallreduce_bench mlallreduce_cuda
echo "built in $SECONDS s"
SMALL="multilane-profile 1; host 0 2M passthrough; host 2M inf lane; device 0 2M passthrough; device 2M inf lane"
TUNED="multilane-profile 1"; lo=0
for hi in 64 128 256 512 1K 2K 4K 8K 16K 32K 64K 128K 256K 512K 1M 2M; do
  for kind in host device; do TUNED="$TUNED; $kind $lo $hi passthrough time_us=5 mpi_time_us=5"; done; lo=$hi; done
for bin in 2M:8M 8M:32M 32M:128M; do for kind in host device; do TUNED="$TUNED; $kind ${bin%:*} ${bin#*:} lane time_us=900 mpi_time_us=1500"; done; done
TUNED="$TUNED; host 128M inf lane; device 128M inf lane"
{ nvidia-smi -L; mpirun --version | head -1; lscpu | grep "Model name"; nproc; } 2>&1
for mem in host cuda; do for prof in SMALL TUNED; do
  echo "=== mem $mem profile $prof"
  timeout 60 mpirun --bind-to core -np 1 -x "MULTILANE_PROFILE=${!prof}" $B/benchmarks/mlallreduce_bench -b 8 -e 1M -f 2 -a mpi -m $mem --overhead 2>&1 | sed -n '/^# overhead/,$p' | tail -n +2
done; done
gcc -O2 docs/results/2026-12-06-gpu-host/query.c -I/usr/local/cuda/include -l:libcuda.so.1 -o /tmp/query && /tmp/query
echo "=== 16 ranks host at $SECONDS s"
timeout 100 mpirun --bind-to core -np 16 -x MULTILANE_RANKS_PER_NODE=8 -x "MULTILANE_PROFILE=$SMALL" $B/benchmarks/mlallreduce_bench -b 8 -e 1M -f 8 -a mpi,passthrough,auto,mpi-best -m host 2>&1 | grep -E "^ +[0-9]+ |FAILED|rror"
echo "done at $SECONDS s"
