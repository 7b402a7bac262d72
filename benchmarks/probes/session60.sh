# Sixtieth session, on a lent H200, with main's build made on this session's own machine (cp312
# wheel in .whl/pool/, APSP_CUDA_ARCHITECTURES=90-real APSP_NATIVE=OFF, nvcc 13.0; the notebook
# runner's wheels, which the H200 image lacks, at .whl/ top level; session54.sh, in git history,
# says how build/gpu-bench is made). The session's first call was `session59.sh cross s60a`, the
# second `session58.sh tier main`.
#   session60.sh bench TAG   bench_gpu.py (the GPU benchmark with its ceilings, the checked rows
#                            included) under main's build
# Run with carry [".whl", "build/gpu-bench"]; results under $OUT.
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
nvidia-smi -L
mode=$1; tag=$2
python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/apsp-pool \
  $(ls .whl/pool/apsp-*.whl; ls .whl/*.whl | grep -v '/apsp-') > $OUT/install_pool.txt 2>&1 \
  || { tail -20 $OUT/install_pool.txt; exit 1; }
export PYTHONPATH=/tmp/apsp-pool
case $mode in
bench)
  timeout $(( 585 - ($(date +%s) - t0) )) python benchmarks/bench_gpu.py --bin build/gpu-bench --out $OUT \
    --tag $tag > $OUT/gpu_${tag}_bench_log.txt 2>&1
  echo "bench rc $? $(( $(date +%s) - t0 )) s"; cut -c1-200 $OUT/gpu_${tag}_bench_log.txt | tail -60 ;;
esac
