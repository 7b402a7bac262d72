# Forty-ninth session (the hub bound; Ctrl-C between upload chunks), on an H100, two calls on one
# build:
#   session49.sh bench TAG   build, the hub and narrow tests, the Ctrl-C tests alone, how soon
#                            Ctrl-C stops a float32 upload (upload_interrupt.py), the benchmark
#                            with its ceilings (tag h100_TAG)
#   session49.sh sanitize    build, compute-sanitizer memcheck and racecheck over hub-bound
#                            solves (hub_sanitize.py), and the tier's own sanitizer test
#   session49.sh tier        the rest of the GPU tier on that build (with the sanitizer test,
#                            the whole tier outgrew one 600 s call: 99% done at 570 s)
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
if [ "$1" = bench ]; then
  source benchmarks/probes/session46_build.sh
  echo "build $(( $(date +%s) - t0 )) s"
  APSP_REQUIRE_GPU=1 timeout 150 python -m pytest -m gpu tests/test_gpu_engine.py -k "hub or narrow or round_loop_by_size or integer_weighted_floats" -q -p no:cacheprovider -p no:benchmark -rfE -n 12 > $OUT/hub_tests.txt 2>&1
  echo "hub tests rc $? $(( $(date +%s) - t0 )) s"; tail -8 $OUT/hub_tests.txt
  APSP_REQUIRE_GPU=1 timeout 80 python -m pytest -m gpu tests/test_semantics.py -k "keyboard_interrupt and cuda" -q -p no:cacheprovider -p no:benchmark > $OUT/interrupt_alone.txt 2>&1
  echo "interrupt tests rc $? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/interrupt_alone.txt
  timeout 60 python benchmarks/probes/upload_interrupt.py > $OUT/upload_interrupt.txt 2>&1
  echo "upload probe rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/upload_interrupt.txt
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_$2 > $OUT/bench_log.txt 2>&1; echo "bench rc $?"
  grep -i "hub\|narrow\|ceilings" $OUT/bench_log.txt
  echo "bench $(( $(date +%s) - t0 )) s"
elif [ "$1" = sanitize ]; then
  source benchmarks/probes/session46_build.sh
  echo "build $(( $(date +%s) - t0 )) s"
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 python benchmarks/probes/hub_sanitize.py > $OUT/hub_$tool.txt 2>&1
    echo "hub $tool rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/hub_$tool.txt
  done
  APSP_REQUIRE_GPU=1 timeout 250 python -m pytest -m gpu tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -n 2 > $OUT/sanitizer_tests.txt 2>&1
  echo "sanitizer tests rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/sanitizer_tests.txt
else
  python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/apsp-site .whl/*.whl > /dev/null 2>&1
  export PYTHONPATH=/tmp/apsp-site
  APSP_REQUIRE_GPU=1 timeout 585 python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEx -n 12 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"
  tail -15 $OUT/tests.txt
fi
