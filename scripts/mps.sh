#!/usr/bin/env bash
# Starts or stops a private NVIDIA MPS control daemon, so that the kernels of
# several ranks on one GPU run concurrently instead of time-sliced.
#   scripts/mps.sh start DIR   # pipes in DIR/pipe, logs in DIR/log
#   scripts/mps.sh stop DIR
# Processes use the daemon when CUDA_MPS_PIPE_DIRECTORY=DIR/pipe is in their
# environment (mpirun -x CUDA_MPS_PIPE_DIRECTORY).  Whoever starts it must stop
# it, also on failure: `trap "scripts/mps.sh stop DIR" EXIT`.
set -euo pipefail
action=${1:-}
dir=${2:-}
if [ -z "$action" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi
export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe"
export CUDA_MPS_LOG_DIRECTORY="$dir/log"
case "$action" in
  start)
    command -v nvidia-cuda-mps-control >/dev/null || { echo "mps: nvidia-cuda-mps-control not found: install the NVIDIA driver utilities" >&2; exit 1; }
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    chmod 700 "$dir" "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d
    # The daemon answers once it is up.
    for _ in $(seq 50); do
      if echo get_server_list | nvidia-cuda-mps-control >/dev/null 2>&1; then
        echo "mps: daemon up, pipes in $CUDA_MPS_PIPE_DIRECTORY"
        exit 0
      fi
      sleep 0.1
    done
    echo "mps: the daemon did not answer; see $CUDA_MPS_LOG_DIRECTORY/control.log" >&2
    exit 1
    ;;
  stop)
    if [ -S "$CUDA_MPS_PIPE_DIRECTORY/control" ] || [ -p "$CUDA_MPS_PIPE_DIRECTORY/control" ]; then
      echo quit | nvidia-cuda-mps-control || true
      echo "mps: daemon stopped"
    fi
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
