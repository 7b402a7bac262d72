#!/usr/bin/env bash
# One command for every GPU figure, on a GPU machine with no network: build and install apsp
# (pip install --no-build-isolation .), the whole GPU test tier (pytest -m gpu: engine, device
# arrays, sparse input, predecessors, notebooks), compute-sanitizer memcheck and racecheck on small
# n, SASS facts of the min-plus kernels, the GPU benchmark, the per-call overhead benchmark and the
# batch benchmark (JSON + summary). Python wheels the machine lacks (the notebook runner) may be
# carried in .whl/.
# Usage: benchmarks/gpu_check.sh OUT_DIR [--quick]      (run from anywhere; OUT_DIR is created)
set -uo pipefail
OUT=$(mkdir -p "${1:?usage: benchmarks/gpu_check.sh OUT_DIR [--quick]}" && cd "$1" && pwd)
QUICK=${2:-}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PATH="$PATH:/usr/local/cuda/bin"
ARCH=${APSP_CUDA_ARCHITECTURES:-90-real}
status=0
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

step "GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader

if compgen -G ".whl/*.whl" > /dev/null; then
  step "carried wheels (.whl/)"
  python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/apsp-site .whl/*.whl \
    && export PYTHONPATH=/tmp/apsp-site${PYTHONPATH:+:$PYTHONPATH}
fi

step "build and install (APSP_CUDA_ARCHITECTURES=$ARCH)"
APSP_CUDA_ARCHITECTURES=$ARCH python -m pip install --no-build-isolation --no-deps -q . || exit 1
python -c "import apsp, json; print(json.dumps(apsp.info()))"
BIN=build/gpu-bench
mkdir -p $BIN
for f in ceiling baseline_course; do
  nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_${ARCH%%-*} -Isrc benchmarks/$f.cu -o $BIN/$f || exit 1
done

step "SASS of the min-plus kernels (instruction counts in the extension module)"
SO=$(python -c "import apsp._core as c; print(c.__file__)")
cuobjdump -sass "$SO" > $BIN/engine.sass 2>/dev/null && \
  python - "$BIN/engine.sass" <<'PY'
import re, sys
fun, counts = None, {}
for line in open(sys.argv[1]):
    m = re.search(r"Function : (\S+)", line)
    if m:
        fun = m.group(1); counts[fun] = {}
        continue
    m = re.search(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", line)
    if fun and m:
        op = m.group(1).split(".")[0]
        counts[fun][op] = counts[fun].get(op, 0) + 1
for f, c in counts.items():
    if "minplus_kernel" in f or "pivot_kernel" in f:
        top = ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1])[:8])
        print(f"{f[:70]:70s} {top}")
PY

step "GPU test tier"
XDIST=$(python -c "import xdist" 2>/dev/null && echo "-n 4")  # 4 workers where pytest-xdist is installed
APSP_REQUIRE_GPU=1 python -m pytest -m gpu tests -q -p no:cacheprovider -p no:benchmark $XDIST 2>&1 | tee "$OUT/tests.txt" || status=1

# (a hang past the timeout fails the step instead of the whole run)
step "compute-sanitizer memcheck"
timeout 1200 compute-sanitizer --tool memcheck --error-exitcode 9 python benchmarks/sanitize_driver.py 2>&1 | tail -12 | tee "$OUT/sanitizer.txt" || status=1
step "compute-sanitizer racecheck"
# Racecheck is far slower: the engine's choice and the 64-wide and 2-block round loops (k64q and
# k64o run the same kernels as k64d, only over more k); the cluster and flow plans' sizes on the
# round loop (sanitize_driver.py says why).
timeout 1200 compute-sanitizer --tool racecheck --error-exitcode 9 python benchmarks/sanitize_driver.py --no-cluster auto k64w k64d 2>&1 | tail -12 | tee -a "$OUT/sanitizer.txt" || status=1

step "benchmark"
python benchmarks/bench_gpu.py --bin $BIN --out "$OUT" --tag "${APSP_BENCH_TAG:-h100}" $QUICK || status=1
python benchmarks/bench_overhead.py --calls 5000 --out "$OUT" || status=1
python benchmarks/bench_pred.py --out "$OUT" --tag "${APSP_BENCH_TAG:-h100}" || status=1
python benchmarks/bench_batch.py --bin $BIN --out "$OUT" --tag "${APSP_BENCH_TAG:-h100}" || status=1
# One solve split over every GPU against one GPU, where there are two or more.
if [ "$(python -c 'import apsp; print(len(apsp.info()["devices"]))')" -ge 2 ]; then
  python benchmarks/bench_split.py --bin $BIN --out "$OUT" --tag "${APSP_BENCH_TAG:-h100}" || status=1
fi
cat "$OUT"/gpu_*_summary.md 2>/dev/null
step "done (status $status)"
exit $status
