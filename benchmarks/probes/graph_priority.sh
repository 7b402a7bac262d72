#!/bin/bash
# Probe (thirty-third session, benchmarks/GPU_NOTES.md): main and main with its CUDA graphs
# instantiated with node priorities (graph_priority.patch) built side by side, then solves of
# 1024 <= n <= 6144 timed under each build in turn, twice, and a kernel timeline under the patch.
# Run from the repository root on a GPU machine without network, OUT set: bash benchmarks/probes/graph_priority.sh
. benchmarks/probes/build_beside.sh
build_main & build_patched 1 graph_priority.patch &
wait_builds
CASES="int32:1792 int32:2048 int32:2560 int32:3072 int32:4096 int32:4096:k64w float32:2048 int32:1024:k64w int32:512:k64w int32:6144"
for pass in 1 2; do
  python benchmarks/probes/time_small.py main $CASES
  PYTHONPATH=/tmp/site1 python benchmarks/probes/time_small.py prio $CASES
done 2>&1 | tee $OUT/graph_priority.txt
PYTHONPATH=/tmp/site1 python benchmarks/probes/mid_range.py $OUT/prio --timeline 2>&1 | grep -v -i warn | grep -v "^ *$" | head -60
