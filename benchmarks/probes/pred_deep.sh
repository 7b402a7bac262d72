# A/B/C probe: the general predecessor plan in super-rounds of four 32-wide blocks with phase 3 at
# k-depth 128 (the working tree: minplus_pred_deep_kernel on 32 x 32 tiles; the fortieth session's
# run, results/gpu_h100_s40_pred_deep.txt, had kPredDeepMinN at 0, so its small n took them too),
# on 64 x 64 tiles (pred_deep64.patch), and one 32-wide round at a time (pred_deep.patch, the
# change against dbe0b17, taken off a copy), the plan forced (APSP_CUDA_TILES=pred32), the engine's
# choice at n = 10000 (the tagged plan: unchanged code, as a control); the builds timed in turn
# twice by time_large.py. First the predecessor GPU tests under both new builds.
# Usage: bash benchmarks/probes/pred_deep.sh (OUT set: device tool)
source benchmarks/probes/build_beside.sh
build_old() {  # the tree without the patch, into /tmp/site1
  local src=/tmp/src1
  mkdir -p $src /tmp/tmp1 && cp -r CMakeLists.txt pyproject.toml README.md python cpp src $src/ \
    && (cd $src && patch -s -R -p1 < $R/benchmarks/probes/pred_deep.patch) \
    && TMPDIR=/tmp/tmp1 APSP_CUDA_ARCHITECTURES=90-real python -m pip install --no-build-isolation \
         --no-deps -q --target /tmp/site1 $src > /tmp/build1.log 2>&1 \
    || { echo "build old failed"; tail -20 /tmp/build1.log; }
}
build_main &
build_old &
build_patched 2 pred_deep64.patch &
wait_builds
F=$OUT/pred_deep.txt
APSP_REQUIRE_GPU=1 timeout 300 python -m pytest -m gpu tests/test_gpu_engine.py -q -p no:cacheprovider \
  -p no:benchmark -n 4 -k "pred or argmin or tagged" 2>&1 | tail -2 | tee -a $F
PYTHONPATH=/tmp/site2 APSP_REQUIRE_GPU=1 timeout 300 python -m pytest -m gpu tests/test_gpu_engine.py \
  -q -p no:cacheprovider -p no:benchmark -n 4 -k "pred or argmin or tagged" 2>&1 | tail -2 | tee -a $F
I="int32:512:pred32 int32:768:pred32 int32:1024:pred32 int32:1536:pred32 int32:2048:pred32"
I="$I int32:4096:pred32 int32:10000:pred32 int64:4096:pred32 int32:10000"
FL="float32:10000:pred32 float64:10000:pred32"
for pass in 1 2; do
  for build in new32 new64 old; do
    case $build in new32) unset PYTHONPATH ;; new64) export PYTHONPATH=/tmp/site2 ;;
      old) export PYTHONPATH=/tmp/site1 ;; esac
    echo "== $build (pass $pass)" | tee -a $F
    python benchmarks/probes/time_large.py $I --pred --best 1 2>&1 | tee -a $F
    python benchmarks/probes/time_large.py $FL --pred --fractional --best 1 2>&1 | tee -a $F
  done
done
unset PYTHONPATH
