#!/bin/bash
# Probe (thirty-fifth session, benchmarks/GPU_NOTES.md): phase 3's last wave of whole tiles. The
# round loop's rest launch has a tile count that is not a multiple of the slots (blocks per SM x
# SMs), so its last wave runs part-full; split_tail.patch (against 3ba4358) adds
# APSP_PROBE_SPLIT=RxS, which takes the first R window rows of each rest launch in S parts of its
# k range (dispatched last, each part storing by an atomic minimum). Checks every setting against
# none (split_check.py), then times settings against main.
# Run from the repository root on a GPU machine without network, OUT set: bash benchmarks/probes/split_tail.sh
. benchmarks/probes/build_beside.sh
build_main &
build_patched 1 split_tail.patch
wait_builds
python - <<'PY'
import torch
p = torch.cuda.get_device_properties(0)
print(p.name, p.multi_processor_count, "SMs")
PY
PYTHONPATH=/tmp/site1 timeout 300 python benchmarks/probes/split_check.py 2>&1 | tail -4 | tee $OUT/split_check.txt
A=""; B=""
for n in 1792 2048 2176; do
  A="$A int32:$n"
  for s in 0x1 2x2 4x2 9x2 30x2; do B="$B int32:$n:APSP_PROBE_SPLIT=$s"; done
done
for n in 2560 2816; do
  A="$A int32:$n"
  for s in 0x1 4x2 8x2 4x4 8x4 16x4; do B="$B int32:$n:APSP_PROBE_SPLIT=$s"; done
done
for t in float32:2048 int64:1280 float64:1792 int32:1024:k64w int32:4096; do
  A="$A $t"; B="$B $t:APSP_PROBE_SPLIT=0x1"
done
for t in float32:2048 int64:1280 float64:1792; do
  for s in 4x2 8x2; do B="$B $t:APSP_PROBE_SPLIT=$s"; done
done
time_in_turn split_tail.txt split "$A" "$B"
