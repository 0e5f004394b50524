#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz: clang, ASan + UBSan) and runs
# each for SECONDS (default 20) from its committed seed corpus
# (fuzz/corpus/<target>/).  Any crash, leak or sanitizer report fails the
# script; the input that found it is left in build/fuzz/artifacts/.
#   scripts/fuzz.sh [SECONDS]     e.g. scripts/fuzz.sh 600 for a longer run
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-20}
JOBS=${JOBS:-$(nproc)}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$JOBS"
out=build/fuzz
mkdir -p "$out/artifacts"
status=0
for corpus in fuzz/corpus/*/; do
  target=$(basename "$corpus")
  # New inputs go to a scratch corpus; the committed seeds stay untouched.
  work="$out/corpus/$target"
  mkdir -p "$work"
  log="$out/$target.log"
  if "$out/fuzz/$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$out/artifacts/$target-" "$work" "$corpus" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz: $target: ok, $runs executions in ${SECONDS_EACH} s"
  else
    echo "fuzz: $target: FAILED (log: $log, input: $out/artifacts/$target-*)" >&2
    tail -40 "$log" >&2
    status=1
  fi
done
exit $status
