"""Probe: device time of small solves of the apsp that Python imports (best of 3 medians of 50,
bench_gpu.py's time_device), for A/B runs of two builds in turn, one on PYTHONPATH.
Usage: python benchmarks/probes/time_small.py LABEL DTYPE:N ..."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import apsp  # noqa: E402
from bench_gpu import random_graph, time_device  # noqa: E402

label = sys.argv[1]
for case in sys.argv[2:]:
    dtype, n = case.split(":")
    g = random_graph(int(n), dtype)
    best = min(time_device(g, 50, False) for _ in range(3))
    print(f"{label:6s} {dtype:8s} n={int(n):5d} {best * 1e6:8.2f} us  ({os.path.dirname(apsp.__file__)})")
