"""Small-n driver for compute-sanitizer (memcheck, racecheck) over every CUDA engine kernel: each
dtype, ragged sizes, a leading dimension > n, undirected and unweighted rules and a negative cycle,
under the plan the engine picks (one launch for n <= 64) and again with each round loop named on the
command line forced (64-wide rounds, super-rounds of 2 and 8 blocks); predecessors (the general
plan, the argmin plan for positive weights (float32 integer ones on the int32 twin), and with the
argmin plan switched off the tagged plan for integer weights; without predecessors, positive
fractional float32 weights take the round loops' min3 step) under the engine's own choice only,
since forcing a round loop does not change theirs. NumPy only (the host path), so the sanitizer
sees nothing but apsp's own kernels. Exits non-zero if a result differs from the CPU engine, or if
a predecessor is not the last edge of a shortest path.
--quick (the GPU test tier's pass, tests/test_sanitizer.py) takes n in 33, 65, 130 and 300 only,
and not the n = 4200 arriving input or the n = 1601 general plan below.
"auto" also solves integer inputs of n = 4200 (int32, int64; a negative edge) on the path that
solves a host input while it arrives (n > 4096: engine.cu, upload_and_enqueue_arriving), in
pinned chunks of 256 rows, so in six parts, and checks from the engine's trace line that it took
that path; not with --no-cluster (racecheck: its kernels are the round loop's, covered above).
"auto" also solves, with predecessors, graphs of n = 1601 with negative edges: int32 and
fractional float64 on the general plan in super-rounds (engine.cu: kPredDeepMinN), int64 on the
tagged plan with hop-scaled keys (tagged.cuh); not with --no-cluster either (racecheck over the
general plan's n^3 shared-memory loads would take long).
"auto" includes the one-cluster plan (64 < n <= 256, cluster.cuh) and the flow plan (4-byte types,
n = 260 and 300, with one worker per block as the engine picks, again with two and with three,
and again with the workers on the SMs its clusters leave free forced on: flow.cuh,
flow_extra_kernel).
--no-cluster runs those sizes on the 64-wide round loop instead, for racecheck: it reports hazards
in the cluster kernel between accesses that a __syncthreads orders, each report we read naming one
of the 64 threads that close the next pivot tile on named barrier 1 and one of the others; the same
kernel with that closure done by one warp, without the named barrier, has none. Over the flow
kernel it reports one pair only: thread 0's store of a worker's next item and the other warps' load
of it, with a BAR.SYNC between them in the SASS, in each block's last pass (benchmarks/GPU_NOTES.md).
Usage: compute-sanitizer --tool memcheck --error-exitcode 9 python benchmarks/sanitize_driver.py
       [--no-cluster] [--quick] [PLAN ...]   (default: auto k64w k64d k64o; auto = the engine's choice)"""
from __future__ import annotations

import os
import sys

import numpy as np

import apsp
from apsp import _core
from timing import engine_trace


NO_CLUSTER = "--no-cluster" in sys.argv
QUICK = "--quick" in sys.argv
PLANS = [a for a in sys.argv[1:] if not a.startswith("--")] or ["auto", "k64w", "k64d", "k64o"]
SIZES = (33, 65, 130, 300) if QUICK else (1, 2, 33, 65, 130, 200, 260, 300)


def plan_is_auto() -> bool:
    return "APSP_CUDA_TILES" not in os.environ


def solve(g, engine, pred=False, directed=True, unweighted=False):
    n = g.shape[0]
    auto = plan_is_auto()
    if NO_CLUSTER and auto and engine == "cuda" and not pred and 64 < n <= 300:
        os.environ["APSP_CUDA_TILES"] = "k64w"  # not the cluster or flow plan (module docstring)
    try:
        return solve_as_chosen(g, engine, pred, directed, unweighted)
    finally:
        if auto:
            os.environ.pop("APSP_CUDA_TILES", None)


def solve_as_chosen(g, engine, pred, directed, unweighted):
    work = np.array(g, copy=True)
    p = np.empty(g.shape, np.int32) if pred else None
    try:
        _core.solve_host(work, p, engine, 0, directed, unweighted, True, True, None)
    except apsp.NegativeCycleError as e:
        return ("negative cycle", sorted(e.vertices))
    return work, p


