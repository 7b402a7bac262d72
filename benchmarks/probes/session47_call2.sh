# Forty-seventh session, second H100 call: the narrow plan with its one-word copies (rows on 4
# bytes) checked again, and the timings that set its thresholds (narrow_probe.py).
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
APSP_CUDA_ARCHITECTURES=90-real python -m pip install --no-build-isolation --no-deps -q . > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout 200 python benchmarks/probes/narrow_probe.py check 2>&1 | tee $OUT/check.txt | grep -v ": ok$"
echo "check $(( $(date +%s) - t0 )) s"
timeout 200 python benchmarks/probes/narrow_probe.py time 2>&1 | tee $OUT/time.txt
echo "done $(( $(date +%s) - t0 )) s"
