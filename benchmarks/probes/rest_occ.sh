#!/bin/bash
# Probe (thirty-fifth session, benchmarks/GPU_NOTES.md): below n ~ 3400 the round loop's pivot
# work on the look-ahead stream sets the pace (split_tail.sh: phase 3's last wave does not), and
# its blocks wait for an SM with room beside three phase-3 blocks. rest_occ.patch (against
# 3ba4358) adds APSP_PROBE_REST_SMEM=B: B more bytes of shared memory for each phase-3 (rest)
# block, so that two of them fit an SM (4-byte types, B = 25600) and the look-ahead blocks always
# find room. Times settings against main, in turn twice.
# Run from the repository root on a GPU machine without network, OUT set: bash benchmarks/probes/rest_occ.sh
. benchmarks/probes/build_beside.sh
build_main &
build_patched 1 rest_occ.patch
wait_builds
A=""; B=""
for t in int32:1792 int32:2048 int32:2176 int32:2560 int32:2816 int32:3072 int32:3584 int32:4096 float32:2048 float32:3072; do
  A="$A $t"
  for b in 0 13000 25600; do B="$B $t:APSP_PROBE_REST_SMEM=$b"; done
done
for t in int64:1536 int64:2048 float64:2048; do
  A="$A $t"
  for b in 0 15000; do B="$B $t:APSP_PROBE_REST_SMEM=$b"; done
done
time_in_turn rest_occ.txt occ "$A" "$B"
