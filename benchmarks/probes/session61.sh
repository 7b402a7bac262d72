# Sixty-first session, on a lent H200, with main's build made on this session's own machine (cp312
# wheel in .whl/pool/, APSP_CUDA_ARCHITECTURES=90-real APSP_NATIVE=OFF, nvcc 13.0; the notebook
# runner's wheels, which the H200 image lacks, at .whl/ top level; session54.sh, in git history,
# says how build/gpu-bench is made). The session's first call was `session60.sh tier h200_s61a`
# (the whole GPU tier on the sixtieth session's last commit; one Ctrl-C timing miss).
#   session61.sh tier TAG    memcheck over checked solves and batches, then the whole GPU tier
#                            but the sanitizer test
#   session61.sh batch TAG   after the CPU engine's batch predecessors and the Ctrl-C tests'
#                            second measurement: tests/test_batch.py whole, the Ctrl-C tests of
#                            every file beside 15 busy workers (the tier's load), bench_batch.py
#                            (its predecessor columns new)
#   session61.sh bench TAG   bench_gpu.py (the GPU benchmark with its ceilings) under main's build
# Run with carry [".whl", "build/gpu-bench"]; results under $OUT.
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
nvidia-smi -L
mode=$1; tag=$2
python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/apsp-pool \
  $(ls .whl/pool/apsp-*.whl; ls .whl/*.whl | grep -v '/apsp-') > $OUT/install_pool.txt 2>&1 \
  || { tail -20 $OUT/install_pool.txt; exit 1; }
export PYTHONPATH=/tmp/apsp-pool
sanitized() {  # memcheck and/or racecheck over checked solves and batches
  for tool in "$@"; do
    # racecheck: n <= 64 only (it reports known false hazards in the cluster kernel: sanitize_driver.py)
    sizes="5, 33, 64, 100, 300"; [ $tool = racecheck ] && sizes="5, 33, 64"
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 python -c "
import numpy as np, apsp
rng = np.random.default_rng(0)
for dt in (np.int32, np.float32, np.float64, np.int64):
    for n in ($sizes):
        g = rng.integers(1, 60, size=(40, n, n)).astype(dt)
        g[3, 1, 2] = -1; g[7, 0, 0] = 0
        if dt in (np.float32, np.float64): g[5] /= 7
        got = apsp.solve_batch(g, device='cuda')  # fractional sums: only the same kernels agree
        assert np.array_equal(got[3:6], np.stack([apsp.solve(x, device='cuda') for x in g[3:6]])), (dt, n)
        assert np.allclose(got, apsp.solve_batch(g, device='cpu'), rtol=1e-5), (dt, n)
    bad = rng.integers(1, 60, size=(9, 40, 40)).astype(dt)
    if dt in (np.float32, np.float64): bad[6, 3, 4] = np.nan
    else: bad[6, 3, 4] = -5; bad[6, 4, 3] = -5
    try: apsp.solve_batch(bad, device='cuda'); raise SystemExit('no error')
    except (ValueError, apsp.NegativeCycleError) as e: assert 'graph 6 ' in str(e), e
print('checked solves and batches under the sanitizer: equal')" > $OUT/gpu_${tag}_$tool.txt 2>&1
    echo "$tool rc $? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/gpu_${tag}_$tool.txt
  done
}
case $mode in
tier)
  sanitized memcheck
  APSP_REQUIRE_GPU=1 timeout -k 5 $(( 580 - ($(date +%s) - t0) )) python -m pytest -m gpu tests \
    --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEsx -n 16 > $OUT/gpu_${tag}_tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; grep "^E " $OUT/gpu_${tag}_tests.txt | head; tail -6 $OUT/gpu_${tag}_tests.txt ;;
batch)
  APSP_REQUIRE_GPU=1 timeout 200 python -m pytest tests/test_batch.py -q -p no:cacheprovider \
    -p no:benchmark -rfEsx -n 8 --durations=5 > $OUT/gpu_${tag}_batch_tests.txt 2>&1
  echo "batch tests rc $? $(( $(date +%s) - t0 )) s"; grep "^E \|FAILED\|SKIPPED" $OUT/gpu_${tag}_batch_tests.txt | head -20
  tail -9 $OUT/gpu_${tag}_batch_tests.txt
  # the Ctrl-C tests beside the GPU tier's other work: 15 workers re-run test_gpu_engine meanwhile
  (APSP_REQUIRE_GPU=1 timeout 150 python -m pytest -m gpu tests/test_gpu_engine.py -q -p no:cacheprovider \
    -p no:benchmark -n 15 > $OUT/gpu_${tag}_load.txt 2>&1 &)
  sleep 20
  APSP_REQUIRE_GPU=1 timeout 200 python -m pytest tests -k "interrupt" -q -p no:cacheprovider \
    -p no:benchmark -rfEsx > $OUT/gpu_${tag}_interrupt_tests.txt 2>&1
  echo "interrupt tests rc $? $(( $(date +%s) - t0 )) s"; grep "^E \|FAILED" $OUT/gpu_${tag}_interrupt_tests.txt | head
  tail -3 $OUT/gpu_${tag}_interrupt_tests.txt
  pkill -f "pytest -m gpu tests/test_gpu_engine.py"; sleep 2; tail -1 $OUT/gpu_${tag}_load.txt
  timeout $(( 590 - ($(date +%s) - t0) )) python benchmarks/bench_batch.py --bin build/gpu-bench --out $OUT --tag $tag > $OUT/batch_${tag}_log.txt 2>&1
  echo "bench_batch rc $? $(( $(date +%s) - t0 )) s"; cut -c1-300 $OUT/batch_${tag}_log.txt | tail -14 ;;
bench)
  timeout $(( 585 - ($(date +%s) - t0) )) python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT \
    --tag $tag > $OUT/gpu_${tag}_bench_log.txt 2>&1
  echo "bench rc $? $(( $(date +%s) - t0 )) s"; cut -c1-200 $OUT/gpu_${tag}_bench_log.txt | tail -60 ;;
esac
