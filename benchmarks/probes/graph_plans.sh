#!/bin/bash
# Probe (thirty-third session, benchmarks/GPU_NOTES.md): with graph nodes at their captured
# priorities (landed), which round loop wins at 1792 <= n <= 4096, and whether CUDA-graph replay
# pays past n = 4096 (graph_8192.patch: graphs up to 8192), the two builds side by side.
# Run from the repository root on a GPU machine without network, OUT set: bash benchmarks/probes/graph_plans.sh
. benchmarks/probes/build_beside.sh
build_main & build_patched 1 graph_8192.patch &
wait_builds
PLANS=""
for n in 1792 2048 2560 3072 3584 4096; do for p in k64w k64d k64q; do PLANS="$PLANS int32:$n:$p"; done; done
PLANS="$PLANS int32:4096:k64o float32:2048:k64w float32:2048:k64d float32:3072:k64w float32:3072:k64d float32:3072:k64q"
python benchmarks/probes/time_small.py plans $PLANS 2>&1 | tee $OUT/graph_plans.txt
CASES="int32:4608 int32:5120 int32:6144 int32:8192"  # int32 only: float32 past 4096 chooses its step on the device with a per-solve flag
for pass in 1 2; do
  python benchmarks/probes/time_small.py prio $CASES
  PYTHONPATH=/tmp/site1 python benchmarks/probes/time_small.py g8192 $CASES
done 2>&1 | tee $OUT/graph_8192.txt
