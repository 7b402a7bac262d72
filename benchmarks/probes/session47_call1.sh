# Forty-seventh session, first H100 call: build, the ceilings (the narrow step's among them), the
# narrow plan's check and timings (narrow_probe.py), its kernels' instructions.
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
t0=$(date +%s)
source benchmarks/probes/session46_build.sh
echo "build $(( $(date +%s) - t0 )) s"
so=$(python -c "import apsp._core as c; print(c.__file__)")
cuobjdump -sass "$so" 2>/dev/null | awk '/Function : /{f=/narrow_minplus/} f' | grep -o "VIADDMNMX[.A-Z0-9]*\|VIMNMX[.A-Z0-9]*\|PRMT\|LDS[.0-9A-Z]*" | sort | uniq -c | tee $OUT/narrow_sass.txt
build/gpu-bench/ceiling > $OUT/ceiling.json; python -c "
import json; d=json.load(open('$OUT/ceiling.json'))
[print(c['dtype'], round(c['updates_per_s']/1e12,2), c['tile']) for c in d['ceilings']]"
echo "ceiling $(( $(date +%s) - t0 )) s"
timeout 200 python benchmarks/probes/narrow_probe.py check 2>&1 | tee $OUT/check.txt | grep -v ": ok$"
echo "check $(( $(date +%s) - t0 )) s"
timeout 240 python benchmarks/probes/narrow_probe.py time 2>&1 | tee $OUT/time.txt
echo "done $(( $(date +%s) - t0 )) s"
