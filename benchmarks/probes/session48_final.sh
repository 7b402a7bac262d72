# Forty-eighth session (float matrices on the narrow plan), on an H100, two calls on one build:
#   session48_final.sh bench TAG   build, the narrow plan's tests, where the narrow plan beats the
#                                  float plans (narrow_probe.py floats), the benchmark with its
#                                  ceilings (tag h100_TAG)
#   session48_final.sh tier        the whole GPU tier on that build (session46_final.sh's own step)
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
if [ "$1" = bench ]; then
  source benchmarks/probes/session46_build.sh
  echo "build $(( $(date +%s) - t0 )) s"
  APSP_REQUIRE_GPU=1 timeout 150 python -m pytest -m gpu tests/test_gpu_engine.py -k "narrow or exception_between_rounds" -q -p no:cacheprovider -p no:benchmark -rfE -n 12 > $OUT/narrow_tests.txt 2>&1
  echo "narrow tests rc $? $(( $(date +%s) - t0 )) s"; tail -8 $OUT/narrow_tests.txt
  timeout 90 python benchmarks/probes/narrow_probe.py floats > $OUT/narrow_floats.txt 2>&1
  echo "floats probe rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/narrow_floats.txt
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_$2 > $OUT/bench_log.txt 2>&1; echo "bench rc $?"
  grep -i "narrow\|ceilings" $OUT/bench_log.txt
  echo "bench $(( $(date +%s) - t0 )) s"
else
  bash benchmarks/probes/session46_final.sh tier
fi
