# Fifty-fourth session, on two lent H200s (nvidia-h200-x2), with apsp built on this session's own
# machine (a cp312 wheel, APSP_CUDA_ARCHITECTURES=90-real APSP_NATIVE=OFF, nvcc 13.0) and carried
# in .whl/ with the notebook runner's wheels, which the H200 image lacks (it replaces the
# fifty-third session's session53.sh, in git history):
#   session54.sh tier   the tests that need two GPUs and this session's new ones, verbose, then the
#                       whole GPU tier but the sanitizer test
#   session54.sh mend   the new and two-GPU tests and tests/test_device_arrays.py again, memcheck
#                       and racecheck over the mend's driver (its pool now runs out too), then the
#                       mend's cost (session53_pred_mend.py --cost-only)
#   session54.sh bench TAG  the GPU benchmark (tag TAG; the ceiling and course-baseline programs
#                       carried in build/gpu-bench)
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
nvidia-smi -L
python benchmarks/machine_facts.py > $OUT/machine_facts.txt 2>&1
echo "install $(( $(date +%s) - t0 )) s"
if [ "$1" = tier ]; then
  APSP_REQUIRE_GPU=1 timeout 120 python -m pytest tests -q -p no:cacheprovider -p no:benchmark -rfEsx -v \
    -k "another_device or two_gpus or outlives or interface_producer or searches_run_out or many_loops" > $OUT/new_tests.txt 2>&1
  echo "new and two-GPU tests rc $? $(( $(date +%s) - t0 )) s"; grep -c PASSED $OUT/new_tests.txt; grep -i "fail\|skip\|error" $OUT/new_tests.txt | head -20; tail -2 $OUT/new_tests.txt
  APSP_REQUIRE_GPU=1 timeout -k 5 $(( 570 - ($(date +%s) - t0) )) python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEsx -n 16 > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; tail -6 $OUT/tests.txt; exit 0
elif [ "$1" = mend ]; then
  APSP_REQUIRE_GPU=1 timeout 150 python -m pytest tests -q -p no:cacheprovider -p no:benchmark -rfEsx -n 8 \
    -k "another_device or two_gpus or outlives or interface_producer or searches_run_out or many_loops or test_device_arrays" > $OUT/new_tests.txt 2>&1
  echo "new, two-GPU and device-array tests rc $? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/new_tests.txt
  for tool in memcheck racecheck; do
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 python benchmarks/probes/mend_sanitize.py > $OUT/mend_$tool.txt 2>&1
    echo "$tool rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/mend_$tool.txt
  done
  left=$(( 585 - ($(date +%s) - t0) ))
  [ $left -gt 30 ] && timeout $left python benchmarks/probes/session53_pred_mend.py --cost-only > $OUT/pred_mend.txt 2>&1
  echo "probe $(( $(date +%s) - t0 )) s"; cat $OUT/pred_mend.txt 2>/dev/null; exit 0
elif [ "$1" = bench ]; then
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag $2 > $OUT/bench_log.txt 2>&1; echo "bench rc $? $(( $(date +%s) - t0 )) s"
  grep -i "ceiling\|n= 10000\|n=  1024\|n=   256" $OUT/bench_log.txt | head -12; exit 0
fi
