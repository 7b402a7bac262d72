# Forty-seventh session, the final code on an H100, two calls on one build:
#   session47_final.sh bench   build, the narrow plan's tests, the benchmark with its ceilings
#   session47_final.sh tier    the whole GPU tier on that build (carried wheels for the notebooks)
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
if [ "$1" = bench ]; then
  source benchmarks/probes/session46_build.sh
  echo "build $(( $(date +%s) - t0 )) s"
  APSP_REQUIRE_GPU=1 timeout 200 python -m pytest -m gpu tests/test_gpu_engine.py -k narrow -q -p no:cacheprovider -n 8 > $OUT/narrow_tests.txt 2>&1
  echo "narrow tests rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/narrow_tests.txt
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_$2 > $OUT/bench_log.txt 2>&1; echo "bench rc $?"
  grep -i "narrow\|ceilings" $OUT/bench_log.txt
  echo "bench $(( $(date +%s) - t0 )) s"
else
  python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/apsp-site .whl/*.whl > /dev/null 2>&1
  export PYTHONPATH=/tmp/apsp-site
  APSP_REQUIRE_GPU=1 timeout 570 python -m pytest -m gpu tests -q -p no:cacheprovider -p no:benchmark -rfEx -n 12 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"
  tail -15 $OUT/tests.txt
fi
