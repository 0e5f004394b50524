# Run A on the GPU host (2026-12-06): issue 44 item 6 (the library's cost per call, with the
# measurement's short rounds) and issue 45 item 1 (start-up, 16 to 1,024 ranks).
# From the repository root there, with .debs/ (libsqlite3-dev, libcli11-dev, nlohmann-json3-dev)
# and $OUT set: the figures go there.
set -u
source docs/results/gpu-host-build.sh
gpu_host_build all
ulimit -n 65536 || true
{ nvidia-smi -L; mpirun --version | head -1; lscpu | grep "Model name"; nproc; free -g | head -2; } > $OUT/host.txt 2>&1
PROF="multilane-profile 1; host 0 2M passthrough; host 2M inf lane; device 0 2M passthrough; device 2M inf lane"
for rep in 1 2; do
  for mem in host cuda; do
    echo "=== rep $rep mem $mem" >> $OUT/overhead.txt
    timeout 120 mpirun --bind-to core -np 1 -x "MULTILANE_PROFILE=$PROF" \
      $B/benchmarks/mlallreduce_bench -b 8 -e 1M -f 2 -a mpi -m $mem --overhead > $OUT/raw-overhead-$rep-$mem.txt 2>&1 \
      || echo "FAILED rc=$?" >> $OUT/overhead.txt
    sed -n '/^# overhead/,$p' $OUT/raw-overhead-$rep-$mem.txt >> $OUT/overhead.txt
  done
done
cat $OUT/overhead.txt
LIB=$B/libmlallreduce/libmlallreduce.so
export OMPI_MCA_mpi_yield_when_idle=1
for n in 16 64 256; do
  MULTILANE_RANKS_PER_NODE=16 timeout 200 python3 benchmarks/startup_scale.py --probe $B/benchmarks/startup_probe \
    --library after=$LIB --ranks $n --loops 10 --timeout 180 > $OUT/startup-$n.txt 2>&1 || echo "rc=$?" >> $OUT/startup-$n.txt
  tail -4 $OUT/startup-$n.txt
done
for n in 1024; do
  MULTILANE_RANKS_PER_NODE=16 timeout 330 python3 benchmarks/startup_scale.py --probe $B/benchmarks/startup_probe \
    --library after=$LIB --ranks $n --loops 2 --timeout 160 > $OUT/startup-$n.txt 2>&1 || echo "rc=$?" >> $OUT/startup-$n.txt
  tail -4 $OUT/startup-$n.txt
done
