# Forty-ninth session (the hub bound; Ctrl-C between upload chunks), on an H100, two calls on one
# build:
#   session49.sh bench TAG   build, the hub and narrow tests, the Ctrl-C tests alone, how soon
#                            Ctrl-C stops a float32 upload (upload_interrupt.py), the benchmark
#                            with its ceilings (tag h100_TAG)
#   session49.sh tier        the whole GPU tier on that build (session46_final.sh's own step)
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
else
  bash benchmarks/probes/session46_final.sh tier
fi
