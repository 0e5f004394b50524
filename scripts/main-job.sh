#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs the allreduce
# benchmark with libmlallreduce on 4 ranks laid out as 2 virtual nodes of 2
# ranks, every algorithm beside the system MPI, and prints the table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"

RANKS=${RANKS:-4}
RANKS_PER_NODE=${RANKS_PER_NODE:-2}
mkdir -p build/default/results
mpirun -np "$RANKS" \
  -x MULTILANE_RANKS_PER_NODE="$RANKS_PER_NODE" -x MULTILANE_RANKS_PER_GPU="${RANKS_PER_GPU:-1}" \
  -x LD_PRELOAD="$PWD/build/default/libmlallreduce/libmlallreduce.so" \
  build/default/benchmarks/mlallreduce_bench -b "${MIN_BYTES:-4K}" -e "${MAX_BYTES:-16M}" -f 4 \
  -J build/default/results/main-job.json "$@"
echo "main-job: JSON results in build/default/results/main-job.json"
