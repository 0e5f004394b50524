# Run F on the GPU host: issue 44 item 6 after the quick route's second step (tree c71f7b9): the
# library's cost per call at every size with and without CUDA (the issue's profile and one shaped
# as a tune writes it), then 256 KiB to 1 MiB eight times, interleaved with the tree before the
# quick route (8e73a24, .debs/before.tar), and the issue's 16-rank run.
# From the repository root there, with .debs/ and $OUT set.
set -u
source docs/results/gpu-host-build.sh
TARGETS="mlallreduce_bench mlallreduce_front mlallreduce_cuda"
SECONDS=0
mkdir -p build/before && tar -xf .debs/before.tar -C build/before && cp -r .debs build/before/
(cd build/before && gpu_host_build $TARGETS) || exit 1
gpu_host_build $TARGETS
echo "built in $SECONDS s"
declare -A BUILD=([before]=$PWD/build/before/build/e [after]=$B)
SMALL="multilane-profile 1; host 0 2M passthrough; host 2M inf lane; device 0 2M passthrough; device 2M inf lane"
TUNED="multilane-profile 1"
lo=0
for hi in 64 128 256 512 1K 2K 4K 8K 16K 32K 64K 128K 256K 512K 1M 2M; do
  for kind in host device; do TUNED="$TUNED; $kind $lo $hi passthrough time_us=5 mpi_time_us=5"; done
  lo=$hi
done
for bin in 2M:8M 8M:32M 32M:128M; do
  for kind in host device; do TUNED="$TUNED; $kind ${bin%:*} ${bin#*:} lane time_us=900 mpi_time_us=1500"; done
done
TUNED="$TUNED; host 128M inf lane; device 128M inf lane"
declare -A PROF=([small]=$SMALL [tuned]=$TUNED)
{ nvidia-smi -L; mpirun --version | head -1; lscpu | grep "Model name"; nproc; } 2>&1
for mem in host cuda; do
  for prof in small tuned; do
    echo "=== after, mem $mem, profile $prof"
    timeout 60 mpirun --bind-to core -np 1 -x "MULTILANE_PROFILE=${PROF[$prof]}" $B/benchmarks/mlallreduce_bench \
      -b 8 -e 1M -f 2 -a mpi -m $mem --overhead 2>&1 | sed -n '/^# overhead/,$p' | tail -n +2
  done
done
echo "=== 256K-1M, host, profile small: size:passthrough_ns/auto_ns"
for rep in 1 2 3 4 5 6 7 8; do
  for build in before after; do
    echo "rep $rep $build $(timeout 30 mpirun --bind-to core -np 1 -x "MULTILANE_PROFILE=$SMALL" \
      ${BUILD[$build]}/benchmarks/mlallreduce_bench -b 256K -e 1M -f 2 -a mpi -m host --overhead 2>&1 |
      sed -n '/^# overhead/,$p' | tail -n +3 | awk '{printf "%s:%s/%s ", $1, $3, $4}')"
  done
done
echo "=== 16 ranks as 2 virtual nodes of 8, host buffers, profile small, after"
timeout 60 mpirun --bind-to core -np 16 -x MULTILANE_RANKS_PER_NODE=8 -x "MULTILANE_PROFILE=$SMALL" \
  $B/benchmarks/mlallreduce_bench -b 8 -e 1M -f 8 -a mpi,passthrough,auto,mpi-best -m host 2>&1 |
  grep -E "^ +[0-9]+ |rror"
echo "done at $SECONDS s"
