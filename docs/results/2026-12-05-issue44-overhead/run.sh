set -e; export NCCL_NVLS_ENABLE=0; P=$PWD/build/pfx; mkdir -p $P; for d in .debs/*.deb; do dpkg -x $d $P; done
export PATH=$PATH:/usr/local/cuda/bin
A="-DCMAKE_PREFIX_PATH=$P/usr -DSQLite3_INCLUDE_DIR=$P/usr/include -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 -DMULTILANE_SPANK=OFF -DMULTILANE_BUILD_TESTS=OFF -DMULTILANE_CUDA=ON -DCMAKE_BUILD_TYPE=Release"
(cmake -S . -B build/gpu -G Ninja $A > $OUT/build.log 2>&1 && cmake --build build/gpu -j16 >> $OUT/build.log 2>&1) || { tail -30 $OUT/build.log; exit 1; }
(cmake -S build/old-src  # git archive 4fee8b5 (main before this step) -B build/old -G Ninja $A > $OUT/old.log 2>&1 && cmake --build build/old -j16 >> $OUT/old.log 2>&1) || { tail -30 $OUT/old.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=build/gpu/benchmarks/mlallreduce_bench
readelf -d $B | grep -i path > $OUT/runpath.txt || true
PROF="multilane-profile 1; host 0 2M passthrough; host 2M inf lane; device 0 2M passthrough; device 2M inf lane"
for rep in 1 2; do
for lib in old new; do
 LP=""; [ $lib = old ] && LP="-x LD_LIBRARY_PATH=$PWD/build/old/libmlallreduce"
 for mem in host cuda; do
  echo "=== rep $rep lib $lib mem $mem" | tee -a $OUT/overhead.txt
  timeout 120 mpirun --oversubscribe --bind-to core -np 2 $LP -x MULTILANE_VERBOSE=1 -x "MULTILANE_PROFILE=$PROF" \
    $B -b 8 -e 1M -f 8 -a mpi -m $mem --overhead > $OUT/raw-$rep-$lib-$mem.txt 2>&1 || echo FAILED
  grep -E "MPI family|libmlallreduce" $OUT/raw-$rep-$lib-$mem.txt | head -2 >> $OUT/overhead.txt || true
  sed -n '/^# overhead/,$p' $OUT/raw-$rep-$lib-$mem.txt | tee -a $OUT/overhead.txt
 done
done
done
# The command, 16 ranks as 2 virtual nodes of 8, host buffers, CUDA in the process (-m cuda has device buffers: host here)
for run in 1 2 3; do
  echo "=== issue command run $run" >> $OUT/bench16.txt
  timeout 200 mpirun --oversubscribe --bind-to core -np 16 -x MULTILANE_RANKS_PER_NODE=8 -x "MULTILANE_PROFILE=$PROF" \
    $B -b 8 -e 1M -f 8 -a mpi,passthrough,auto,mpi-best --overhead 2>&1 | grep -vE "^# [A-Z]|^$" >> $OUT/bench16.txt || echo FAILED16
done
tail -20 $OUT/bench16.txt
