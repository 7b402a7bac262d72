#!/bin/bash
# Probe (thirty-fourth session, benchmarks/GPU_NOTES.md): super-rounds of two blocks (k64d) with
# programmatic dependent launch on the critical stream. sr_chain.patch (against 7db5a6b, before
# it landed) adds APSP_PROBE_SR: 0 k64d as it was, 1 its chain launches with PDL, 2 also phases 1
# and 2 of each pivot block in one launch (pivot_panels_kernel, each pivot tile stored by the next
# one). Checks every mode against the 64-wide rounds (sr_check.py), then times the forced plans.
# Run from the repository root on a GPU machine without network, OUT set: bash benchmarks/probes/sr_chain.sh
. benchmarks/probes/build_beside.sh
build_patched 1 sr_chain.patch
wait_builds
export PYTHONPATH=/tmp/site1
timeout 300 python benchmarks/probes/sr_check.py int32 float32 int64 float64 2>&1 | tail -3 | tee $OUT/sr_check.txt
C=""
for n in 2048 2176 2240 2304 2432 2560 2944 3072 3200 3328 3456 3584 4096 4608; do
  C="$C int32:$n:k64w int32:$n:k64d:APSP_PROBE_SR=0 int32:$n:k64d:APSP_PROBE_SR=1 int32:$n:k64d:APSP_PROBE_SR=2"
done
for n in 2048 2304 2560 2816 3072 3584 4096; do
  C="$C float32:$n:k64w float32:$n:k64d:APSP_PROBE_SR=0 float32:$n:k64d:APSP_PROBE_SR=1"
done
for t in int64 float64; do for n in 1024 1280 1408 1536 1664 1792 2048 2560 2816 2944 3072 4096; do
  C="$C $t:$n:k64w $t:$n:k64d:APSP_PROBE_SR=0 $t:$n:k64d:APSP_PROBE_SR=1"
done; done
python benchmarks/probes/time_small.py sr $C 2>&1 | tee $OUT/sr_chain.txt
