# Fiftieth session, on an H100:
#   session50.sh probe       (with host_pins.patch applied) build, the host-pins tests and the
#                            arriving-path tests, the registered-against-staged probe
#                            (host_pins.py)
#   session50.sh sanitize    (with host_pins.patch applied) build, the tier's own sanitizer test,
#                            memcheck over registered solves (host_pins_sanitize.py)
#   session50.sh bench TAG   build, the sampled-input, hub, narrow and arriving tests, the
#                            benchmark with its ceilings (tag h100_TAG)
#   session50.sh tier        the GPU tier but the sanitizer test, on the build of a call before
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
if [ "$1" = probe ]; then
  source benchmarks/probes/session46_build.sh
  echo "build $(( $(date +%s) - t0 )) s"
  APSP_REQUIRE_GPU=1 timeout 200 python -m pytest -m gpu tests/test_gpu_engine.py -k "host_pins or arriving or two_threads" -q -p no:cacheprovider -p no:benchmark -rfE -n 8 > $OUT/pins_tests.txt 2>&1
  echo "pins tests rc $? $(( $(date +%s) - t0 )) s"; tail -8 $OUT/pins_tests.txt
  timeout 150 python benchmarks/probes/host_pins.py > $OUT/host_pins.txt 2> $OUT/host_pins_trace.txt
  echo "probe rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/host_pins.txt; grep -v "^apsp cuda: plan" $OUT/host_pins_trace.txt | head -60
elif [ "$1" = bench ]; then
  source benchmarks/probes/session46_build.sh
  echo "build $(( $(date +%s) - t0 )) s"
  APSP_REQUIRE_GPU=1 timeout 150 python -m pytest -m gpu tests/test_gpu_engine.py -k "sampled_for_narrow or hub or narrow or arriving or round_loop_by_size" -q -p no:cacheprovider -p no:benchmark -rfE -n 12 > $OUT/sampled_tests.txt 2>&1
  echo "sampled tests rc $? $(( $(date +%s) - t0 )) s"; tail -8 $OUT/sampled_tests.txt
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_$2 > $OUT/bench_log.txt 2>&1; echo "bench rc $?"
  grep -i "host\|numpy\|ceilings\|hub" $OUT/bench_log.txt | head -30
  echo "bench $(( $(date +%s) - t0 )) s"
elif [ "$1" = sanitize ]; then
  source benchmarks/probes/session46_build.sh
  echo "build $(( $(date +%s) - t0 )) s"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 python benchmarks/probes/host_pins_sanitize.py > $OUT/pins_memcheck.txt 2>&1
  echo "pins memcheck rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/pins_memcheck.txt
  APSP_REQUIRE_GPU=1 timeout 250 python -m pytest -m gpu tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -n 2 > $OUT/sanitizer_tests.txt 2>&1
  echo "sanitizer tests rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/sanitizer_tests.txt
else
  python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/apsp-site .whl/*.whl > /dev/null 2>&1
  export PYTHONPATH=/tmp/apsp-site
  APSP_REQUIRE_GPU=1 timeout 585 python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEx -n 12 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"
  tail -15 $OUT/tests.txt
fi
