# gpu-host-build.sh: the build step the results scripts of the GPU host share.
# Source it from the tree's root, with OUT set, then call
#   gpu_host_build TARGET...
# It unpacks the Debian 12 headers that the host lacks, from .debs/
# (libsqlite3-dev, libcli11-dev, nlohmann-json3-dev), into /tmp/pfx. It sets
# the environment of every run there (scripts/env.sh, NCCL_NVLS_ENABLE=0, CUDA
# on PATH, Open MPI as root) and configures a Release build without the Slurm
# plugin in build/e. It builds TARGET... and sets B to the build folder's
# absolute path. A failed step prints the end of its log ($OUT/cfg.log or
# $OUT/build.log) and exits 1.
gpu_host_build() {
  local prefix=/tmp/pfx deb
  mkdir -p $prefix
  for deb in .debs/*.deb; do dpkg -x "$deb" $prefix; done
  source scripts/env.sh
  export NCCL_NVLS_ENABLE=0 PATH=$PATH:/usr/local/cuda/bin OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  B=build/e
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DMULTILANE_SPANK=OFF -DCMAKE_PREFIX_PATH=$prefix/usr \
    -DSQLite3_INCLUDE_DIR=$prefix/usr/include -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \
    > "$OUT/cfg.log" 2>&1 || { tail -30 "$OUT/cfg.log"; exit 1; }
  cmake --build $B -j 16 --target "$@" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  B=$PWD/$B
}
