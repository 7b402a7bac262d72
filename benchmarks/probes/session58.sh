# Fifty-eighth session, on lent H200s, with two builds of apsp made on this session's own machine
# (cp312 wheels, APSP_CUDA_ARCHITECTURES=90-real APSP_NATIVE=OFF, nvcc 13.0): main in .whl/pool/,
# the branch split-pipelined-steps in .whl/ (top level, with the notebook runner's wheels, which
# the H200 image lacks). session54.sh, in git history, says how build/gpu-bench is made.
#   session58.sh scaling TAG N...  split_scaling.py (a tensor split over 1, 2, .. GPUs, the
#                           engine's plan forced so every GPU takes part) under each build
#   session58.sh tests TAG [main|branch]  the split tests (-k split) under one build (main)
#   session58.sh bench TAG [main|branch] [DTYPES] [SIZES]  bench_split.py over every GPU
#   session58.sh tier [main|branch]  the whole GPU tier but the sanitizer test
#   session58.sh timeline TAG GPUS N  a CUPTI timeline of one split (split_timeline.py), branch
#   session58.sh batch TAG   apsp.solve_batch under main's build: tests/test_batch.py, memcheck
#                           and racecheck over small batches, then benchmarks/bench_batch.py
# Run with carry [".whl", "build/gpu-bench"]; results under $OUT.
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
install() {  # $1: main|branch -> PYTHONPATH
  local site=/tmp/apsp-$1 wheels=".whl/*.whl"
  [ "$1" = main ] && wheels="$(ls .whl/pool/apsp-*.whl; ls .whl/*.whl | grep -v '/apsp-')"
  [ -d $site ] || python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $site $wheels > $OUT/install_$1.txt 2>&1 || { tail -20 $OUT/install_$1.txt; exit 1; }
  export PYTHONPATH=$site
  echo "$1: $(python -c 'import apsp, os; print(os.path.dirname(apsp.__file__))') $(( $(date +%s) - t0 )) s"
}
nvidia-smi -L; nvidia-smi topo -m | head -6
python benchmarks/machine_facts.py > $OUT/machine_facts.txt 2>&1
mode=$1; shift
case $mode in
scaling)
  tag=$1; shift
  for b in main branch; do
    install $b
    timeout 200 python benchmarks/probes/split_scaling.py "$@" > $OUT/split_scaling_${tag}_$b.txt 2>&1
    echo "scaling $b rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/split_scaling_${tag}_$b.txt
  done ;;
tests)
  install ${2:-main}
  APSP_REQUIRE_GPU=1 timeout 300 python -m pytest tests -q -p no:cacheprovider -p no:benchmark -rfEsx -n 8 \
    -k "split or device_list or commas" > $OUT/split_tests_$1_${2:-main}.txt 2>&1
  echo "split tests rc $? $(( $(date +%s) - t0 )) s"; grep "^E \|FAILED\|SKIPPED" $OUT/split_tests_$1_${2:-main}.txt | head -30
  tail -2 $OUT/split_tests_$1_${2:-main}.txt ;;
bench)
  install ${2:-main}
  timeout $(( 585 - ($(date +%s) - t0) )) python benchmarks/bench_split.py --bin build/gpu-bench --out $OUT \
    --tag $1 --dtypes ${3:-int32,float32} --sizes ${4:-4096,6144,8192,10000,16384,24576} > $OUT/bench_split_$1_log.txt 2>&1
  echo "bench rc $? $(( $(date +%s) - t0 )) s"; cut -c1-330 $OUT/bench_split_$1_log.txt ;;
tier)
  install ${1:-main}
  APSP_REQUIRE_GPU=1 timeout -k 5 $(( 570 - ($(date +%s) - t0) )) python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEsx -n ${APSP_TIER_WORKERS:-16} > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; grep "^E " $OUT/tests.txt | head; tail -6 $OUT/tests.txt ;;
timeline)
  install branch
  timeout 300 python benchmarks/probes/split_timeline.py $OUT $2 $3 > $OUT/split_timeline_$1.txt 2>&1
  echo "timeline rc $? $(( $(date +%s) - t0 )) s"; head -60 $OUT/split_timeline_$1.txt | cut -c1-160 ;;
batch)
  install main
  APSP_REQUIRE_GPU=1 timeout 200 python -m pytest tests/test_batch.py -q -p no:cacheprovider -p no:benchmark -rfEsx -n 8 > $OUT/batch_tests_$1.txt 2>&1
  echo "batch tests rc $? $(( $(date +%s) - t0 )) s"; grep "^E \|FAILED\|SKIPPED" $OUT/batch_tests_$1.txt | head -30; tail -2 $OUT/batch_tests_$1.txt
  # racecheck: the small plan's batches only (it reports known false hazards in the cluster and
  # flow kernels: sanitize_driver.py says which)
  for tool in memcheck racecheck; do
    sizes="5, 33, 64, 70, 200, 260"; [ $tool = racecheck ] && sizes="5, 33, 64"
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 python -c "
import numpy as np, apsp
rng = np.random.default_rng(0)
for dt in (np.int32, np.float32, np.float64, np.int64):
    for n in ($sizes):
        p = rng.integers(0, 30, size=(40, n))
        g = (rng.integers(0, 60, size=(40, n, n)) + p[:, :, None] - p[:, None, :]).astype(dt)
        want = apsp.solve_batch(g, device='cpu')
        assert np.array_equal(apsp.solve_batch(g, device='cuda'), want), (dt, n)
        g[7, 3, 1] = -5000
        try:
            apsp.solve_batch(g, device='cuda')
            raise SystemExit('no negative cycle found')
        except apsp.NegativeCycleError as e:
            assert e.graph == 7
print('batches under the sanitizer: equal')" > $OUT/batch_$tool.txt 2>&1
    echo "$tool rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/batch_$tool.txt
  done
  timeout $(( 590 - ($(date +%s) - t0) )) python benchmarks/bench_batch.py --bin build/gpu-bench --out $OUT --tag $1 > $OUT/bench_batch_$1_log.txt 2>&1
  echo "bench rc $? $(( $(date +%s) - t0 )) s"; cut -c1-400 $OUT/bench_batch_$1_log.txt ;;
esac
