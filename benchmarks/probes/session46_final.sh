# Forty-sixth session, the final code on an H100, two calls on one build:
#   session46_final.sh bench   build, the benchmark with its ceiling (bench_gpu.py), what a new
#                              buffer's graph building costs (graph_first_call.py), device syncs
#                              beside graph building (capture_race.py sync)
#   session46_final.sh tier    the whole GPU tier on that build (carried wheels for the notebooks)
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
if [ "$1" = bench ]; then
  source benchmarks/probes/session46_build.sh
  echo "build $(( $(date +%s) - t0 )) s"
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_s46 > $OUT/bench_log.txt 2>&1; echo "bench rc $?"
  tail -5 $OUT/bench_log.txt
  echo "bench $(( $(date +%s) - t0 )) s"
  python benchmarks/probes/graph_first_call.py 2>&1 | tee $OUT/first_call.txt
  timeout 100 python benchmarks/probes/capture_race.py sync 2>&1 | tail -2 | tee $OUT/device_sync.txt
  echo "done $(( $(date +%s) - t0 )) s"
else
  python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/apsp-site .whl/*.whl > /dev/null 2>&1
  export PYTHONPATH=/tmp/apsp-site
  APSP_REQUIRE_GPU=1 timeout 570 python -m pytest -m gpu tests -q -p no:cacheprovider -p no:benchmark -rfEx -n 12 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"
  tail -15 $OUT/tests.txt
fi
