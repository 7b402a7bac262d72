#!/bin/bash
# Probe (thirtieth session, benchmarks/GPU_NOTES.md): builds main and the cluster plan with phase 3
# taken 2, 3 and 4 times (cluster_bulk.patch) side by side, runs memcheck over sanitize_driver.py auto
# (the arriving host path included), then times small solves under each build in turn, twice.
# Run from the repository root on a GPU machine without network, OUT set: bash benchmarks/probes/cluster_bulk.sh
. benchmarks/probes/build_beside.sh
build_main &
for b in 2 3 4; do
  build_patched $b cluster_bulk.patch \
    "sed -i 's/#define APSP_PROBE_BULK 1/#define APSP_PROBE_BULK $b/' src/cuda/cluster.cuh" &
done
wait_builds
t0=$(date +%s)
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 python benchmarks/sanitize_driver.py auto 2>&1 | tail -6 | tee $OUT/sanitizer_arriving.txt
echo "sanitizer rc=${PIPESTATUS[0]} in $(( $(date +%s) - t0 )) s" | tee -a $OUT/sanitizer_arriving.txt
for pass in 1 2; do
  for b in 1 2 3 4; do
    if [ $b = 1 ]; then pp=""; else pp=/tmp/site$b; fi
    PYTHONPATH=$pp python benchmarks/probes/time_small.py bulk$b int32:256 int32:192 int32:128 float32:256
  done
done 2>&1 | tee $OUT/cluster_bulk.txt
