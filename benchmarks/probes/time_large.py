"""Probe: device times of large solves (bench_gpu.py's time_with_env: median of reps after a
warm-up, a 0.5 ms spin first with the checks off; best of `--best` runs), each spec as
DTYPE:N[:PLAN][@LD] (PLAN forces APSP_CUDA_TILES; LD: the matrix is a view of an N x LD buffer).
--checks: the input and negative-cycle checks on (the input scan, which lets a float matrix with
integer weights run its integer twin's kernels where the engine chooses the plan). --pred: with
predecessors; --fractional: bench_gpu.py's fractional weights (floats).
Usage: python benchmarks/probes/time_large.py SPEC... [--reps R] [--best B] [--checks] [--pred]
       [--fractional]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import torch  # noqa: E402
from bench_gpu import env_set, fractional, random_graph, time_device, with_leading_dimension  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("specs", nargs="+")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--best", type=int, default=2)
ap.add_argument("--checks", action="store_true")
ap.add_argument("--pred", action="store_true")
ap.add_argument("--fractional", action="store_true")
args = ap.parse_args()
for spec in args.specs:
    head, _, ld = spec.partition("@")
    dtype, n, *plan = head.split(":")
    n = int(n)
    g = random_graph(n, dtype)
    g = with_leading_dimension(fractional(g) if args.fractional else g, int(ld) if ld else n)
    with env_set(**({"APSP_CUDA_TILES": plan[0]} if plan else {})):
        s = min(time_device(g, args.reps, args.checks, pred=args.pred) for _ in range(args.best))
    print(f"{spec:24s} {s * 1e3:10.3f} ms {n ** 3 / s / 1e12:7.3f} T", flush=True)
    del g
    torch.cuda.empty_cache()
