# Forty-sixth session, the review commit on an H100: build, the GPU tests of graphs, streams and
# threads, then the benchmark twice in turn (bench_gpu.py; the first run of this session's final
# build, on a fresh machine, had slow host copies: is it the first run, or the machine?).
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
source benchmarks/probes/session46_build.sh
echo "build $(( $(date +%s) - t0 )) s"
APSP_REQUIRE_GPU=1 timeout 150 python -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfEx -n 6 tests/test_gpu_engine.py -k "graph or sync or priority or stream or thread or dropped" > $OUT/subset_tests.txt 2>&1
echo "tests rc $? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/subset_tests.txt
for tag in h100_s46b h100_s46c; do
  python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag $tag > $OUT/bench_log_$tag.txt 2>&1; echo "bench $tag rc $? $(( $(date +%s) - t0 )) s"
  grep -E "end to end from NumPy|n=1024 <= 150|int32 n=10000 <= 70 ms and" $OUT/gpu_${tag}_summary.md
done
