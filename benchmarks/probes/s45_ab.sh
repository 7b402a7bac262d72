# A/B (forty-fifth session): the host path before (s45_before.patch: main at e74c214) and after
# the Ctrl-C polls and the device listing without contexts, timed in turn; then the notebook test.
source benchmarks/probes/build_beside.sh
build_main &
build_patched old s45_before.patch &
wait_builds
for pass in 1 2; do
  python benchmarks/probes/time_solve_small.py new 256 512 | tee -a $OUT/ab.txt
  PYTHONPATH=/tmp/siteold python benchmarks/probes/time_solve_small.py old 256 512 | tee -a $OUT/ab.txt
  python benchmarks/probes/time_host.py new | tee -a $OUT/ab.txt
  PYTHONPATH=/tmp/siteold python benchmarks/probes/time_host.py old | tee -a $OUT/ab.txt
done
