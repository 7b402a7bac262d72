# Forty-sixth session, the review commit on an H100: build and the benchmark with its ceiling
# (tag h100_s46e). The whole GPU tier follows on the same build in the next call
# (session46_final.sh tier).
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
source benchmarks/probes/session46_build.sh
echo "build $(( $(date +%s) - t0 )) s"
python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT --tag h100_s46e > $OUT/bench_log.txt 2>&1; echo "bench rc $? $(( $(date +%s) - t0 )) s"
sed -n '/## Targets/,$p' $OUT/gpu_h100_s46e_summary.md
grep "relax int32" $OUT/gpu_h100_s46e_summary.md
