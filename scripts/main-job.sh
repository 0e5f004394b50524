#!/usr/bin/env bash
# The main job: installs dependencies, builds, tunes this machine into a
# profile database under the build folder (the ranks split into virtual
# nodes), then runs the allreduce benchmark through `multilane run` with the
# tuned profile and prints its table: the system MPI, every algorithm, and
# `auto` (what the profile decides) side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"

RANKS=${RANKS:-4}
NODES=${NODES:-2}
BUILD=build/default
DB=$BUILD/results/profiles.db
mkdir -p $BUILD/results
export MULTILANE_USER_DB=$PWD/$DB   # keep the user's own database out of it

echo "=== multilane tune: $RANKS ranks as $NODES virtual nodes, host memory, ${SIZES:-4K:64M} ==="
# More ranks than cores (4 on this 2-core machine) is oversubscribed: the
# tune refuses it unless allowed, and then marks the profile as a test one.
OVERSUB=()
if [ "$RANKS" -gt "$(nproc)" ]; then
  echo "note: $RANKS ranks on $(nproc) cores is OVERSUBSCRIBED: the profile is a marked test profile"
  OVERSUB=(--allow-oversubscribed)
fi
$BUILD/launcher/multilane tune --np "$RANKS" --virtual-nodes "$NODES" --sizes "${SIZES:-4K:64M}" \
  --budget "${BUDGET:-45}" --db "$DB" "${OVERSUB[@]}"

echo "=== multilane run: the benchmark with the tuned profile ==="
$BUILD/launcher/multilane run --db "$DB" -- \
  mpirun -np "$RANKS" -x MULTILANE_RANKS_PER_NODE=$((RANKS / NODES)) -x MULTILANE_STATS=1 \
  $BUILD/benchmarks/mlallreduce_bench -b "${MIN_BYTES:-4K}" -e "${MAX_BYTES:-16M}" -f 4 \
  -a mpi,mpi-best,auto,lane,hier,split -J $BUILD/results/main-job.json "$@"
echo "main-job: profile database $DB, JSON results in $BUILD/results/main-job.json"
