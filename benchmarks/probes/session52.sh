# Fifty-second session, on an H100, with apsp built on this session's own machine (a cp312 wheel,
# APSP_CUDA_ARCHITECTURES=90-real APSP_NATIVE=OFF, nvcc 13.0) and the benchmark's ceiling and
# course-baseline programs (nvcc -arch=sm_90) carried in .whl/ and build/gpu-bench, so no device
# time goes to the build:
#   session52.sh tier TAG    the interop probes (session52_interop.py), the torch tests of the CPU
#                            tier (torch is there), the whole GPU tier but the sanitizer test, then
#                            the benchmark with its ceilings (tag h100_TAG) if time is left
#   session52.sh gpu         the whole GPU tier but the sanitizer test, alone (585 s)
#   session52.sh final TAG   the predecessor loops probe, the GPU tier's predecessor tests (every
#                            test named *pred*) and the CPU tier's new test, then the benchmark
#   session52.sh all TAG     the whole GPU tier but the sanitizer test, then the benchmark (tag
#                            h100_TAG), one call on the carried build
#   session52.sh pred        the float predecessor loops probe (session52_pred_loops.py), the CPU
#                            tier's new test, then the whole GPU tier but the sanitizer test
#   session52.sh bench TAG   the benchmark alone (tag h100_TAG)
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/apsp-site .whl/*.whl > $OUT/install.txt 2>&1 || { tail -20 $OUT/install.txt; exit 1; }
export PYTHONPATH=/tmp/apsp-site
python -c "import apsp, json; print(json.dumps(apsp.info()))"
python benchmarks/machine_facts.py > $OUT/machine_facts.txt 2>&1
echo "install $(( $(date +%s) - t0 )) s"
if [ "$1" = all ]; then
  APSP_REQUIRE_GPU=1 timeout -k 5 500 python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEx -n 14 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tests.txt
  pkill -f "pytest" ; sleep 1  # no worker left beside the benchmark
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_$2 > $OUT/bench_log.txt 2>&1; echo "bench rc $? $(( $(date +%s) - t0 )) s"
  grep -i "ceiling\|n= 10000\|n=  1024\|n=   256" $OUT/bench_log.txt | head -12; exit 0
elif [ "$1" = final ]; then
  timeout 150 python benchmarks/probes/session52_pred_loops.py > $OUT/pred_loops.txt 2>&1
  echo "pred probe rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/pred_loops.txt | tail -8
  timeout 60 python -m pytest tests/test_cpu_engine_kernels.py -k zero_weight -q -p no:cacheprovider -p no:benchmark > $OUT/cpu_pred_tests.txt 2>&1
  echo "cpu pred tests rc $?"; tail -2 $OUT/cpu_pred_tests.txt
  APSP_REQUIRE_GPU=1 timeout 240 python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -k "pred or zero_weight" -q -p no:cacheprovider -p no:benchmark -rfEx -n 14 > $OUT/pred_tests.txt 2>&1
  echo "gpu pred tests rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/pred_tests.txt
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_$2 > $OUT/bench_log.txt 2>&1; echo "bench rc $? $(( $(date +%s) - t0 )) s"
  grep -i "ceiling\|n= 10000\|n=  1024\|n=   256" $OUT/bench_log.txt | head -12; exit 0
elif [ "$1" = pred ]; then
  timeout 150 python benchmarks/probes/session52_pred_loops.py > $OUT/pred_loops.txt 2>&1
  echo "pred probe rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/pred_loops.txt | tail -8
  timeout 60 python -m pytest tests/test_cpu_engine_kernels.py -k zero_weight -q -p no:cacheprovider -p no:benchmark > $OUT/cpu_pred_tests.txt 2>&1
  echo "cpu pred tests rc $?"; tail -2 $OUT/cpu_pred_tests.txt
  APSP_REQUIRE_GPU=1 timeout $(( 590 - ($(date +%s) - t0) )) python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEx -n 14 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; tail -12 $OUT/tests.txt; exit 0
elif [ "$1" = gpu ]; then
  APSP_REQUIRE_GPU=1 timeout 585 python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEx -n 14 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; tail -12 $OUT/tests.txt; exit 0
elif [ "$1" = bench ]; then
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_$2 > $OUT/bench_log.txt 2>&1; echo "bench rc $? $(( $(date +%s) - t0 )) s"
  grep -i "ceiling\|n= 10000\|n=  1024\|n=   256" $OUT/bench_log.txt | head -12; exit 0
fi
timeout 120 python benchmarks/probes/session52_interop.py > $OUT/interop.txt 2>&1
echo "interop rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/interop.txt | cut -c1-300
timeout 120 python -m pytest -m "not gpu" tests/test_device_arrays.py tests/test_semantics.py -k "torch or cai or capsule" -q -p no:cacheprovider -p no:benchmark -rfEs > $OUT/cpu_torch_tests.txt 2>&1
echo "cpu torch tests rc $? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/cpu_torch_tests.txt
APSP_REQUIRE_GPU=1 timeout 360 python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEx -n 14 > $OUT/tests.txt 2>&1
echo "tier rc $? $(( $(date +%s) - t0 )) s"; tail -12 $OUT/tests.txt
if [ "$1" = tier ] && [ $(( $(date +%s) - t0 )) -lt 480 ]; then
  timeout $(( 585 - ($(date +%s) - t0) )) python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_$2 > $OUT/bench_log.txt 2>&1; echo "bench rc $? $(( $(date +%s) - t0 )) s"
  grep -i "ceiling\|n= 10000\|n=  1024\|n=   256" $OUT/bench_log.txt | head -20
fi
