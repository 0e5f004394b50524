#!/usr/bin/env bash
# On a GPU host: builds multilane, runs the GPU tests and the benchmark
# matrix (ranks per GPU x algorithm x transport, fp32 sum, 4 KiB to 1 GiB) and
# writes logs, JSON results and a summary table to OUTDIR.
#   scripts/gpu-run.sh OUTDIR [build|test|single|vnodes|small|all]...   (default: all)
# The build step configures with MULTILANE_CUDA=ON: no CUDA compiler is an
# error, never a build without GPU tests.  The test step fails (exit 1) when a
# GPU test fails, when one other than a NCCL case is skipped (on a GPU host
# that means no GPU was seen; NCCL cases are skipped, visibly, where NCCL
# cannot run: one GPU shared by the ranks), and unless exactly GPU_TESTS (22)
# GPU tests are registered and each passed or is such a NCCL skip; on a host
# of one GPU exactly the NCCL_SKIPS_1GPU cases are skipped and all others
# pass (issue 27: "ctest -L gpu" with no GPU test built passed).
# Variables: CMAKE_ARGS (extra configure arguments, e.g. a -DCMAKE_PREFIX_PATH
# for headers unpacked from .deb files), PPG_SINGLE ("1 2 4"), PPG_VNODES ("1 2 4 8"), MAX_BYTES (1G),
# BATCH_SECONDS (0.3), MPS (1: run the single-node configurations with several
# ranks per GPU under a private MPS daemon too), MPS_VNODES (ranks per GPU to
# run on virtual nodes under MPS too, e.g. "4 8").
set -euo pipefail
OUT=$(realpath -m "${1:?usage: scripts/gpu-run.sh OUTDIR [build|test|single|vnodes|all]...}")
shift
STEPS=${*:-all}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
source scripts/env.sh
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on the shared host
export PATH=$PATH:/usr/local/cuda/bin
BUILD=build/gpu
BENCH=$BUILD/benchmarks/mlallreduce_bench
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l || true)  # 0 without nvidia-smi (the test step then fails on its skips)
has() { [[ " $STEPS " == *" $1 "* || " $STEPS " == *" all "* ]]; }

if has build; then
  { nvidia-smi; nvidia-smi topo -m; mpirun --version | head -1; nvcc --version | tail -1;
    ls -l /usr/lib/x86_64-linux-gnu/libnccl.so* 2>/dev/null || true; uname -a; } > "$OUT/host.txt" 2>&1
  # shellcheck disable=SC2086  # CMAKE_ARGS holds several arguments
  cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} -DMULTILANE_CUDA=ON > "$OUT/build.log" 2>&1 \
    || { tail -40 "$OUT/build.log"; exit 1; }
  cmake --build $BUILD -j "$(nproc)" >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  echo "gpu-run: built ($NGPU GPUs)"
fi

