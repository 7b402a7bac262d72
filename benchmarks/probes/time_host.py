"""Probe: end to end from NumPy, in place, int32 n = 10000, with and without a progress callback,
call by call in turn (medians of 7 after a warm-up), for A/B runs of two builds, one on PYTHONPATH.
Usage: python benchmarks/probes/time_host.py LABEL [N]"""
import os
import sys
import time

import numpy as np

import apsp
from apsp import _core

label, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10000
rng = np.random.default_rng(1)
host = rng.integers(1, 100, (n, n), dtype=np.int32)
host[rng.random((n, n)) < 0.7] = apsp.INT32_INF
work = np.empty_like(host)
times = {"plain": [], "progress": []}
reports = []
for rep in range(8):
    for how in times:
        reports.clear()
        progress = (lambda done, total: reports.append((time.perf_counter(), done))) \
            if how == "progress" else None
        np.copyto(work, host)
        t0 = time.perf_counter()
        _core.solve_host(work, None, "cuda", 0, True, False, True, True, progress)
        times[how].append(time.perf_counter() - t0)
    first = (reports[0][0] - t0) * 1e3 if reports else float("nan")
t = {k: np.median(v[1:]) * 1e3 for k, v in times.items()}
print(f"{label:6s} n={n} plain {t['plain']:.1f} ms, progress {t['progress']:.1f} ms "
      f"({t['progress'] / t['plain'] - 1:+.1%}; {len(reports)} reports, the first at "
      f"{first:.1f} ms) ({os.path.dirname(apsp.__file__)})")
