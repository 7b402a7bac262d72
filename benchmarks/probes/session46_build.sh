# Forty-sixth session: the build step its H100 calls share (sourced by session46_call5.sh,
# session46_call6.sh and session46_final.sh bench): apsp installed, the ceiling and course
# baseline programs for bench_gpu.py, the source digest.
APSP_CUDA_ARCHITECTURES=90-real python -m pip install --no-build-isolation --no-deps -q . > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
mkdir -p build/gpu-bench
for f in ceiling baseline_course; do
  nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -Isrc benchmarks/$f.cu -o build/gpu-bench/$f || exit 1
done
python benchmarks/machine_facts.py > $OUT/machine_facts.txt 2>&1
