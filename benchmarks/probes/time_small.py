"""Probe: device time of solves of the apsp that Python imports (best of 3 medians of 50, or of 10
past n = 3072; bench_gpu.py's time_with_env), for A/B runs of two builds in turn, one on
PYTHONPATH. A case's optional further fields: a plan to force (APSP_CUDA_TILES), `checks` (the
input and negative-cycle checks on), or NAME=VALUE (an environment variable for its solves).
Usage: python benchmarks/probes/time_small.py LABEL DTYPE:N[:PLAN][:checks][:NAME=VALUE] ..."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import apsp  # noqa: E402
from bench_gpu import random_graph, time_with_env  # noqa: E402

label = sys.argv[1]
for case in sys.argv[2:]:
    dtype, n, *more = case.split(":")
    g = random_graph(int(n), dtype)
    env = dict(f.split("=", 1) for f in more if "=" in f)
    env.update({"APSP_CUDA_TILES": f for f in more if "=" not in f and f != "checks"})
    checks = "checks" in more
    reps = 50 if int(n) <= 3072 else 10
    best = min(time_with_env(g, reps, checks, **env) for _ in range(3))
    print(f"{label:6s} {dtype:8s} n={int(n):5d} {':'.join(more) or 'engine':24s} {best * 1e6:10.2f} us"
          f"  ({os.path.dirname(apsp.__file__)})")
