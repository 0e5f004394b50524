#!/usr/bin/env bash
# The test command: installs dependencies, builds the default and the
# sanitizer (ASan/UBSan) presets and runs every test of both with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
JOBS=$(nproc)

for preset in default asan; do
  echo "=== multilane: build and test, preset '$preset' ==="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$JOBS"
  ctest --preset "$preset" -j "$JOBS"
done
