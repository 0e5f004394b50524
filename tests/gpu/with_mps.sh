#!/usr/bin/env bash
# Runs a command under a private NVIDIA MPS control daemon (scripts/mps.sh),
# stopped again however the command ends.  The command sees
# CUDA_MPS_PIPE_DIRECTORY (pass it on: mpirun -x CUDA_MPS_PIPE_DIRECTORY).
# Exits 77 (CTest: skipped) where there is no GPU or no MPS control program.
#   tests/gpu/with_mps.sh COMMAND...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "with_mps: no GPU visible: skipped"
  exit 77
fi
if ! command -v nvidia-cuda-mps-control >/dev/null; then
  echo "with_mps: nvidia-cuda-mps-control not found: skipped"
  exit 77
fi
dir=$(mktemp -d /tmp/mla-test-mps.XXXXXX)
trap 'bash "$here/../../scripts/mps.sh" stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
bash "$here/../../scripts/mps.sh" start "$dir"
export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe"
"$@"
