# Fifty-third session, on the lent H200, with apsp built on this session's own machine (a cp312
# wheel, APSP_CUDA_ARCHITECTURES=90-real APSP_NATIVE=OFF, nvcc 13.0) and the benchmark's ceiling
# and course-baseline programs (nvcc -arch=sm_90) carried in .whl/ and build/gpu-bench (it
# replaces the fifty-second session's session52.sh, in git history):
#   session53.sh mend     the device mend's tests (every GPU and CPU test named *mend* or
#                         *zero_weight*), memcheck and racecheck over its driver, the probe
#                         (loops left, and the mend's cost)
#   session53.sh all TAG  the whole GPU tier but the sanitizer test, then the benchmark (tag TAG)
#   session53.sh final  the whole GPU tier but the sanitizer test (the notebook runner's wheels
#                         carried), memcheck and racecheck over the mend's driver, then the mend's
#                         cost if time is left
#   session53.sh extra TAG  the GPU notebook test (its runner carried as wheels in .whl/, which the
#                         H200 image lacks), then the predecessor benchmark (tag TAG)
# Built here first (a Python 3.12 venv with pybind11, scikit-build-core, cmake, ninja):
#   APSP_CUDA_ARCHITECTURES=90-real APSP_NATIVE=OFF python3.12 -m pip wheel --no-build-isolation \
#     --no-deps -w .whl .
#   for f in ceiling baseline_course; do nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 \
#     -Isrc benchmarks/$f.cu -o build/gpu-bench/$f; done
# and run with carry [".whl", "build/gpu-bench"]; the notebook runner's wheels by
#   pip download --only-binary=:all: --python-version 3.12 ... nbclient nbformat ipykernel
# less those the image has.
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/apsp-site .whl/*.whl > $OUT/install.txt 2>&1 || { tail -20 $OUT/install.txt; exit 1; }
export PYTHONPATH=/tmp/apsp-site
python -c "import apsp, json; print(json.dumps(apsp.info()))"
python benchmarks/machine_facts.py > $OUT/machine_facts.txt 2>&1
echo "install $(( $(date +%s) - t0 )) s"
if [ "$1" = mend ]; then
  APSP_REQUIRE_GPU=1 timeout 200 python -m pytest tests -k "mend or zero_weight" -q -p no:cacheprovider -p no:benchmark -rfEx -n 8 > $OUT/mend_tests.txt 2>&1
  echo "mend tests rc $? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/mend_tests.txt
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 python benchmarks/probes/mend_sanitize.py > $OUT/mend_$tool.txt 2>&1
    echo "$tool rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/mend_$tool.txt
  done
  timeout $(( 580 - ($(date +%s) - t0) )) python benchmarks/probes/session53_pred_mend.py > $OUT/pred_mend.txt 2>&1
  echo "probe rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/pred_mend.txt; exit 0
elif [ "$1" = all ]; then
  APSP_REQUIRE_GPU=1 timeout -k 5 500 python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEx -n 14 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tests.txt
  pkill -f "pytest" ; sleep 1  # no worker left beside the benchmark
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag $2 > $OUT/bench_log.txt 2>&1; echo "bench rc $? $(( $(date +%s) - t0 )) s"
  grep -i "ceiling\|n= 10000\|n=  1024\|n=   256" $OUT/bench_log.txt | head -12; exit 0
elif [ "$1" = final ]; then
  APSP_REQUIRE_GPU=1 timeout -k 5 440 python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEx -n 14 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tests.txt
  pkill -f "pytest" ; sleep 1
  for tool in memcheck racecheck; do
    timeout 130 compute-sanitizer --tool $tool --error-exitcode 9 python benchmarks/probes/mend_sanitize.py > $OUT/mend_$tool.txt 2>&1
    echo "$tool rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/mend_$tool.txt
  done
  left=$(( 585 - ($(date +%s) - t0) ))
  [ $left -gt 30 ] && timeout $left python benchmarks/probes/session53_pred_mend.py --cost-only > $OUT/pred_mend.txt 2>&1
  echo "probe $(( $(date +%s) - t0 )) s"; cat $OUT/pred_mend.txt 2>/dev/null; exit 0
elif [ "$1" = extra ]; then
  APSP_REQUIRE_GPU=1 timeout 200 python -m pytest -m gpu tests/test_notebooks.py -q -p no:cacheprovider -p no:benchmark -rfEx > $OUT/notebook_tests.txt 2>&1
  echo "notebook tests rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/notebook_tests.txt
  timeout $(( 420 - ($(date +%s) - t0) )) python benchmarks/bench_pred.py --out $OUT --tag $2 > $OUT/pred_log.txt 2>&1
  echo "bench_pred rc $? $(( $(date +%s) - t0 )) s"; tail -30 $OUT/pred_log.txt; exit 0
fi
