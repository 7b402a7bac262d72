# Forty-sixth session, graphs taken over by a fifth buffer of one round loop, arguments set anew:
# build, the graph, stream and thread tests, the first-call probe (graph_first_call.py), the
# benchmark. The whole GPU tier follows in the next call (session46_final.sh tier).
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
source benchmarks/probes/session46_build.sh
echo "build $(( $(date +%s) - t0 )) s"
APSP_REQUIRE_GPU=1 timeout 150 python -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfEx -n 6 tests/test_gpu_engine.py -k "graph or sync or priority or stream or thread or dropped or buffers" > $OUT/subset_tests.txt 2>&1
echo "tests rc $? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/subset_tests.txt
python benchmarks/probes/graph_first_call.py 2>&1 | tee $OUT/first_call.txt
python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_s46d > $OUT/bench_log.txt 2>&1; echo "bench rc $? $(( $(date +%s) - t0 )) s"
grep -E "end to end from NumPy|n=1024 <= 150|n=256 <= 40|int32 n=10000 <= 70 ms and >= 88% of peak \|" $OUT/gpu_h100_s46d_summary.md
