#!/usr/bin/env bash
# Issues 30 and 28 on the GPU host (16 idle cores, one H200, Open MPI 4.1.6)
# after the tune's second launch (tuner/repeat.h).  Run from the tree's root
# with the Debian 12 headers the host lacks in .debs/ (libsqlite3-dev,
# libcli11-dev, nlohmann-json3-dev); writes to $OUT:
#   main/     the main job (4 ranks as 2 virtual nodes, host memory): the
#             tune (--budget 45), then the benchmark under `multilane run`
#             with a job report, three times (three job launches of one profile),
#             and `multilane report` of each in text, JSON and HTML;
#             The job's sizes: every power of two (FACTOR=2, the default: most
#             of them between the tune's sizes, priced by interpolation) or
#             FACTOR=4 (the tune's own sizes, as scripts/main-job.sh runs it);
#   host8/    `multilane tune --ranks-per-gpu 4 --virtual-nodes 2 --budget 60`
#             (8 ranks) and the benchmark of mpi, mpi-best and auto with it
#             (SKIP_HOST8=1: not run).
set -uo pipefail
source docs/results/gpu-host-build.sh
gpu_host_build multilane mlprobe mlallreduce_bench mlallreduce mlallreduce_front
{ uptime; nproc; mpirun --version | head -1; nvidia-smi -L; } > $OUT/machine.txt

main_job() {  # the main job's tune, then two job launches with reports
  local D=$OUT/main; mkdir -p $D/reports1 $D/reports2 $D/reports3
  export MULTILANE_USER_DB=$D/profiles.db
  $B/launcher/multilane tune --memory host --np 4 --virtual-nodes 2 --sizes 4K:64M --budget 45 --db $D/profiles.db \
    > $D/tune.txt 2>&1; echo "tune rc=$?" >> $D/tune.txt
  for n in 1 2 3; do
    MULTILANE_REPORT=$D/reports$n $B/launcher/multilane run --db $D/profiles.db -- mpirun -np 4 \
      -x MULTILANE_RANKS_PER_NODE=2 -x MULTILANE_REPORT -x MULTILANE_STATS=1 \
      $B/benchmarks/mlallreduce_bench -b 4K -e 16M -f ${FACTOR:-2} -a mpi,auto -J $D/main-job$n.json > $D/run$n.txt 2>&1
    echo "run rc=$?" >> $D/run$n.txt
    cp $D/reports$n/multilane-report-*.json $D/job-report$n.json
    ( cd $D && $B/launcher/multilane report job-report$n.json > report$n.txt 2>&1
      $B/launcher/multilane report job-report$n.json --json > report-analysis$n.json 2>&1
      $B/launcher/multilane report job-report$n.json --html report$n.html > /dev/null 2>&1 )
  done
  rm -rf $D/reports1 $D/reports2 $D/reports3
}

host8() {  # issue 28: auto against the system MPI's best, 8 ranks (4 per GPU)
  local D=$OUT/host8; mkdir -p $D
  $B/launcher/multilane tune --ranks-per-gpu 4 --virtual-nodes 2 --sizes 4K:64M --budget 60 --db $D/host.db \
    > $D/tune.txt 2>&1; echo "tune rc=$?" >> $D/tune.txt
  $B/launcher/multilane run --db $D/host.db -- mpirun --oversubscribe --bind-to none -np 8 \
    -x MULTILANE_RANKS_PER_NODE=4 -x MULTILANE_RANKS_PER_GPU=4 -x MULTILANE_STATS=1 \
    $B/benchmarks/mlallreduce_bench -m host -b 4K -e 64M -f 4 -a mpi,mpi-best,auto -J $D/bench.json > $D/bench.txt 2>&1
  echo "bench rc=$?" >> $D/bench.txt
}

start=$(date +%s); main_job; echo "main job: $(( $(date +%s) - start )) s" >> $OUT/machine.txt
if [ -z "${SKIP_HOST8:-}" ]; then start=$(date +%s); host8; echo "host8: $(( $(date +%s) - start )) s" >> $OUT/machine.txt; fi
uptime >> $OUT/machine.txt
# At most 8 files come back: everything in one archive.
( cd $OUT && rm -f main/profiles.db-* host8/host.db-* && tar czf results.tar.gz main $([ -d host8 ] && echo host8) && rm -rf main host8 )
cat $OUT/machine.txt
tar xzf $OUT/results.tar.gz -C /tmp && cd /tmp
grep -h -E "repeat launch|tune rc" */tune.txt
grep -h -E "re-tune|within" main/report[123].txt | head -12
[ -d host8 ] && grep -h -E "^ +[0-9]+ .* (mpi-best|auto) " host8/bench.txt
