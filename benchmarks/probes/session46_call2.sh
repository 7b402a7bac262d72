# Forty-sixth session, second H100 call: build, then the recorded graphs against captured ones
# with every argument byte compared but a struct's padding (graph_compare.py).
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
APSP_CUDA_ARCHITECTURES=90-real python -m pip install --no-build-isolation --no-deps -q . > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout 250 python benchmarks/probes/graph_compare.py > $OUT/graph_compare.txt 2>&1
grep -E "^case|nodes recorded" $OUT/graph_compare.txt
echo "compare $(( $(date +%s) - t0 )) s"
