# Forty-sixth session, first H100 call: build, the recorded graphs against captured ones
# (graph_compare.py, with graph_compare.patch's hook), another thread's device syncs beside graph
# building (capture_race.py sync), and the GPU tests of graphs, streams and threads.
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
APSP_CUDA_ARCHITECTURES=90-real python -m pip install --no-build-isolation --no-deps -q . > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout 150 python benchmarks/probes/graph_compare.py 2>&1 | tee $OUT/graph_compare.txt
echo "compare $(( $(date +%s) - t0 )) s"
for i in 1 2; do timeout 100 python benchmarks/probes/capture_race.py sync > /tmp/race.txt 2>&1; echo "rc $?"; tail -3 /tmp/race.txt; done | tee $OUT/device_sync.txt
echo "race $(( $(date +%s) - t0 )) s"
APSP_REQUIRE_GPU=1 timeout 220 python -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfEx -n 6 tests/test_gpu_engine.py -k "graph or sync or priority or stream or thread or dropped or exception or repeated" 2>&1 | tail -25 | tee $OUT/subset_tests.txt
echo "tests $(( $(date +%s) - t0 )) s"
