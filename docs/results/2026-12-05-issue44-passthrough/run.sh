# Issue 44 item 6 on the GPU host: the library's own cost per call, old and new side by side.
# Run from the repository root there, with .debs/ (libsqlite3-dev, libcli11-dev, nlohmann-json3-dev)
# and build/old-src.tar (git archive 69979b7: main before this step).  $OUT: where the figures go.
set -e; export NCCL_NVLS_ENABLE=0; P=$PWD/build/pfx; mkdir -p $P build/old-src; for d in .debs/*.deb; do dpkg -x $d $P; done
tar -xf build/old-src.tar -C build/old-src
export PATH=$PATH:/usr/local/cuda/bin
A="-DCMAKE_PREFIX_PATH=$P/usr -DSQLite3_INCLUDE_DIR=$P/usr/include -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 -DMULTILANE_SPANK=OFF -DMULTILANE_BUILD_TESTS=OFF -DMULTILANE_CUDA=ON -DCMAKE_BUILD_TYPE=Release"
# The GPU tests (scripts/gpu-run.sh: Release build with the tests in build/gpu), whose bench and library then
# stand for the new tree.
export CMAKE_ARGS="-DCMAKE_PREFIX_PATH=$P/usr -DSQLite3_INCLUDE_DIR=$P/usr/include -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 -DMULTILANE_SPANK=OFF -DMULTILANE_BUILD_TESTS=ON"
# GPU_TESTS=0: the new tree built without its tests, for the figures alone.
if [ "${GPU_TESTS:-1}" = 1 ]; then
  rm -rf build/gpu; timeout 330 bash scripts/gpu-run.sh $OUT/gpu build test > $OUT/gpu-run.txt 2>&1 || echo "GPU TESTS FAILED rc=$?" >> $OUT/gpu-run.txt
  tail -5 $OUT/gpu-run.txt
else
  (cmake -S . -B build/gpu -G Ninja $A > $OUT/build.log 2>&1 && cmake --build build/gpu -j16 >> $OUT/build.log 2>&1) || { tail -30 $OUT/build.log; exit 1; }
fi
(cmake -S build/old-src -B build/old -G Ninja $A > $OUT/old.log 2>&1 && cmake --build build/old -j16 >> $OUT/old.log 2>&1) || { tail -30 $OUT/old.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=build/gpu/benchmarks/mlallreduce_bench
{ nvidia-smi -L; mpirun --version | head -1; lscpu | grep "Model name"; } > $OUT/host.txt 2>&1 || true
PROF="multilane-profile 1; host 0 2M passthrough; host 2M inf lane; device 0 2M passthrough; device 2M inf lane"
for rep in 1 2; do
 for mem in host cuda; do
  for lib in old new; do
   LP=""; [ $lib = old ] && LP="-x LD_LIBRARY_PATH=$PWD/build/old/libmlallreduce"
   echo "=== rep $rep lib $lib mem $mem" >> $OUT/overhead.txt
   timeout 120 mpirun --bind-to core -np 1 $LP -x "MULTILANE_PROFILE=$PROF" \
     $B -b 8 -e 1M -f 2 -a mpi -m $mem --overhead > $OUT/raw-$rep-$lib-$mem.txt 2>&1 || echo FAILED >> $OUT/overhead.txt
   sed -n '/^# overhead/,$p' $OUT/raw-$rep-$lib-$mem.txt >> $OUT/overhead.txt
  done
 done
done
nvcc -O2 -o build/ptrattr docs/results/2026-12-05-issue44-overhead/ptrattr.cu -lcuda && build/ptrattr > $OUT/ptrattr.txt 2>&1 || true
cat $OUT/overhead.txt $OUT/ptrattr.txt
