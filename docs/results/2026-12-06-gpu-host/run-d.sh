# Run D on the GPU host (2026-12-06): the tuner with transport=shm among its host candidates
# (issue 46 item 2): a host tune of 16 ranks on one node, then the benchmark with the tuned
# profile (auto) beside the system MPI, its best algorithm and lane:shm in one run.
# From the repository root there, with .debs/ and $OUT set.
set -u
source docs/results/gpu-host-build.sh
gpu_host_build all
ML=$B/launcher/multilane
export MULTILANE_USER_DB=$OUT/tune.db
timeout 260 $ML tune --memory host --np 16 --sizes 4K:64M --budget 200 --db $OUT/tune.db > $OUT/tune.txt 2>&1 \
  || echo "tune rc=$?" >> $OUT/tune.txt
tail -15 $OUT/tune.txt
$ML show --db $OUT/tune.db > $OUT/show.txt 2>&1; cat $OUT/show.txt
timeout 200 $ML run --db $OUT/tune.db -- mpirun --bind-to core -np 16 -x MULTILANE_STATS=1 \
  $B/benchmarks/mlallreduce_bench -b 4K -e 64M -f 4 -a mpi,mpi-best,auto,lane:shm -T 0.2 -J $OUT/bench-auto.json \
  > $OUT/bench-auto.txt 2>&1 || echo "rc=$?" >> $OUT/bench-auto.txt
grep -E "^ +[0-9]+ |^# note|^multilane" $OUT/bench-auto.txt
