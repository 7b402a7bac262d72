"""Small-n driver for compute-sanitizer (memcheck, racecheck) over every CUDA engine kernel:
each dtype, ragged sizes, a leading dimension > n, predecessors (integers with positive weights too:
the tagged plan), undirected and unweighted rules, and a negative cycle, under the plan the engine picks (one launch for n <= 64) and again with the
round loop forced (64-wide rounds and super-rounds). NumPy only (the host path), so the sanitizer sees nothing but apsp's own
kernels. Exits non-zero if a result differs from the CPU engine.
Usage: compute-sanitizer --tool memcheck --error-exitcode 9 python benchmarks/sanitize_driver.py"""
from __future__ import annotations

import os

import numpy as np

import apsp
from apsp import _core


def solve(g, engine, pred=False, directed=True, unweighted=False):
    work = np.array(g, copy=True)
    p = np.empty(g.shape, np.int32) if pred else None
    try:
        _core.solve_host(work, p, engine, 0, directed, unweighted, True, True, None)
    except apsp.NegativeCycleError as e:
        return ("negative cycle", sorted(e.vertices))
    return work, p


def main() -> None:
    checked = check_all()
    for plan in ("k64w", "k64d"):
        os.environ["APSP_CUDA_TILES"] = plan
        checked += check_all()
    del os.environ["APSP_CUDA_TILES"]
    print(f"sanitize driver: {checked} solves match the CPU engine")


def check_all() -> int:
    rng = np.random.default_rng(3)
    checked = 0
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        inf = np.inf if np.dtype(dtype).kind == "f" else (apsp.INT32_INF if dtype == np.int32 else apsp.INT64_INF)
        for n in (1, 2, 33, 65, 130, 200, 260):
            g = rng.integers(-5, 40, size=(n, n)).astype(dtype)
            g[g < 0] = 1
            g[rng.random((n, n)) < 0.6] = inf
            big = np.full((n, n + 5), 9, dtype=dtype)  # leading dimension n + 5
            big[:, :n] = g
            view = big[:, :n]
            for kw in ({}, {"pred": True}, {"directed": False}, {"unweighted": True}):
                a = solve(view, "cuda", **kw)
                b = solve(g, "cpu", **kw)
                same = np.allclose(a[0], b[0]) if np.dtype(dtype).kind == "f" else np.array_equal(a[0], b[0])
                if not same:
                    raise SystemExit(f"mismatch: {np.dtype(dtype).name} n={n} {kw}")
                checked += 1
            if np.dtype(dtype).kind == "i":  # positive weights: the tagged plan from n > 128
                pos = np.where(view == 0, 1, view)
                a, b = solve(pos, "cuda", pred=True), solve(pos, "cpu", pred=True)
                if not np.array_equal(a[0], b[0]):
                    raise SystemExit(f"mismatch: {np.dtype(dtype).name} n={n} positive weights, predecessors")
                checked += 1
        g = np.full((70, 70), inf, dtype=dtype)
        g[5, 6], g[6, 5] = -3, 1
        if solve(g, "cuda")[0] != "negative cycle":
            raise SystemExit("negative cycle not reported")
    return checked


if __name__ == "__main__":
    main()
