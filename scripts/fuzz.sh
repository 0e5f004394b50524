#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz: clang, ASan + UBSan) and runs
# each for SECONDS (default 20) from its committed seed corpus
# (fuzz/corpus/<target>/), JOBS of them at a time (default: one per core).
# Any crash, leak or sanitizer report fails the script; the input that found
# it is left in build/fuzz/artifacts/.
# It also fails (issue 27) when a built target has no seed corpus or a
# corpus no target, and when a target ran fewer than MIN_EXECS inputs
# (default 100 per second of SECONDS: a target that stops at once, or never
# gets past its seeds, is not fuzzing).
#   scripts/fuzz.sh [SECONDS]     e.g. scripts/fuzz.sh 600 for a longer run
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-20}
JOBS=${JOBS:-$(nproc)}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$JOBS"
MIN_EXECS=${MIN_EXECS:-$((100 * SECONDS_EACH))}
out=build/fuzz
mkdir -p "$out/artifacts"
status=0
# The targets are what the build made (fuzz/CMakeLists.txt), not the corpus
# folders: a target without seeds must not go unrun.
targets=$(find "$out/fuzz" -maxdepth 1 -type f -name 'fuzz_*' -executable -printf '%f\n' | sort)
[ -n "$targets" ] || { echo "fuzz: no fuzz target built in $out/fuzz" >&2; exit 1; }
for corpus in fuzz/corpus/*/; do
  t=$(basename "$corpus")
  if ! grep -qx "$t" <<<"$targets"; then
    echo "fuzz: FAILED: seed corpus $corpus has no target $out/fuzz/$t" >&2
    status=1
  fi
done
# fuzz_one TARGET: runs one target; returns 1 when it failed.
fuzz_one() {
  local target=$1 corpus work log runs
  corpus=fuzz/corpus/$target/
  if [ -z "$(ls -A "$corpus" 2>/dev/null)" ]; then
    echo "fuzz: $target: FAILED: no seed corpus in $corpus (commit at least one input)" >&2
    return 1
  fi
  # New inputs go to a scratch corpus; the committed seeds stay untouched.
  work="$out/corpus/$target"
  mkdir -p "$work"
  log="$out/$target.log"
  if "$out/fuzz/$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$out/artifacts/$target-" "$work" "$corpus" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    if [ "${runs:-0}" -lt "$MIN_EXECS" ]; then
      echo "fuzz: $target: FAILED: only ${runs:-0} executions in ${SECONDS_EACH} s (at least $MIN_EXECS required; log: $log)" >&2
      return 1
    fi
    echo "fuzz: $target: ok, $runs executions in ${SECONDS_EACH} s"
  else
    echo "fuzz: $target: FAILED (log: $log, input: $out/artifacts/$target-*)" >&2
    tail -40 "$log" >&2
    return 1
  fi
}
# Each target runs on one core: JOBS of them at a time.
running=()
for target in $targets; do
  fuzz_one "$target" &
  running+=($!)
  if [ ${#running[@]} -ge "$JOBS" ]; then
    wait "${running[0]}" || status=1
    running=("${running[@]:1}")
  fi
done
for pid in "${running[@]}"; do wait "$pid" || status=1; done
exit $status
