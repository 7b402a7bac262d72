# Fifty-seventh session, on lent H200s (nvidia-h200-x4 for four GPUs, or nvidia-h200-x2), with
# apsp built on this session's own machine (a cp312 wheel, APSP_CUDA_ARCHITECTURES=90-real
# APSP_NATIVE=OFF, nvcc 13.0) and carried in .whl/ with the notebook runner's wheels, which the
# H200 image lacks (it replaces session56.sh; session54.sh, in git history, says how the wheels and
# build/gpu-bench are made):
#   session57.sh split TAG [GPUS]  the split's tests (test_gpu_engine.py -k split: host and
#                           device arrays over every GPU, and the device-list errors), then
#                           benchmarks/bench_split.py over GPUS GPUs (default every one)
#   session57.sh bench TAG GPUS DTYPES SIZES  bench_split.py alone
#   session57.sh compare TAG  the split tests, a timeline over every GPU at n = 16384, then the
#                           benchmark of the wheel in .whl/pool/ (int32) and of .whl/ (both
#                           dtypes), over every GPU: two builds of the split in one run
#   session57.sh timeline GPUS N...  split_timeline.py: a CUPTI timeline of one split over GPUS
#                           GPUs (torch.profiler), summarised, the trace kept under $OUT
#   session57.sh scaling N...  split_scaling.py: a tensor split over 1, 2, ... GPUs, device time
#                           against the host's time in the call
#   session57.sh tier       the whole GPU tier but the sanitizer test
#   session57.sh sanitize   memcheck and racecheck over small split solves, host and torch
#   session57.sh review     the split tests, then split_memory_limit.py alone, then the tier
#   session57.sh stages     split_stages.py (where a split's time goes end to end), and
#                           bench_split.py at n = 10000 (tag s57e)
# Run with carry [".whl", "build/gpu-bench"].
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/apsp-site .whl/*.whl > $OUT/install.txt 2>&1 || { tail -20 $OUT/install.txt; exit 1; }
export PYTHONPATH=/tmp/apsp-site
python -c "import apsp, json; print(json.dumps(apsp.info()))"
nvidia-smi -L; nvidia-smi topo -m | head -4
python benchmarks/machine_facts.py > $OUT/machine_facts.txt 2>&1
echo "install $(( $(date +%s) - t0 )) s"
split_tests() {
  APSP_REQUIRE_GPU=1 timeout $1 python -m pytest tests -q -p no:cacheprovider -p no:benchmark -rfEsx -n 8 \
    -k "split or device_list or commas" > $OUT/split_tests.txt 2>&1
  echo "split tests rc $? $(( $(date +%s) - t0 )) s"; grep "^E \|FAILED\|SKIPPED" $OUT/split_tests.txt | head -30; tail -2 $OUT/split_tests.txt
}
if [ "$1" = split ]; then
  split_tests 200
  left=$(( 580 - ($(date +%s) - t0) ))
  timeout $left python benchmarks/bench_split.py --bin build/gpu-bench --out $OUT --tag $2 --gpus ${3:-0} > $OUT/bench_split_log.txt 2>&1
  echo "bench rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/bench_split_log.txt | cut -c1-400; exit 0
elif [ "$1" = compare ]; then
  split_tests 150
  gpus=$(nvidia-smi -L | wc -l)
  timeout 100 python benchmarks/probes/split_timeline.py $OUT $gpus 16384 > $OUT/split_timeline.txt 2>&1
  echo "timeline rc $? $(( $(date +%s) - t0 )) s"; head -40 $OUT/split_timeline.txt | cut -c1-150
  python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/apsp-pool .whl/pool/*.whl > /dev/null 2>&1
  PYTHONPATH=/tmp/apsp-pool timeout 200 python benchmarks/bench_split.py --bin build/gpu-bench --out $OUT --tag ${2}_pool --dtypes int32 --sizes 8192,10000,16384,24576 > $OUT/bench_split_pool_log.txt 2>&1
  echo "bench pool rc $? $(( $(date +%s) - t0 )) s"; cut -c1-330 $OUT/bench_split_pool_log.txt
  timeout $(( 585 - ($(date +%s) - t0) )) python benchmarks/bench_split.py --bin build/gpu-bench --out $OUT --tag $2 > $OUT/bench_split_log.txt 2>&1
  echo "bench rc $? $(( $(date +%s) - t0 )) s"; cut -c1-330 $OUT/bench_split_log.txt
  exit 0
elif [ "$1" = timeline ]; then
  shift; timeout 300 python benchmarks/probes/split_timeline.py $OUT "$@" 2>&1 | tee $OUT/split_timeline.txt | head -120; exit 0
elif [ "$1" = scaling ]; then
  shift; timeout 300 python benchmarks/probes/split_scaling.py "$@" 2>&1 | tee $OUT/split_scaling.txt; exit 0
elif [ "$1" = bench ]; then
  timeout $(( 580 - ($(date +%s) - t0) )) python benchmarks/bench_split.py --bin build/gpu-bench --out $OUT --tag $2 --gpus $3 --dtypes $4 --sizes $5 > $OUT/bench_split_log.txt 2>&1
  echo "bench rc $? $(( $(date +%s) - t0 )) s"; cat $OUT/bench_split_log.txt | cut -c1-400; exit 0
elif [ "$1" = review ]; then
  split_tests 150
  timeout 60 python benchmarks/probes/split_memory_limit.py 16384 2>&1 | tee $OUT/split_memory_limit.txt
  APSP_REQUIRE_GPU=1 timeout -k 5 $(( 575 - ($(date +%s) - t0) )) python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEsx -n ${APSP_TIER_WORKERS:-16} > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; grep "^E " $OUT/tests.txt | head; tail -6 $OUT/tests.txt; exit 0
elif [ "$1" = stages ]; then
  timeout 300 python benchmarks/probes/split_stages.py 10000 24576 2>&1 | tee $OUT/split_stages.txt
  timeout 200 python benchmarks/bench_split.py --bin build/gpu-bench --out $OUT --tag s57e --sizes 10000 --reps 2 > $OUT/bench_split_log.txt 2>&1
  echo "bench rc $? $(( $(date +%s) - t0 )) s"; cut -c1-300 $OUT/bench_split_log.txt; exit 0
elif [ "$1" = tier ]; then
  APSP_REQUIRE_GPU=1 timeout -k 5 $(( 570 - ($(date +%s) - t0) )) python -m pytest -m gpu tests --ignore=tests/test_sanitizer.py -q -p no:cacheprovider -p no:benchmark -rfEsx -n ${APSP_TIER_WORKERS:-16} > $OUT/tests.txt 2>&1
  echo "tier rc $? $(( $(date +%s) - t0 )) s"; grep "^E " $OUT/tests.txt | head; tail -6 $OUT/tests.txt; exit 0
elif [ "$1" = sanitize ]; then
  for tool in memcheck racecheck; do
    APSP_CUDA_TILES=k64d timeout 250 compute-sanitizer --tool $tool --error-exitcode 9 python -c "
import numpy as np, apsp
rng = np.random.default_rng(0)
import torch
for dt in (np.int32, np.float32, np.float64):
    g = rng.integers(1, 60, size=(300, 300)).astype(dt)
    assert np.array_equal(apsp.solve(g, device=['cuda:0', 'cuda:1']), apsp.solve(g, device='cuda:0'))
    buf = torch.full((300, 310), 7, dtype=getattr(torch, np.dtype(dt).name), device='cuda:1')
    buf[:, 5:305] = torch.from_numpy(g)
    apsp.solve(buf[:, 5:305], device=[1, 0], overwrite=True)
    torch.cuda.synchronize(1)
    assert np.array_equal(buf[:, 5:305].cpu().numpy(), apsp.solve(g, device='cuda:0'))
    assert (buf[:, :5] == 7).all() and (buf[:, 305:] == 7).all()
print('split under the sanitizer: equal')" > $OUT/split_$tool.txt 2>&1
    echo "$tool rc $? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/split_$tool.txt
  done
fi
