# Fifty-ninth session, on a lent H200: the small plan's 32 x 32 tile (n <= 32), with builds made
# on this session's own machine (cp312 wheels, APSP_CUDA_ARCHITECTURES=90-real APSP_NATIVE=OFF,
# nvcc 13.0): the change in .whl/pool/, the code before it (2330bc2) in .whl/old/, 32 x 32 for
# every n <= 32 in .whl/k32/ (the notebook runner's wheels, which the H200 image lacks, at .whl/
# top level).
#   session59.sh small TAG   tests/test_batch.py and the single-solve tests of n = 1, 2, 31 under
#                            .whl/pool; memcheck and racecheck over small solves and batches;
#                            benchmarks/probes/small_tile.py under old and pool; bench_batch.py
#                            (ran as h200_s59d when .whl/pool held the every-n <= 32 build)
#   session59.sh cross TAG   the landed rule (32 x 32 from two graphs an SM) and the review
#                            mend's tests (below). NOT RUN: the session's device time ran out;
#                            the next session's first run (then the whole tier).
# Run with carry [".whl", "build/gpu-bench"]; results under $OUT.
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
install() {  # $1: pool|old -> /tmp/apsp-$1
  [ -d /tmp/apsp-$1 ] || python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/apsp-$1 $(ls .whl/$1/apsp-*.whl; ls .whl/*.whl | grep -v '/apsp-') > $OUT/install_$1.txt 2>&1 \
    || { tail -20 $OUT/install_$1.txt; exit 1; }
}
# The GPU tests named by the arguments (pytest's), results in $OUT/$1.txt.
gpu_tests() {
  local name=$1; shift
  APSP_REQUIRE_GPU=1 timeout 200 python -m pytest "$@" -q -p no:cacheprovider -p no:benchmark \
    -rfEsx -n 8 > $OUT/$name.txt 2>&1
  echo "tests rc $? $(( $(date +%s) - t0 )) s"; grep "^E \|FAILED\|SKIPPED" $OUT/$name.txt | head -20
  tail -1 $OUT/$name.txt
}
# The Python script $2 under memcheck and racecheck, results in $OUT/$1_{memcheck,racecheck}.txt.
sanitized() {
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 python -c "$2" > $OUT/$1_$tool.txt 2>&1
    echo "$tool rc $? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/$1_$tool.txt
  done
}
# small_tile.py under each build named ($2 ...), side by side; $1: its mode ("" or cross).
probes() {
  local mode=$1; shift
  for b in "$@"; do
    PYTHONPATH=/tmp/apsp-$b timeout 120 python benchmarks/probes/small_tile.py $b $mode > $OUT/small_tile_${tag}_$b.txt 2>&1
    echo "probe $b rc $? $(( $(date +%s) - t0 )) s"
  done
  paste -d'|' $(for b in "$@"; do echo $OUT/small_tile_${tag}_$b.txt; done) | sed 's/ equal True//g' | cut -c1-200
}
nvidia-smi -L
mode=$1; tag=$2
case $mode in
small)
  install pool; install old
  export PYTHONPATH=/tmp/apsp-pool
  python -m pytest tests/test_gpu_engine.py --collect-only -q -p no:cacheprovider 2>/dev/null \
    | grep -E "\[(.*-)?(1|2|31)(-.*)?\]" > /tmp/small_ids.txt
  gpu_tests small_tests_$tag tests/test_batch.py $(cat /tmp/small_ids.txt)
  sanitized small "
import numpy as np, apsp
rng = np.random.default_rng(0)
for dt in (np.int32, np.float32, np.float64, np.int64):
    for n in (1, 5, 17, 32, 33):
        p = rng.integers(0, 30, size=(20, n))
        g = (rng.integers(0, 60, size=(20, n, n)) + p[:, :, None] - p[:, None, :]).astype(dt)
        want = apsp.solve_batch(g, device='cpu')
        assert np.array_equal(apsp.solve_batch(g, device='cuda'), want), (dt, n)
        assert np.array_equal(apsp.solve(g[3], device='cuda'), want[3]), (dt, n)
        u = np.abs(g[4])  # undirected: a negative edge would be a negative cycle
        assert np.array_equal(apsp.solve(u, device='cuda', directed=False), apsp.solve(u, device='cpu', directed=False))
print('small solves under the sanitizer: equal')"
  probes "" old pool
  timeout $(( 380 - ($(date +%s) - t0) )) python benchmarks/bench_batch.py --bin build/gpu-bench --out $OUT --tag $tag > $OUT/bench_batch_${tag}_log.txt 2>&1
  echo "bench rc $? $(( $(date +%s) - t0 )) s"; cut -c1-250 $OUT/bench_batch_${tag}_log.txt ;;
cross)
  # the threshold of the 32 x 32 tile, three builds: .whl/old (64 x 64 always), .whl/k32
  # (32 x 32 for every n <= 32), .whl/pool (32 x 32 from 2 x SMs graphs): the batch tests and
  # the review mend's under pool, sanitizers over batches of 1200, small_tile.py cross under all
  install old; install k32; install pool
  export PYTHONPATH=/tmp/apsp-pool
  gpu_tests batch_tests_$tag tests/test_batch.py tests/test_gpu_engine.py \
    -k "batch or pool_keeps or first_solve_inside"
  sanitized cross "
import numpy as np, apsp
rng = np.random.default_rng(0)
for dt in (np.int32, np.float32, np.float64, np.int64):
    for n in (1, 5, 32):
        p = rng.integers(0, 30, size=(1200, n))
        g = (rng.integers(0, 60, size=(1200, n, n)) + p[:, :, None] - p[:, None, :]).astype(dt)
        assert np.array_equal(apsp.solve_batch(g, device='cuda'), apsp.solve_batch(g, device='cpu')), (dt, n)
print('batches of 1200 under the sanitizer: equal')"
  probes cross old k32 pool ;;
esac
