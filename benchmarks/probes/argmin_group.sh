# A/B probe: the argmin plan's groups of 16 pivots (argmin_group16.patch) against main's 8, on
# bench_pred.py's fractional graphs with predecessors (time_large.py --pred --fractional), both
# builds timed in turn twice. Usage: bash benchmarks/probes/argmin_group.sh (OUT set: device tool)
source benchmarks/probes/build_beside.sh
build_main &
build_patched 1 argmin_group16.patch &
wait_builds
S="float32:4096 float32:10000 float64:4096 float64:10000"
for pass in 1 2; do
  echo "main (groups of 8)" | tee -a $OUT/argmin_group.txt
  python benchmarks/probes/time_large.py $S --pred --fractional --best 1 2>&1 | tee -a $OUT/argmin_group.txt
  echo "groups of 16" | tee -a $OUT/argmin_group.txt
  PYTHONPATH=/tmp/site1 python benchmarks/probes/time_large.py $S --pred --fractional --best 1 2>&1 \
    | tee -a $OUT/argmin_group.txt
done
