#!/usr/bin/env bash
# Does `multilane tune` keep to --budget when the budget is tight?  On the GPU
# host (16 cores, one H200, Open MPI 4.1.6): host memory, 8 ranks as 2 virtual
# nodes, 4K-64M, at --budget 15, 30 and 60; device memory, 1, 2, 4 and 8
# ranks per GPU as 2 virtual nodes, 4K-64M, at --budget 60 and 120.  Prints
# each tune's "tuned in X s of a Y s budget" line, its repeat lines and any
# overrun note.  Run from the tree's root with the Debian 12 headers the host
# lacks in .debs/ (libsqlite3-dev, libcli11-dev, nlohmann-json3-dev); writes
# to $OUT.
set -uo pipefail
source docs/results/gpu-host-build.sh
gpu_host_build multilane mlprobe mlallreduce mlallreduce_front
D=$OUT/budgets; mkdir -p $D
for s in 15 30 60; do
  $B/launcher/multilane tune --memory host --np 8 --virtual-nodes 2 --sizes 4K:64M --budget $s --db $D/host-$s.db > $D/host-$s.txt 2>&1
  echo "tune rc=$?" >> $D/host-$s.txt
done
for s in 60 120; do
  $B/launcher/multilane tune --memory device --ranks-per-gpu 1,2,4,8 --virtual-nodes 2 --sizes 4K:64M --budget $s \
    --db $D/device-$s.db > $D/device-$s.txt 2>&1
  echo "tune rc=$?" >> $D/device-$s.txt
done
rm -f $D/*.db*
( cd $OUT && tar czf budgets.tar.gz budgets )
for f in $D/*.txt; do echo "== $(basename $f)"; grep -h -E "tuned in|repeat launch|no repeat|note: the tune took|tune rc" $f; done
