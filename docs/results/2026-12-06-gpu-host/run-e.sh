# Run E on the GPU host: issue 44 item 6, the library's cost per call before and after the quick
# route (libmlallreduce/quick_route.h), side by side in one run.
# From the repository root there, with .debs/ (libsqlite3-dev, libcli11-dev, nlohmann-json3-dev,
# and before.tar: `git archive 8e73a24`, the tree before) and $OUT set.
#   bash run-e.sh [overhead|ranks|all]   (default all; each part builds first, which a warm host
#                                         already has done)
set -u
PART=${1:-all}
source docs/results/gpu-host-build.sh
TARGETS="mlallreduce_bench mlallreduce_front mlallreduce_cuda"
mkdir -p build/before && tar -xf .debs/before.tar -C build/before && cp -r .debs build/before/
(cd build/before && gpu_host_build $TARGETS) || exit 1
gpu_host_build $TARGETS
declare -A BUILD=([before]=$PWD/build/before/build/e [after]=$B)
{ nvidia-smi -L; mpirun --version | head -1; lscpu | grep "Model name"; nproc; } > $OUT/host.txt 2>&1
cat $OUT/host.txt
# The profile (4 entries), and one shaped as a tune writes it (a passthrough entry per
# size bin up to 2 MiB, 40 entries in all), where the whole path's look-up reads them one by one.
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
if [ $PART != ranks ]; then
# Interleaved: for each repetition, memory and profile, the two builds one after the other.
for rep in 1 2; do
  for mem in host cuda; do
    for prof in small tuned; do
      for build in before after; do
        f=$OUT/overhead-$rep-$mem-$prof-$build.txt
        timeout 100 mpirun --bind-to core -np 1 -x "MULTILANE_PROFILE=${PROF[$prof]}" \
          ${BUILD[$build]}/benchmarks/mlallreduce_bench -b 8 -e 1M -f 2 -a mpi -m $mem --overhead > $f 2>&1 \
          || echo "FAILED rc=$?" >> $f
        echo "=== rep $rep mem $mem profile $prof build $build"
        sed -n '/^# overhead/,$p' $f | tail -n +2
      done
    done
  done
done
fi
[ $PART = overhead ] && exit 0
# The issue's own run: 16 ranks as 2 virtual nodes of 8, host buffers (-m cuda would put the
# table's buffers on the GPU; the overhead rows above have CUDA in the process on host buffers).
for mem in host; do
  for build in before after; do
    f=$OUT/bench16-$mem-$build.txt
    timeout 150 mpirun --bind-to core -np 16 -x MULTILANE_RANKS_PER_NODE=8 -x "MULTILANE_PROFILE=$SMALL" \
      ${BUILD[$build]}/benchmarks/mlallreduce_bench -b 8 -e 1M -f 8 -a mpi,passthrough,auto,mpi-best -m $mem \
      > $f 2>&1 || echo "FAILED rc=$?" >> $f
    echo "=== 16 ranks mem $mem build $build"
    grep -E "^ +[0-9]+ |FAILED" $f
  done
done
# What one driver question about a pointer costs, per form (query.c).
gcc -O2 docs/results/2026-12-06-gpu-host/query.c -I/usr/local/cuda/include -l:libcuda.so.1 -o /tmp/query \
  && /tmp/query | tee $OUT/query.txt
