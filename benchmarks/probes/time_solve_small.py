"""Probe: apsp.solve(numpy float64, device='cuda') end to end at small n, median of 20 after a
warm-up, as bench_gpu.py's apsp-solve-numpy rows, for A/B runs of two builds (one on PYTHONPATH).
Usage: python benchmarks/probes/time_solve_small.py LABEL [N ...]"""
import os
import sys
import time

import numpy as np

import apsp

label = sys.argv[1]
for n in [int(a) for a in sys.argv[2:]] or [256, 512]:
    g = np.random.default_rng(n).random((n, n))
    apsp.solve(g, device="cuda")
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        apsp.solve(g, device="cuda")
        times.append(time.perf_counter() - t0)
    print(f"{label:6s} float64 n={n}: median {np.median(times) * 1e3:.3f} ms, min "
          f"{min(times) * 1e3:.3f} ({os.path.dirname(apsp.__file__)})")
