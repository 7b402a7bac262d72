"""Probe: device times of large solves, checks off (median of reps after a warm-up, best of
`--best` runs; a 0.5 ms spin first, as bench_gpu.py's time_device), each spec as
DTYPE:N[:PLAN][@LD] (PLAN forces APSP_CUDA_TILES; LD: the matrix is a view of an N x LD buffer).
--checks: the input and negative-cycle checks on (the input scan, which lets a float matrix with
integer weights run its integer twin's kernels where the engine chooses the plan).
Usage: python benchmarks/probes/time_large.py SPEC... [--reps R] [--best B] [--checks]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_gpu import env_set, random_graph  # noqa: E402

from apsp import _core  # noqa: E402


def time_view(orig: torch.Tensor, ld: int, reps: int, checks: bool) -> float:
    n = orig.shape[0]
    buf = torch.empty((n, ld), dtype=orig.dtype, device=orig.device)
    work = buf[:, :n]
    s = torch.cuda.current_stream()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for rep in range(reps + 1):
        work.copy_(orig)
        if not checks:
            torch.cuda._sleep(1_000_000)
        a.record(s)
        _core.solve_device(work.data_ptr(), n, ld, str(orig.dtype).removeprefix("torch."), 0, 0, 0,
                           s.cuda_stream, True, False, checks, checks, None)
        b.record(s)
        b.synchronize()
        if rep:
            times.append(a.elapsed_time(b) * 1e-3)
    return float(np.median(times))


ap = argparse.ArgumentParser()
ap.add_argument("specs", nargs="+")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--best", type=int, default=2)
ap.add_argument("--checks", action="store_true")
args = ap.parse_args()
for spec in args.specs:
    head, _, ld = spec.partition("@")
    dtype, n, *plan = head.split(":")
    n = int(n)
    ld = int(ld) if ld else n
    g = random_graph(n, dtype)
    with env_set(**({"APSP_CUDA_TILES": plan[0]} if plan else {})):
        s = min(time_view(g, ld, args.reps, args.checks) for _ in range(args.best))
    print(f"{spec:24s} {s * 1e3:10.3f} ms {n ** 3 / s / 1e12:7.3f} T", flush=True)
    del g
    torch.cuda.empty_cache()