def main() -> None:
    checked = 0
    for plan in PLANS:
        if plan == "auto":
            os.environ.pop("APSP_CUDA_TILES", None)
        else:
            os.environ["APSP_CUDA_TILES"] = plan
        checked += check_all(predecessors=plan == "auto")
        if plan == "auto" and not NO_CLUSTER and not QUICK:
            checked += check_arriving()
            checked += check_general_plan_super_rounds()
        print(f"sanitize driver: plan {plan} done", flush=True)
    os.environ.pop("APSP_CUDA_TILES", None)
    print(f"sanitize driver: {checked} solves match the CPU engine")


def check_all(predecessors: bool) -> int:
    rng = np.random.default_rng(3)
    checked = 0
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        inf = np.inf if np.dtype(dtype).kind == "f" else (apsp.INT32_INF if dtype == np.int32 else apsp.INT64_INF)
        for n in SIZES:
            g = rng.integers(-5, 40, size=(n, n)).astype(dtype)
            g[g < 0] = 1
            g[rng.random((n, n)) < 0.6] = inf
            big = np.full((n, n + 5), 9, dtype=dtype)  # leading dimension n + 5
            big[:, :n] = g
            view = big[:, :n]
            for kw in ({}, {"pred": True}, {"directed": False}, {"unweighted": True}):
                if "pred" in kw and not predecessors:
                    continue
                a = solve(view, "cuda", **kw)
                b = solve(g, "cpu", **kw)
                same = np.allclose(a[0], b[0]) if np.dtype(dtype).kind == "f" else np.array_equal(a[0], b[0])
                if not same:
                    raise SystemExit(f"mismatch: {np.dtype(dtype).name} n={n} {kw}")
                if "pred" in kw and not predecessors_ok(g, *a):
                    raise SystemExit(f"bad predecessors: {np.dtype(dtype).name} n={n}")
                checked += 1
            pos = np.where(view == 0, 1, view)  # positive integer weights
            frac = pos + dtype(0.5)  # positive fractional weights (floats)
            if dtype == np.float32:  # without predecessors: the round loops' min3 step
                if not np.allclose(solve(frac, "cuda")[0], solve(frac, "cpu")[0]):
                    raise SystemExit(f"mismatch: float32 n={n} positive fractional weights")
                checked += 1
            if dtype in (np.int32, np.float32) and n > 256 and plan_is_auto() and not NO_CLUSTER:
                # the flow plan, with what the engine does not pick at these sizes
                for var, value in (("APSP_CUDA_FLOW_WORKERS", "2"), ("APSP_CUDA_FLOW_WORKERS", "3"),
                                   ("APSP_CUDA_FLOW_EXTRA", "1")):
                    os.environ[var] = value
                    try:
                        same = np.array_equal(solve(view, "cuda")[0], solve(g, "cpu")[0])
                    finally:
                        del os.environ[var]
                    if not same:
                        raise SystemExit(f"mismatch: {np.dtype(dtype).name} n={n} flow plan, {var}={value}")
                    checked += 1
            if not predecessors:
                continue
            # positive integer weights from n > 128: the argmin plan (float32 on its int32 twin)
            # and, with APSP_CUDA_ARGMIN=0 (as int32 past kArgminMaxN), the tagged plan
            # (float64: the int64 one)
            for argmin in ("1", "0"):
                os.environ["APSP_CUDA_ARGMIN"] = argmin
                try:
                    a, b = solve(pos, "cuda", pred=True), solve(pos, "cpu", pred=True)
                finally:
                    del os.environ["APSP_CUDA_ARGMIN"]
                if not np.array_equal(a[0], b[0]) or not predecessors_ok(pos, *a):
                    raise SystemExit(f"mismatch: {np.dtype(dtype).name} n={n} positive weights, "
                                     f"predecessors, APSP_CUDA_ARGMIN={argmin}")
                checked += 1
            if dtype in (np.float32, np.float64):  # positive fractional: argmin plan from n > 128
                a, b = solve(frac, "cuda", pred=True), solve(frac, "cpu", pred=True)
                if not np.allclose(a[0], b[0]) or not predecessors_ok(frac, *a):
                    raise SystemExit(f"mismatch: {np.dtype(dtype).name} n={n} fractional weights, "
                                     "predecessors")
                checked += 1
        g = np.full((70, 70), inf, dtype=dtype)
        g[5, 6], g[6, 5] = -3, 1
        if solve(g, "cuda")[0] != "negative cycle":
            raise SystemExit("negative cycle not reported")
    return checked


