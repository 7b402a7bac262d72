export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
APSP_CUDA_ARCHITECTURES=90-real python -m pip install --no-build-isolation --no-deps -q . > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
python benchmarks/probes/interrupt_latency.py 8192 16384 32768 2>&1 | tee $OUT/interrupt.txt
echo "probe $(( $(date +%s) - t0 )) s"
APSP_REQUIRE_GPU=1 timeout 200 python -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfEx tests/test_semantics.py tests/test_api.py tests/test_errors.py "tests/test_gpu_engine.py" -k "keyboard or listing or info or memory or progress or failure or error or interrupt" 2>&1 | tail -25 | tee $OUT/subset_tests.txt
echo "tests $(( $(date +%s) - t0 )) s"