if has test; then
  GPU_TESTS=${GPU_TESTS:-22}
  NCCL_SKIPS_1GPU=${NCCL_SKIPS_1GPU:-"gpu_2vnodes_1pergpu_env_lane_nccl gpu_2vnodes_1pergpu_nccl gpu_2vnodes_2pergpu_nccl"}
  # Only the gpu_* names: -L also lists the fixture tests they require (test_homes).
  registered=$(ctest --test-dir $BUILD -N -L gpu 2>/dev/null | grep -cE "Test +#[0-9]+: gpu_" || true)
  if [ "${registered:-0}" != "$GPU_TESTS" ]; then
    echo "gpu-run: GPU tests FAILED: ${registered:-no} GPU tests registered in $BUILD, expected exactly $GPU_TESTS"
    exit 1
  fi
  # -V: every test's output, so that each NOT APPLICABLE reason is in the log.
  rc=0
  ctest --test-dir $BUILD -L gpu --no-tests=error -V -j 1 > "$OUT/gpu-tests.log" 2>&1 || rc=$?
  grep -E "^[0-9]+/[0-9]+ Test|tests passed|did not run|\(Skipped\)|\(Failed\)|NOT APPLICABLE" "$OUT/gpu-tests.log" || true
  # The result lines: "N/M Test #K: NAME ....   Passed" or "***Skipped".
  passed=$(grep -oE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: gpu_[^ ]+ \.* +Passed" "$OUT/gpu-tests.log" \
             | sed -E 's/.*: (gpu_[^ ]+) .*/\1/' | sort -u || true)
  skipped=$(grep -oE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: gpu_[^ ]+ \.*\*+Skipped" "$OUT/gpu-tests.log" \
             | sed -E 's/.*: (gpu_[^ ]+) .*/\1/' | sort -u || true)
  npassed=$(grep -c . <<<"$passed" || true)
  nskipped=$(grep -c . <<<"$skipped" || true)
  unexpected=$(grep -v nccl <<<"$skipped" || true)
  if [ -n "$unexpected" ]; then
    echo "gpu-run: GPU tests skipped on a GPU host (no GPU seen?):"
    echo "$unexpected"
    rc=1
  fi
  if [ $((npassed + nskipped)) -ne "$GPU_TESTS" ]; then
    echo "gpu-run: $npassed GPU tests passed and $nskipped NCCL cases skipped: $GPU_TESTS expected in all"
    rc=1
  fi
  if [ "$NGPU" -eq 1 ] && [ "$(tr ' ' '\n' <<<"$NCCL_SKIPS_1GPU" | sort | xargs)" != "$(xargs <<<"$skipped")" ]; then
    echo "gpu-run: on one GPU exactly these NCCL cases must be skipped: $NCCL_SKIPS_1GPU; skipped: $(xargs <<<"$skipped")"
    rc=1
  fi
  if [ "$rc" -ne 0 ]; then
    echo "gpu-run: GPU tests FAILED (exit $rc): see $OUT/gpu-tests.log"
    exit 1
  fi
  echo "gpu-run: GPU tests passed: $npassed of $GPU_TESTS passed, $nskipped skipped as not applicable here ($(xargs <<<"$skipped"))"
fi

bench() {  # NAME NP [VAR=VALUE...]: one benchmark run
  local name=$1 np=$2; shift 2
  local xs=() ; for v in "$@"; do xs+=(-x "$v"); done
  echo "gpu-run: $name (np $np $*)"
  mpirun -np "$np" --bind-to none "${xs[@]}" -x NCCL_NVLS_ENABLE $BENCH -m cuda -b 4K -e "${MAX_BYTES:-1G}" -f 4 \
    -T "${BATCH_SECONDS:-0.3}" -a "$ALGOS" -J "$OUT/$name.json" > "$OUT/$name.txt" 2>&1 \
    || { echo "gpu-run: $name failed"; tail -20 "$OUT/$name.txt"; }
}

MPS_DIRS=()
stop_all_mps() { for d in "${MPS_DIRS[@]}"; do scripts/mps.sh stop "$d" >/dev/null 2>&1 || true; done; }
trap stop_all_mps EXIT
with_mps() {  # runs the bench "$@" under a private MPS daemon, then stops it
  local dir; dir=$(mktemp -d /tmp/mla-mps.XXXXXX)
  MPS_DIRS+=("$dir")
  scripts/mps.sh start "$dir" >/dev/null
  "$@" CUDA_MPS_PIPE_DIRECTORY="$dir/pipe"
  scripts/mps.sh stop "$dir" >/dev/null
}

if has single; then
  ALGOS=${ALGOS_SINGLE:-mpi,mpi-1pg,nccl,nccl-sync,lane,hier,split,split:mpi}
  for ppg in ${PPG_SINGLE:-1 2 4}; do
    bench "single-ppg$ppg" $((NGPU * ppg)) MULTILANE_RANKS_PER_GPU=$ppg
    if [ "${MPS:-0}" = 1 ] && [ "$ppg" -gt 1 ]; then
      with_mps bench "single-ppg$ppg-mps" $((NGPU * ppg)) MULTILANE_RANKS_PER_GPU=$ppg
    fi
  done
fi

if has vnodes; then
  # Two virtual nodes of one GPU each: the step between them goes through the
  # system MPI (host staging) or NCCL.
  ALGOS=mpi,mpi-1pg,nccl,lane:mpi,lane:nccl,hier:mpi
  for ppg in ${PPG_VNODES:-1 2 4 8}; do
    bench "vnodes-ppg$ppg" $((2 * ppg)) MULTILANE_RANKS_PER_GPU=$ppg MULTILANE_RANKS_PER_NODE=$ppg
  done
  for ppg in ${MPS_VNODES:-}; do
    with_mps bench "vnodes-ppg$ppg-mps" $((2 * ppg)) MULTILANE_RANKS_PER_GPU=$ppg MULTILANE_RANKS_PER_NODE=$ppg
  done
fi

if has small; then
  # Device calls of 4 KiB to 1 MiB on one node with several ranks per GPU
  # (docs/gpu.md, the flag path): the host-synchronised path (flag path off)
  # and the flag path (up to FLAG_MAX_SMALL, 1M) with either stream rule,
  # under MPS, interleaved REPEATS_SMALL (3) times so that medians can be
  # compared; and once without MPS (the flag path cannot run there).
  ALGOS=${ALGOS_SMALL:-mpi,lane,hier}
  fm=${FLAG_MAX_SMALL:-1M}
  for ppg in ${PPG_SMALL:-2 4}; do
    np=$((NGPU * ppg))
    MAX_BYTES=1M bench "small-ppg$ppg-nomps" $np MULTILANE_RANKS_PER_GPU=$ppg
    for rep in $(seq "${REPEATS_SMALL:-3}"); do
      MAX_BYTES=1M with_mps bench "small-ppg$ppg-mps-flagoff-r$rep" $np MULTILANE_RANKS_PER_GPU=$ppg \
        MULTILANE_DEVICE_FLAG_MAX=0
      MAX_BYTES=1M with_mps bench "small-ppg$ppg-mps-device-r$rep" $np MULTILANE_RANKS_PER_GPU=$ppg \
        MULTILANE_DEVICE_FLAG_MAX=$fm
      MAX_BYTES=1M with_mps bench "small-ppg$ppg-mps-stream-r$rep" $np MULTILANE_RANKS_PER_GPU=$ppg \
        MULTILANE_DEVICE_FLAG_MAX=$fm MULTILANE_DEVICE_SYNC=stream
    done
  done
  /usr/bin/python3 scripts/small_summary.py "$OUT" > "$OUT/small-summary.md" && cat "$OUT/small-summary.md"
fi

if has single || has vnodes; then
  /usr/bin/python3 scripts/bench_summary.py "$OUT" > "$OUT/summary.md" && cat "$OUT/summary.md"
fi