def predecessors_ok(g, dist, pred) -> bool:
    """pred is -9999 exactly on the diagonal and where j is unreachable, and every other
    pred[i, j] = k is an edge k -> j with dist[i, k] + w(k, j) = dist[i, j] (to rounding for
    floats). g has no negative cycle, so dist[i, i] = 0."""
    n = g.shape[0]
    if np.dtype(g.dtype).kind == "f":
        inf, close = np.inf, lambda x, y: np.allclose(x, y, rtol=1e-5, atol=0)
    else:
        inf, close = (apsp.INT32_INF if g.dtype == np.int32 else apsp.INT64_INF), np.array_equal
    none = (dist >= inf) | np.eye(n, dtype=bool)
    if not (pred[none] == -9999).all():
        return False
    i, j = np.nonzero(~none)
    k = pred[i, j].astype(np.int64)
    if ((k < 0) | (k >= n) | (k == j)).any() or (g[k, j] >= inf).any():
        return False
    exact = np.float64 if np.dtype(g.dtype).kind == "f" else np.int64
    return close(dist[i, k].astype(exact) + g[k, j].astype(exact), dist[i, j].astype(exact))


def traced_plan(fn):
    """Run fn with APSP_CUDA_TRACE=1; return (its result, the engine's "plan" lines on stderr)."""
    return engine_trace(fn, "apsp cuda: plan ")


def check_arriving() -> int:
    rng = np.random.default_rng(5)
    n = 4200
    os.environ["APSP_CUDA_STAGING_ROWS"] = "256"
    try:
        for dtype, inf in ((np.int32, apsp.INT32_INF), (np.int64, apsp.INT64_INF)):
            g = rng.integers(1, 1000, size=(n, n)).astype(dtype)
            g[rng.random((n, n)) < 0.99] = inf
            g[7, 3] = -5
            np.fill_diagonal(g, 0)
            a, plan = traced_plan(lambda: solve(g, "cuda"))
            if len(plan) != 1 or "while it arrives in 6 parts" not in plan[0]:
                raise SystemExit(f"not the arriving path: {np.dtype(dtype).name} n={n}: {plan}")
            if not np.array_equal(a[0], solve(g, "cpu")[0]):
                raise SystemExit(f"mismatch: {np.dtype(dtype).name} n={n} arriving input")
    finally:
        del os.environ["APSP_CUDA_STAGING_ROWS"]
    return 2


def check_general_plan_super_rounds() -> int:
    """Predecessors of graphs with negative edges (weights shifted by a potential, so no negative
    cycle) at n = 1601: the general plan in super-rounds (n >= kPredDeepMinN, engine.cu:
    minplus_pred_deep_kernel) for int32 and fractional float64, ragged last tiles; int64 on the
    tagged plan with hop-scaled keys (tagged.cuh), whose keys the pack and unpack convert."""
    rng = np.random.default_rng(7)
    n = 1601
    potential = rng.integers(0, 30, size=n)
    cases = ((np.int32, apsp.INT32_INF, 0.0, "pred32,"), (np.float64, np.inf, 0.5, "pred32,"),
             (np.int64, apsp.INT64_INF, 0.0, "tagged, int64 with hop counts in its keys"))
    for dtype, inf, fraction, want in cases:
        w = rng.integers(1, 1000, size=(n, n)) + potential[:, None] - potential[None, :] + fraction
        g = w.astype(dtype)
        g[rng.random((n, n)) < 0.9] = inf
        np.fill_diagonal(g, 0)
        a, plan = traced_plan(lambda: solve(g, "cuda", pred=True))
        if len(plan) != 1 or not plan[0].startswith("apsp cuda: plan " + want):
            raise SystemExit(f"not the plan {want!r}: {np.dtype(dtype).name} n={n}: {plan}")
        if dtype == np.float64:
            same = np.allclose(a[0], solve(g, "cpu")[0], rtol=1e-12)
        else:
            same = np.array_equal(a[0], solve(g, "cpu")[0])
        if not same or not predecessors_ok(g, *a):
            raise SystemExit(f"mismatch: {np.dtype(dtype).name} n={n} {want}, predecessors")
    return len(cases)


if __name__ == "__main__":
    main()
