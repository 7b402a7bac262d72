"""GPU tier for the CUDA engine (pytest -m gpu): every dtype and the awkward sizes against the CPU
engine (the reference) and SciPy; device views with a leading dimension > n; predecessors; rules
(undirected, unweighted); errors (NaN, overflow, negative cycles, CUDA failures, out of memory);
repeated and concurrent calls; progress. Device buffers come from PyTorch and are passed to the
engine as raw pointers through apsp._core.solve_device (the public device-array intake is tested
by its own tier). Skips with the reason where no GPU is usable; fails under APSP_REQUIRE_GPU=1."""
from __future__ import annotations

import os
import re
import threading
import time

import numpy as np
import pytest

import apsp
from apsp import _core
from graphs import (CAIOnly, assert_chains_lead_back, crafted_pred_loop, crafted_pred_loops,
                    env_set, hub_star, injected_pred_loops, long_ring, looping_rows,
                    mends_through_hubs, narrow_boundary_chain, rounding_zero_cycles, traced,
                    zero_weight_graphs)

pytestmark = pytest.mark.gpu

DTYPES = [np.float32, np.float64, np.int32, np.int64]
SIZES = [1, 2, 31, 63, 64, 65, 127, 129, 1000, 4097]
INF = {np.dtype(np.int32): apsp.INT32_INF, np.dtype(np.int64): apsp.INT64_INF}


def no_edge(dtype) -> float | int:
    dtype = np.dtype(dtype)
    return np.inf if dtype.kind == "f" else INF[dtype]


def random_graph(n: int, dtype, rng: np.random.Generator, density: float = 0.3,
                 negative: bool = True) -> np.ndarray:
    """Random directed graph with unreachable pairs and, if `negative`, negative edges but no
    negative cycle (non-negative weights shifted by a potential: w + p[i] - p[j])."""
    w = rng.integers(1, 60, size=(n, n)).astype(np.float64)
    if negative:
        p = rng.integers(0, 30, size=n).astype(np.float64)
        w = w + p[:, None] - p[None, :]
    g = w.astype(dtype)
    mask = rng.random((n, n)) > density
    if n > 4:
        mask[: n // 5, n // 2:] = True  # a block with no edges: unreachable pairs
    g[mask] = no_edge(dtype)
    return g


def cpu_solve(g: np.ndarray, pred: bool = False, **kw):
    """The reference: the CPU engine's solve in g's own dtype, never its 16-bit narrow solve
    (APSP_CPU_NARROW=0), so that the GPU's narrow plan is checked against another path."""
    work = np.array(g, order="C", copy=True)
    p = np.empty(g.shape, np.int32) if pred else None
    checks = kw.get("checks", True)
    with env_set(APSP_CPU_NARROW="0"):
        _core.solve_host(work, p, "cpu", 0, kw.get("directed", True), kw.get("unweighted", False),
                         checks, checks, None)
    return (work, p) if pred else work


def gpu_host_solve(g: np.ndarray, pred: bool = False, **kw):
    """The CUDA engine on a copy of g; checks=False turns off the input scan and the negative-cycle
    check."""
    work = np.array(g, order="C", copy=True)
    p = np.empty(g.shape, np.int32) if pred else None
    checks = kw.get("checks", True)
    _core.solve_host(work, p, "cuda", 0, kw.get("directed", True), kw.get("unweighted", False),
                     checks, checks, kw.get("progress"))
    return (work, p) if pred else work


def need_two_gpus() -> list[str]:
    """Every GPU of the machine (a split over all of them), or a skip where there are fewer than 2."""
    count = len(apsp.info()["devices"])
    if count < 2:
        pytest.skip(f"needs 2 GPUs, this machine has {count}")
    return [f"cuda:{i}" for i in range(count)]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="the device-pointer tests use PyTorch buffers")


def gpu_device_solve(torch, g: np.ndarray, pad: int = 0, stream=None, pred: bool = False,
                     first: int = 0, **kw):
    """Solve on a torch buffer of n x (n + pad) through the raw-pointer entry, return the n x n view
    (with `pred`, also the predecessors, from an int32 buffer of n x (n + pad) too); the view of
    the distances starts at column `first` of its buffer (n x (first + n + pad))."""
    n = g.shape[0]
    buf = torch.full((max(n, 1), first + n + pad), 7, dtype=getattr(torch, np.dtype(g.dtype).name),
                     device="cuda")
    view = buf[:n, first:first + n]
    view.copy_(torch.from_numpy(np.ascontiguousarray(g)))
    pbuf = torch.full((max(n, 1), n + pad), 7, dtype=torch.int32, device="cuda") if pred else None
    s = stream or torch.cuda.current_stream()
    with torch.cuda.stream(s):
        _core.solve_device(view.data_ptr(), n, buf.stride(0), np.dtype(g.dtype).name,
                           pbuf.data_ptr() if pred else 0, pbuf.stride(0) if pred else 0,
                           torch.cuda.current_device(), s.cuda_stream, kw.get("directed", True),
                           kw.get("unweighted", False), True, True, None)
    s.synchronize()
    if pad or first:  # the columns outside the view are never touched
        assert bool((buf[:n, :first] == 7).all()) and bool((buf[:n, first + n:] == 7).all())
        assert not pred or bool((pbuf[:n, n:] == 7).all())
    dist = view.cpu().numpy()
    return (dist, pbuf[:n, :n].cpu().numpy()) if pred else dist


def assert_same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype
    if got.dtype.kind == "f":
        fin = np.isfinite(want)
        np.testing.assert_array_equal(np.isfinite(got), fin)
        np.testing.assert_allclose(got[fin], want[fin], rtol=1e-5, atol=1e-3)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", SIZES)
def test_matches_cpu_engine(n, dtype, rng):
    g = random_graph(n, dtype, rng)
    assert_same(gpu_host_solve(g), cpu_solve(g))


# The engine picks a plan by n (one launch up to n = 64, then 64-wide rounds, then super-rounds of
# 2, 4 and 8 pivot blocks; CUDA-graph replay up to 4096); APSP_CUDA_TILES forces a round-loop
# shape, so each one runs on the sizes where it would not be picked too: odd and even block
# counts, n a multiple of 16 bytes or not, ragged last blocks.
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 64, 130, 250, 700, 1000, 2100])
@pytest.mark.parametrize("plan", ["k64o", "k64q", "k64d", "k64w"])
def test_every_plan_matches_cpu_engine(plan, n, dtype, rng, monkeypatch):
    g = random_graph(n, dtype, rng)
    want = cpu_solve(g)
    monkeypatch.setenv("APSP_CUDA_TILES", plan)
    assert_same(gpu_host_solve(g), want)
    assert_rules_match_cpu(n, dtype, rng, [{"directed": False}])


def assert_rules_match_cpu(n: int, dtype, rng, rules) -> None:
    """Each rule set (undirected, unweighted) on a random graph without negative edges (undirected,
    a negative edge is a negative cycle) gives the CPU engine's result."""
    u = random_graph(n, dtype, rng, negative=False)
    for kw in rules:
        assert_same(gpu_host_solve(u, **kw), cpu_solve(u, **kw))


def sm90() -> bool:
    """Compute capability 9.0 or later on device 0: thread-block clusters (the cluster plan) and
    VIMNMX3 (the min3 step)."""
    return tuple(apsp.info()["devices"][0]["compute_capability"]) >= (9, 0)


# n <= 256 is one launch of one thread-block cluster (cluster.cuh): S x S blocks holding 64 x 64
# regions, 32-wide pivots. Every block count (1, 4, 9 and 16), ragged last pivot blocks and
# regions, the rules (undirected, unweighted) and negative edges; forced down to n = 1.
CLUSTER_SIZES = [1, 2, 33, 64, 65, 96, 127, 128, 129, 150, 192, 193, 230, 255, 256]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", CLUSTER_SIZES)
def test_cluster_plan_matches_cpu_engine(n, dtype, rng, monkeypatch):
    if not sm90():
        pytest.skip("the cluster plan needs compute capability 9.0")
    monkeypatch.setenv("APSP_CUDA_TILES", "cluster")
    g = random_graph(n, dtype, rng)
    assert_same(gpu_host_solve(g), cpu_solve(g))
    assert_rules_match_cpu(n, dtype, rng, [{"directed": False}, {"unweighted": True},
                                           {"directed": False, "unweighted": True}])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [5, 100, 256])
def test_cluster_plan_device_views(torch, n, dtype, rng, monkeypatch):
    if not sm90():
        pytest.skip("the cluster plan needs compute capability 9.0")
    monkeypatch.setenv("APSP_CUDA_TILES", "cluster")
    g = random_graph(n, dtype, rng)
    assert_same(gpu_device_solve(torch, g, pad=13), cpu_solve(g))


# The cluster plan moves 16-byte groups where the matrix and its rows are 16-byte aligned, single
# elements elsewhere: rows 108 elements apart, views starting 0, 1, 2 or 4 elements in.
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("first", [0, 1, 2, 4])
def test_cluster_plan_view_alignment(torch, first, dtype, rng, monkeypatch):
    if not sm90():
        pytest.skip("the cluster plan needs compute capability 9.0")
    monkeypatch.setenv("APSP_CUDA_TILES", "cluster")
    g = random_graph(100, dtype, rng)
    assert_same(gpu_device_solve(torch, g, pad=8 - first, first=first), cpu_solve(g))


@pytest.mark.parametrize("n, plan", [(64, "small"), (65, "cluster"), (200, "cluster"),
                                     (256, "cluster"), (257, "flow"), (289, "flow"), (330, "flow"),
                                     (833, "flow"), (1408, "flow"), (1728, "flow"),
                                     (1729, "k64w")])
def test_plan_by_size(n, plan, rng, capfd):
    if plan in ("cluster", "flow") and not sm90():
        plan = "k64w"
    g = random_graph(n, np.int32, rng)
    got, ran = plan_of(capfd, lambda: gpu_host_solve(g))
    assert ran == plan
    assert_same(got, cpu_solve(g))


# The round loops by size and by the dtype of the kernels that run (engine.cu: choose_tiles):
# 64-wide rounds, then super-rounds of 2 pivot blocks from n = 2240 for 4-byte types, 1536 for
# int64 and 1920 for float64, whose integer weights no longer take the int64 kernels (slower than
# float64's own since the thirty-seventh session), of 4 from 4864 (an integer host input that
# large is solved while it arrives: the same plan). Each result equals the 64-wide round loop's
# forced on the same graph (integers: the same sums and minima in another order; fractional
# float64: within rounding; every plan against the CPU engine: test_every_plan_matches_cpu_engine).
@pytest.mark.parametrize("dtype, n, fractional, plan", [
    (np.int32, 2239, False, "k64w"), (np.int32, 2240, False, "k64d"), (np.int32, 4863, False, "k64d"),
    (np.int32, 4864, False, "k64q"), (np.float32, 2240, True, "k64d"), (np.int64, 1535, False, "k64w"),
    (np.int64, 1536, False, "k64d"), (np.float64, 1536, False, "k64w"), (np.float64, 1919, True, "k64w"),
    (np.float64, 1920, True, "k64d")])
def test_round_loop_by_size(dtype, n, fractional, plan, rng, capfd, monkeypatch):
    monkeypatch.setenv("APSP_CUDA_NARROW", "0")  # the hub bound would take these weights
    g = random_graph(n, dtype, rng, negative=False)
    if fractional:
        g = np.where(g == no_edge(dtype), g, g + rng.random(g.shape).astype(dtype))
    got, ran = plan_of(capfd, lambda: gpu_host_solve(g))
    assert ran == plan
    monkeypatch.setenv("APSP_CUDA_TILES", "k64w")
    want = gpu_host_solve(g)
    if fractional:
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    else:
        np.testing.assert_array_equal(got, want)


# A device array whose rows are not 16-byte aligned (its own layout, solved in place): the flow
# plan only where it has one worker per block (n <= 832); past that the round loop (engine.cu:
# choose_tiles). Host arrays always get an aligned working matrix (test_plan_by_size).
@pytest.mark.parametrize("n, pad, first, plan", [(700, 1, 0, "flow"), (1000, 1, 0, "k64w"),
                                                 (1000, 4, 0, "flow"), (1000, 4, 1, "k64w"),
                                                 (833, 0, 0, "k64w"), (833, 3, 0, "flow")])
def test_plan_by_alignment(torch, n, pad, first, plan, rng, capfd):
    if not sm90():
        pytest.skip("the flow plan needs compute capability 9.0")
    g = random_graph(n, np.int32, rng)
    got, ran = plan_of(capfd, lambda: gpu_device_solve(torch, g, pad=pad, first=first))
    assert ran == plan
    assert_same(got, cpu_solve(g))


# 256 < n <= 1728, 4-byte types: the flow plan (flow.cuh): one launch, the pivot chain on one
# cluster of 16 blocks and the rest as work items on every other SM, claimed in order. Forced from
# n = 257 to its largest, 4096 (64 tile rows): ragged last tiles, 5 to 64 tile rows, the rules
# and negative edges; integers bit for bit as the 64-wide round loop (the same sums and minima).
FLOW_SIZES = [257, 300, 383, 449, 513, 700, 1000, 1024, 1100, 2100, 4096]
FLOW_ONE_WORKER_MAX_N, FLOW_TWO_WORKERS_MAX_N = 832, 1280  # engine.cu: flow_workers
FLOW_MAX_N, FLOW_EXTRA_MIN_N = 1728, 1024  # engine.cu: choose_tiles, flow_extra
WORKERS_SAID = {1: "one worker", 2: "two workers", 3: "three workers"}


def flow_workers_said(n: int) -> str:
    """How the trace line names the flow plan's workers per block at n, unforced."""
    return WORKERS_SAID[1 if n <= FLOW_ONE_WORKER_MAX_N else 2 if n <= FLOW_TWO_WORKERS_MAX_N
                        else 3]


def assert_flow_equals_round_loop(got: np.ndarray, g: np.ndarray, monkeypatch) -> None:
    """An int32 flow-plan result is bit for bit the 64-wide round loop's on the same graph."""
    monkeypatch.setenv("APSP_CUDA_TILES", "k64w")
    np.testing.assert_array_equal(got, gpu_host_solve(g))
    monkeypatch.setenv("APSP_CUDA_TILES", "flow")


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", FLOW_SIZES)
def test_flow_plan_matches_cpu_engine(n, dtype, rng, monkeypatch):
    if not sm90():
        pytest.skip("the flow plan needs compute capability 9.0")
    monkeypatch.setenv("APSP_CUDA_TILES", "flow")
    g = random_graph(n, dtype, rng)
    got = gpu_host_solve(g)
    assert_same(got, cpu_solve(g))
    if dtype == np.int32:
        assert_flow_equals_round_loop(got, g, monkeypatch)
    if n <= 1100:
        assert_rules_match_cpu(n, dtype, rng, [{"directed": False}, {"unweighted": True}])


# Views: rows further apart than n, and starts that are and are not 16-byte aligned (the flow
# kernel copies 16-byte groups only where the matrix and its rows are 16-byte aligned).
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n, pad, first", [(300, 13, 0), (700, 4, 0), (700, 3, 1), (1000, 6, 2),
                                           (1024, 0, 4)])
def test_flow_plan_device_views(torch, n, pad, first, dtype, rng, monkeypatch):
    if not sm90():
        pytest.skip("the flow plan needs compute capability 9.0")
    monkeypatch.setenv("APSP_CUDA_TILES", "flow")
    g = random_graph(n, dtype, rng)
    assert_same(gpu_device_solve(torch, g, pad=pad, first=first), cpu_solve(g))


# A negative cycle early, in the middle and in the last tile row. float32: both of its vertices are
# reported. int32: once a negative cycle exists the sums wrap, and which diagonals end negative
# depends on the order of the updates (as test_negative_cycle_raises_like_cpu says), so only the
# error and some vertices.
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("where", [(10, 11), (400, 650), (1020, 1000)])
def test_flow_plan_negative_cycle(where, dtype, rng, capfd):
    g = random_graph(1024, dtype, rng, negative=False)
    a, b = where
    g[a, b] = -500
    g[b, a] = 1
    with pytest.raises(apsp.NegativeCycleError) as err:
        plan_of(capfd, lambda: gpu_host_solve(g))
    assert "plan flow" in capfd.readouterr().err or not sm90()
    assert err.value.vertices
    if dtype == np.float32:
        assert {a, b} <= set(err.value.vertices)


@pytest.mark.parametrize("dtype, n", [(np.float64, 500), (np.int64, 500), (np.int32, 256),
                                      (np.int32, 4097)])
def test_flow_plan_refuses(dtype, n, rng, monkeypatch):
    monkeypatch.setenv("APSP_CUDA_TILES", "flow")
    g = random_graph(n, dtype, rng)
    before = g.copy()
    with pytest.raises(ValueError, match=r"APSP_CUDA_TILES=flow needs a 4-byte dtype, 256 < n "
                                         rf"<= 4096 \(n = {n}\)"):
        gpu_host_solve(g)
    np.testing.assert_array_equal(g, before)


# Workers per block of the flow plan: the whole block up to n = 832, two groups of 128 threads up
# to 1280, three above (engine.cu: flow_workers); APSP_CUDA_FLOW_WORKERS=1|2|3 forces each, here
# at the others' sizes, integers bit for bit as the 64-wide round loop.
@pytest.mark.parametrize("n, workers", [(300, None), (832, None), (833, None), (1152, None),
                                        (1280, None), (1281, None), (1728, None), (300, 2),
                                        (700, 2), (1024, 1), (2100, 1), (300, 3), (1000, 3),
                                        (1408, 2), (2100, 2)])
def test_flow_workers(n, workers, rng, monkeypatch, capfd):
    if not sm90():
        pytest.skip("the flow plan needs compute capability 9.0")
    monkeypatch.setenv("APSP_CUDA_TILES", "flow")
    if workers:
        monkeypatch.setenv("APSP_CUDA_FLOW_WORKERS", str(workers))
    said = WORKERS_SAID[workers] if workers else flow_workers_said(n)
    for dtype in (np.int32, np.float32):
        g = random_graph(n, dtype, rng)
        got, line = trace_of(capfd, lambda: gpu_host_solve(g))
        assert f"with {said} per block" in line
        assert_same(got, cpu_solve(g))
        if dtype == np.int32:
            assert_flow_equals_round_loop(got, g, monkeypatch)


@pytest.mark.parametrize("var, value, message", [
    ("APSP_CUDA_FLOW_WORKERS", "4", r"APSP_CUDA_FLOW_WORKERS=4 is not a number of workers per "
                                    r"block; supported: 1, 2, 3 \(or leave it unset\)"),
    ("APSP_CUDA_FLOW_EXTRA", "yes", r"APSP_CUDA_FLOW_EXTRA=yes is not a switch; supported: 0, 1")])
def test_flow_overrides_refused(torch, var, value, message, rng, monkeypatch):
    """A bad override fails before any kernel touches the matrix, even in place on the device."""
    if not sm90():
        pytest.skip("the flow plan needs compute capability 9.0")
    monkeypatch.setenv("APSP_CUDA_TILES", "flow")
    monkeypatch.setenv(var, value)
    g = random_graph(500, np.int32, rng)
    t = torch.from_numpy(g).cuda()
    s = torch.cuda.current_stream()
    with pytest.raises(ValueError, match=message):
        _core.solve_device(t.data_ptr(), 500, 500, "int32", 0, 0, torch.cuda.current_device(),
                           s.cuda_stream, True, False, True, True, None)
    np.testing.assert_array_equal(t.cpu().numpy(), g)
    monkeypatch.delenv(var)
    assert_same(gpu_device_solve(torch, g), cpu_solve(g))


# Past n = 1024 the flow plan puts more workers on the SMs that its clusters leave free (a second
# launch after the flow kernel's, with programmatic dependent launch: engine.cu, flow_extra).
# APSP_CUDA_FLOW_EXTRA=0|1 forces it off or on, here each at the other's sizes; without
# programmatic dependent launch there is none. The same results bit for bit every way.
@pytest.mark.parametrize("dtype", [np.int32, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [700, 1100, 1408, 1700])
def test_flow_plan_extra_workers(n, dtype, rng, monkeypatch, capfd):
    if not sm90():
        pytest.skip("the flow plan needs compute capability 9.0")
    g = random_graph(n, dtype, rng)
    if np.dtype(dtype).kind == "f":
        plus_fraction(g)
    extra = "and more on the SMs its clusters leave free"
    got, line = trace_of(capfd, lambda: gpu_host_solve(g))
    assert "plan flow" in line
    assert (extra in line) == (n > FLOW_EXTRA_MIN_N)
    assert_same(got, cpu_solve(g))
    monkeypatch.setenv("APSP_CUDA_FLOW_EXTRA", "1" if n <= FLOW_EXTRA_MIN_N else "0")
    other, line = trace_of(capfd, lambda: gpu_host_solve(g))
    assert (extra in line) == (n <= FLOW_EXTRA_MIN_N)
    np.testing.assert_array_equal(other, got)
    monkeypatch.setenv("APSP_CUDA_FLOW_EXTRA", "1")
    monkeypatch.setenv("APSP_CUDA_PDL", "0")
    other, line = trace_of(capfd, lambda: gpu_host_solve(g))
    assert extra not in line
    np.testing.assert_array_equal(other, got)


def test_cluster_plan_refuses_large_n(rng, monkeypatch):
    monkeypatch.setenv("APSP_CUDA_TILES", "cluster")
    g = random_graph(257, np.float32, rng)
    before = g.copy()
    with pytest.raises(ValueError, match=r"APSP_CUDA_TILES=cluster needs n <= 256 \(n = 257\)"):
        gpu_host_solve(g)
    np.testing.assert_array_equal(g, before)
    monkeypatch.delenv("APSP_CUDA_TILES")
    assert_same(gpu_host_solve(g), cpu_solve(g))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 65, 300, 2500])
def test_device_views_with_leading_dimension(torch, n, dtype, rng):
    g = random_graph(n, dtype, rng)
    assert_same(gpu_device_solve(torch, g, pad=13), cpu_solve(g))


# A leading dimension that is a multiple of 16 bytes with a ragged n: the 16-byte edge path with
# partly filled vectors at the last columns and the last pivot block (kernels.cuh, Mode::Edge).
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [5, 65, 301, 2101])
@pytest.mark.parametrize("plan", ["k64o", "k64q", "k64d", "k64w"])
def test_device_views_aligned_ld_ragged_n(torch, plan, n, dtype, rng, monkeypatch):
    g = random_graph(n, dtype, rng)
    monkeypatch.setenv("APSP_CUDA_TILES", plan)
    pad = 16 - n % 16  # ld = n + pad: a multiple of 16 elements
    assert_same(gpu_device_solve(torch, g, pad=pad), cpu_solve(g))


# The edge strips (kernels.cuh: edge_tile): a last tile row and column 1, 16, 17, 32 and 33 wide
# (the quarter strip, its widest, the half strip, its widest, a whole tile), on 64-wide rounds and
# super-rounds, from host arrays (rows on 128-byte lines) and from device views (ld a multiple of
# 16 elements), with negative edges and without (float32: the min3 step).
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("width", [1, 16, 17, 32, 33])
@pytest.mark.parametrize("plan", ["k64q", "k64w"])
def test_edge_strips(torch, plan, width, dtype, rng, monkeypatch):
    n = 5 * 64 + width
    monkeypatch.setenv("APSP_CUDA_TILES", plan)
    for negative in (True, False):
        g = random_graph(n, dtype, rng, negative=negative)
        want = cpu_solve(g)
        assert_same(gpu_host_solve(g), want)
        assert_same(gpu_device_solve(torch, g, pad=-n % 16), want)


# Interior tiles take TMA copies on sm_90 (kernels.cuh: Mode::Bulk); APSP_CUDA_TMA=0 keeps the
# cp.async copies, which GPUs before sm_90 always run: both on the same graphs, host and device.
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("plan", ["k64q", "k64w"])
def test_interior_tiles_without_tma(torch, plan, dtype, rng, monkeypatch):
    n = 600
    g = random_graph(n, dtype, rng)
    want = cpu_solve(g)
    monkeypatch.setenv("APSP_CUDA_TILES", plan)
    monkeypatch.setenv("APSP_CUDA_TMA", "0")
    assert_same(gpu_host_solve(g), want)
    assert_same(gpu_device_solve(torch, g, pad=8), want)


@pytest.mark.parametrize("n", [2, 64, 129, 700])
def test_float64_matches_scipy(n, rng):
    from scipy.sparse.csgraph import csgraph_from_dense, floyd_warshall

    g = random_graph(n, np.float64, rng)
    want = floyd_warshall(csgraph_from_dense(g, null_value=np.inf), directed=True)  # zeros are edges
    assert_same(gpu_host_solve(g), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 33, 100, 257])
def test_predecessors_describe_shortest_paths(n, dtype, rng):
    g = random_graph(n, dtype, rng)
    dist, pred = gpu_host_solve(g, pred=True)
    want = cpu_solve(g)
    assert_same(dist, want)
    inf = no_edge(dtype)
    for i in range(n):
        for j in range(n):
            if i == j or dist[i, j] == inf:
                assert pred[i, j] == -9999, (i, j)
                continue
            k = pred[i, j]
            assert 0 <= k < n and k != j, (i, j, k)  # the vertex before j, over an edge k -> j
            assert g[k, j] != inf
            np.testing.assert_allclose(float(dist[i, k] if k != i else 0) + float(g[k, j]),
                                       float(dist[i, j]), rtol=1e-5, atol=1e-3)


def predecessor_edges(g: np.ndarray, dist: np.ndarray, pred: np.ndarray):
    """pred is -9999 exactly where j is i or unreachable, and every other pred[i, j] = k is a
    vertex with an edge k -> j. Returns (i, j, k) of those pairs."""
    n = g.shape[0]
    inf = no_edge(g.dtype)
    none = (dist == inf) | np.eye(n, dtype=bool)
    assert (pred[none] == -9999).all()
    i, j = np.nonzero(~none)
    k = pred[i, j].astype(np.int64)
    assert ((k >= 0) & (k < n) & (k != j)).all()
    assert (g[k, j] != inf).all()
    return i, j, k


def assert_tight_predecessors(g: np.ndarray, dist: np.ndarray, pred: np.ndarray) -> None:
    """Every pred[i, j] is an edge k -> j with dist[i, k] + w(k, j) == dist[i, j] (exactly: integer
    weights), -9999 exactly where j is i or unreachable. With positive weights a chain of such
    edges strictly shortens, so it reaches i: the paths have the lengths dist reports."""
    exact = np.float64 if g.dtype.kind == "f" else np.int64  # integer weights: exact in both
    i, j, k = predecessor_edges(g, dist, pred)
    w = g[k, j].astype(exact)
    np.testing.assert_array_equal(dist[i, k].astype(exact) + w, dist[i, j].astype(exact))


def trace_lines(capfd, solve, *prefixes: str):
    """Run `solve` with APSP_CUDA_TRACE=1: (its result, the engine's lines starting with one of
    `prefixes`)."""
    return traced(capfd, solve, "APSP_CUDA_TRACE", *prefixes)


def trace_of(capfd, solve):
    """Run `solve` with APSP_CUDA_TRACE=1 and return (its result, the engine's plan line)."""
    out, lines = trace_lines(capfd, solve, "apsp cuda: plan ")
    assert len(lines) == 1, lines
    return out, lines[0]


def argmin_trace(capfd, solve):
    """Run `solve` with APSP_CUDA_TRACE=1: (its result, the plan line and any argmin line)."""
    return trace_lines(capfd, solve, "apsp cuda: plan ", "apsp cuda: argmin ")


def plan_of(capfd, solve):
    """Run `solve` with APSP_CUDA_TRACE=1 and return (its result, the plan the engine printed)."""
    out, line = trace_of(capfd, solve)
    return out, line.split()[3].rstrip(",")


# Integers with positive weights take the argmin plan (engine.cu: phase 3 keeps the winning group
# of 8 pivots; exact on integers, so no check): int64 at every n, int32 below kArgminMaxN (15360)
# and the tagged plan from it where their paths fit the tags (phase 3 finds the winning pivot in
# the low bits of each sum, tagged.cuh). APSP_CUDA_ARGMIN=0 forces the tagged plan here, as
# APSP_CUDA_TILES=pred32 forces the general predecessor plan, on the same graphs. n <= 128 always
# takes pred32. Sizes: one super-round (no phase 3), several, ragged blocks of every kind (n % 32,
# n % 64, n % 128), and n large enough for interior and edge tiles.
@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [100, 129, 200, 257, 300, 700, 1000, 2100])
@pytest.mark.parametrize("plan", ["auto", "tagged", "pred32"])
def test_positive_integer_predecessors(plan, n, dtype, rng, capfd, monkeypatch):
    if plan == "pred32":
        monkeypatch.setenv("APSP_CUDA_TILES", plan)
    elif plan == "tagged":
        monkeypatch.setenv("APSP_CUDA_ARGMIN", "0")
    g = random_graph(n, dtype, rng, negative=False)
    (dist, pred), chosen = plan_of(capfd, lambda: gpu_host_solve(g, pred=True))
    assert chosen == ("pred32" if plan == "pred32" or n <= 128
                      else "argmin" if plan == "auto" else "tagged")
    assert_same(dist, cpu_solve(g))
    assert_tight_predecessors(g, dist, pred)


def long_int32_graph(n: int, rng: np.random.Generator) -> np.ndarray:
    """random_graph's positive int32 graph with its weights scaled (plus a random remainder) so
    that (n - 1) * max w is past the int32 tags' bound of 2^22 - 2 (tagged.cuh), about twice it,
    and far below INF / 2."""
    g = random_graph(n, np.int32, rng, negative=False)
    scale = 2 * -(-(2**22) // ((n - 1) * 59))
    edges = (g != apsp.INT32_INF) & ~np.eye(n, dtype=bool)
    g[edges] = g[edges] * scale + rng.integers(0, scale, size=int(edges.sum()))
    assert (n - 1) * int(g[edges].max()) > 2**22 - 2
    return g


# int32 paths too long for the tags (past 2^22 - 2: at n = 10000 any weight above 419) take the
# argmin plan at every n, as every positive integer weight does below kArgminMaxN. Sizes as
# above; the long chains of a path through every vertex; device views (ld not a multiple of 16
# bytes, and one that is with n ragged).
@pytest.mark.parametrize("n", [129, 200, 257, 300, 1000, 2101])
def test_long_int32_paths_take_the_argmin_plan(n, rng, capfd):
    g = long_int32_graph(n, rng)
    (dist, pred), lines = argmin_trace(capfd, lambda: gpu_host_solve(g, pred=True))
    assert lines == [f"apsp cuda: plan argmin, int32, n = {n}"]
    np.testing.assert_array_equal(dist, cpu_solve(g))
    assert_tight_predecessors(g, dist, pred)


def test_long_int32_paths_long_chains(rng, capfd):
    n = 1200
    order = rng.permutation(n)
    g = np.full((n, n), apsp.INT32_INF, np.int32)
    np.fill_diagonal(g, 0)
    g[order[:-1], order[1:]] = rng.integers(10_000, 20_000, size=n - 1)
    (dist, pred), lines = argmin_trace(capfd, lambda: gpu_host_solve(g, pred=True))
    assert lines == [f"apsp cuda: plan argmin, int32, n = {n}"]
    np.testing.assert_array_equal(dist, cpu_solve(g))
    assert_tight_predecessors(g, dist, pred)
    assert (pred[order[0], order[1:]] == order[:-1]).all()  # the one path from the first vertex


@pytest.mark.parametrize("n", [300, 2101])
@pytest.mark.parametrize("pad", [13, 16])
def test_long_int32_paths_device_views(torch, n, pad, rng, capfd):
    g = long_int32_graph(n, rng)
    pad = pad - n % 16 if pad == 16 else pad
    (dist, pred), lines = argmin_trace(capfd, lambda: gpu_device_solve(torch, g, pad=pad, pred=True))
    assert lines == [f"apsp cuda: plan argmin, int32, n = {n}"]
    np.testing.assert_array_equal(dist, cpu_solve(g))
    assert_tight_predecessors(g, dist, pred)


# float32 integer weights run the int32 plans on the same buffer, converted in place and back, by
# the integers' rule: the argmin plan (exact: no check, so no argmin line) with the tagged plan on
# or left out (APSP_CUDA_TAGS=0), the tagged plan with the argmin plan left out (APSP_CUDA_ARGMIN=0,
# as past kArgminMaxN).
@pytest.mark.parametrize("n", [129, 300, 2101])
@pytest.mark.parametrize("switch, want", [(None, "argmin, float32 on integer kernels"),
                                          ("APSP_CUDA_TAGS", "argmin, float32 on integer kernels"),
                                          ("APSP_CUDA_ARGMIN", "tagged, float32")],
                         ids=["auto", "no-tags", "no-argmin"])
def test_float32_integer_weights_on_int32_plans(switch, want, n, rng, capfd, monkeypatch):
    if switch:
        monkeypatch.setenv(switch, "0")
    g = random_graph(n, np.float32, rng, negative=False)
    (dist, pred), lines = argmin_trace(capfd, lambda: gpu_host_solve(g, pred=True))
    assert lines == [f"apsp cuda: plan {want}, n = {n}"]
    np.testing.assert_array_equal(dist, cpu_solve(g))
    assert_tight_predecessors(g, dist, pred)


def scratch_high_water(solve) -> int:
    """Run `solve` and return the most bytes the engine's stream-ordered scratch (cudaMallocAsync:
    the current device's default memory pool, which PyTorch's own allocator does not use) held at
    once: the pool's CU_MEMPOOL_ATTR_USED_MEM_HIGH, reset before, through the driver API."""
    import ctypes
    cuda = ctypes.CDLL("libcuda.so.1")
    used_mem_high = 8  # CU_MEMPOOL_ATTR_USED_MEM_HIGH
    device, pool = ctypes.c_int(), ctypes.c_void_p()
    assert cuda.cuCtxGetDevice(ctypes.byref(device)) == 0
    assert cuda.cuDeviceGetDefaultMemPool(ctypes.byref(pool), device) == 0
    value = ctypes.c_uint64(0)
    assert cuda.cuMemPoolSetAttribute(pool, used_mem_high, ctypes.byref(value)) == 0
    solve()
    assert cuda.cuMemPoolGetAttribute(pool, used_mem_high, ctypes.byref(value)) == 0
    return value.value


_POOL_THRESHOLD_CHILD = r"""
import ctypes, sys
import numpy as np
import apsp
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
device, pool = ctypes.c_int(), ctypes.c_void_p()
assert cuda.cuDeviceGet(ctypes.byref(device), 0) == 0
assert cuda.cuDeviceGetDefaultMemPool(ctypes.byref(pool), device) == 0
RELEASE_THRESHOLD = 4  # CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
def threshold(value=None):
    v = ctypes.c_uint64(value or 0)
    if value is not None:
        assert cuda.cuMemPoolSetAttribute(pool, RELEASE_THRESHOLD, ctypes.byref(v)) == 0
    assert cuda.cuMemPoolGetAttribute(pool, RELEASE_THRESHOLD, ctypes.byref(v)) == 0
    return v.value
g = np.random.default_rng(0).integers(1, 50, size=(300, 300)).astype(np.int32)
want = apsp.solve(g, device="cpu")
threshold(int(sys.argv[1]))
for _ in range(2):  # the second time after the caller set the threshold to 0
    assert np.array_equal(apsp.solve(g, device="cuda"), want)  # checked: scratch from the pool
    print(threshold())
    threshold(0)
"""


@pytest.mark.parametrize("before, first", [(0, 64 << 20), (1 << 30, 1 << 30)],
                         ids=["default-raised", "larger-kept"])
def test_pool_keeps_scratch_across_syncs(before, first):
    """The stream-ordered pool's release threshold, 0 as CUDA leaves it, gave every freed byte
    back at each sync, so each checked call's scratch was mapped afresh (about 180 µs a call on an
    H200: benchmarks/results/pool_threshold_h200_s59.txt). The engine raises it to 64 MiB once per
    device: a caller's larger threshold stays, and a caller's later 0 is theirs. In a child
    process, whose first solve is the first this device sees."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _POOL_THRESHOLD_CHILD, str(before)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [int(x) for x in proc.stdout.split()] == [first, 0]


_FIRST_CALL_CAPTURED_CHILD = r"""
import numpy as np, torch
import apsp
g = np.random.default_rng(0).integers(1, 50, size=(1024, 1024)).astype(np.int32)
src = torch.from_numpy(g).cuda()
static = src.clone()
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):  # the process's first stream-ordered allocation, in the capture
    apsp.solve(static, overwrite=True, check=False)
static.copy_(src)
graph.replay()
torch.cuda.synchronize()
assert np.array_equal(static.cpu().numpy(), apsp.solve(g, device="cpu"))
print("replayed")
"""


def test_first_solve_inside_a_capture(torch):
    """The pool's threshold is left alone while the solve's stream is captured (torch.cuda.graph:
    an unchecked n = 1024 solve, whose plan allocates from the pool): its calls would invalidate
    the capture. In a child process, so that this allocation is the first it makes."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _FIRST_CALL_CAPTURED_CHILD], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["replayed"], proc.stderr[-3000:]


# The argmin plan on exact integer sums (int32, float32 on its int32 twin, float64 on its own
# kernels) needs neither hop counts nor a backup of its input: its solve's scratch stays far below
# the n x n x 4 bytes that the tagged plan's hop counts (APSP_CUDA_ARGMIN=0) and the float argmin
# plan's backup (fractional weights) take.
@pytest.mark.parametrize("dtype, weights, argmin, needs_hops", [
    (np.int32, "integer", "1", False), (np.float32, "integer", "1", False),
    (np.float64, "integer", "1", False), (np.int32, "integer", "0", True),
    (np.float32, "fractional", "1", True), (np.float64, "fractional", "1", True)],
    ids=["int32-argmin", "float32-twin-argmin", "float64-exact-argmin", "int32-tagged",
         "float32-argmin", "float64-argmin"])
def test_argmin_plan_scratch_without_hop_counts(dtype, weights, argmin, needs_hops, torch, rng,
                                                monkeypatch):
    monkeypatch.setenv("APSP_CUDA_ARGMIN", argmin)
    n = 2000
    g = (random_graph(n, dtype, rng, negative=False) if weights == "integer"
         else fractional_graph(n, rng, dtype))
    torch.cuda.synchronize()
    out = []
    high = scratch_high_water(lambda: out.append(gpu_device_solve(torch, g, pred=True)))
    assert (high >= n * n * 4) == needs_hops, high
    dist, pred = out[0]
    assert_same(dist, cpu_solve(g))
    if weights == "integer":
        assert_tight_predecessors(g, dist, pred)


# float64 integer weights skip the argmin plan's backup and check where the sum of any two path
# lengths is exact: (n - 1) * max w <= 2^52. One past it they keep both (the backup shows in the
# solve's scratch). The heavy edge enters a vertex without edges out, so no path is longer than it
# and both solves are exact.
@pytest.mark.parametrize("past", [False, True], ids=["exact", "past"])
def test_float64_argmin_backup_by_path_length(past, torch, rng, capfd):
    n = 300
    g = random_graph(n, np.float64, rng, negative=False)
    g[6, :] = np.inf
    g[6, 6] = 0
    g[5, 6] = 2.0 ** 52 // (n - 1) + past
    traced = []
    high = scratch_high_water(lambda: traced.append(
        argmin_trace(capfd, lambda: gpu_device_solve(torch, g, pred=True))))
    (dist, pred), lines = traced[0]
    assert lines == [f"apsp cuda: plan argmin, float64, n = {n}"]
    assert (high >= n * n * 4) == past, high
    np.testing.assert_array_equal(dist, cpu_solve(g))
    assert_tight_predecessors(g, dist, pred)


# The int32 plan by max w at n = 300: the argmin plan up to the input checks' bound (299 * w <
# INF // 2); past it, with the checks off (on, it is an OverflowError), the general plan. With the
# argmin plan left out (APSP_CUDA_ARGMIN=0, as past kArgminMaxN), the tagged plan up to the tags'
# bound (2^22 - 2) // 299 and the general plan past it. The heavy edge enters a vertex without
# edges out, so no path is longer than it and every solve is exact.
TAGS_MAX_W = (2**22 - 2) // 299
CHECKS_MAX_W = -(-(apsp.INT32_INF // 2) // 299) - 1


@pytest.mark.parametrize("top, checks, argmin, want_plan", [
    (TAGS_MAX_W, True, "0", "tagged"), (TAGS_MAX_W + 1, True, "0", "pred32"),
    (TAGS_MAX_W + 1, True, "1", "argmin"), (CHECKS_MAX_W, True, "1", "argmin"),
    (CHECKS_MAX_W + 1, False, "1", "pred32")],
    ids=["tags", "past-tags", "argmin", "checks", "past-checks"])
def test_int32_predecessor_plan_by_path_length(top, checks, argmin, want_plan, rng, capfd,
                                               monkeypatch):
    monkeypatch.setenv("APSP_CUDA_ARGMIN", argmin)
    g = random_graph(300, np.int32, rng, negative=False)
    g[6, :] = apsp.INT32_INF
    g[6, 6] = 0
    g[5, 6] = top
    (dist, pred), plan = plan_of(capfd, lambda: gpu_host_solve(g, pred=True, checks=checks))
    assert plan == want_plan
    np.testing.assert_array_equal(dist, cpu_solve(g, checks=checks))
    assert_tight_predecessors(g, dist, pred)


def assert_paths_walk(g: np.ndarray, dist: np.ndarray, pred: np.ndarray) -> None:
    """From every reachable pair (i, j), j != i, the predecessors lead back to i within n steps,
    over edges whose weights sum to dist[i, j] (integer weights: exactly). Holds with zero-weight
    cycles and negative edges, where a tight predecessor alone could close a loop."""
    n = g.shape[0]
    i, at, _ = predecessor_edges(g, dist, pred)
    exact = np.float64 if g.dtype.kind == "f" else np.int64
    want = dist[i, at].astype(exact)
    length = np.zeros(len(i), exact)
    for _ in range(n):
        k = pred[i, at].astype(np.int64)
        assert (k >= 0).all()
        length += g[k, at].astype(exact)
        at = k
        back = at == i
        np.testing.assert_array_equal(length[back], want[back])
        i, at, length, want = i[~back], at[~back], length[~back], want[~back]
        if len(i) == 0:
            return
    pytest.fail(f"{len(i)} chains of predecessors do not reach their source in {n} steps")


def general_graph(n: int, dtype, rng: np.random.Generator, most: int = 60) -> np.ndarray:
    """Integer weights 0 .. most - 1 (a tenth of them 0: zero-weight cycles) plus p[i] - p[j], p in
    0 .. most // 2 (negative edges; cycles keep their weight, so none is negative), 30% of the
    pairs edges, and three vertices no other vertex reaches."""
    w = rng.integers(0, most, size=(n, n)).astype(np.float64)
    w[rng.random((n, n)) < 0.1] = 0  # zero-weight edges, and so zero-weight cycles
    p = rng.integers(0, most // 2 + 1, size=n).astype(np.float64)
    g = (w + p[:, None] - p[None, :]).astype(dtype)
    g[rng.random((n, n)) > 0.3] = no_edge(dtype)
    g[:, -3:] = no_edge(dtype)  # unreachable pairs beside negative weights
    np.fill_diagonal(g, 0)
    return g


# Zero-weight cycles and negative edges (no negative cycle): the 8-byte types take the tagged plan on
# hop-scaled keys (w * n + 1 an edge, tagged.cuh), int32 and float32 the general plan (their keys
# would not fit: APSP_CUDA_TILES=pred32 forces it on the 8-byte types too). The general plan takes one
# 32-wide round at a time below kPredDeepMinN (1536), super-rounds of four with phase 3 at k-depth
# 128 from it (engine.cu). Sizes on both sides, ragged blocks and tiles; a device view with ld > n.
@pytest.mark.parametrize("dtype, plan", [(np.float32, "auto"), (np.int32, "auto"),
                                         (np.float64, "auto"), (np.int64, "auto"),
                                         (np.float64, "pred32"), (np.int64, "pred32")],
                         ids=lambda x: x if isinstance(x, str) else np.dtype(x).name)
@pytest.mark.parametrize("n", [129, 700, 1535, 1536, 2100])
def test_general_predecessor_plan_walks(plan, n, dtype, rng, capfd, torch, monkeypatch):
    scaled = np.dtype(dtype).itemsize == 8
    if plan == "pred32":
        monkeypatch.setenv("APSP_CUDA_TILES", plan)
    g = general_graph(n, dtype, rng)
    (dist, pred), line = trace_of(capfd, lambda: gpu_host_solve(g, pred=True))
    if scaled and plan == "auto":
        assert line.startswith("apsp cuda: plan tagged,") and "with hop counts in its keys" in line
    else:
        assert line.startswith("apsp cuda: plan pred32,"), line
    assert_same(dist, cpu_solve(g))
    assert (dist[:-3, -3:] == no_edge(dtype)).all() and (pred[:-3, -3:] == -9999).all()
    assert_paths_walk(g, dist, pred)
    if n == 2100:
        dist_view, pred_view = gpu_device_solve(torch, g, pad=8, pred=True)
        assert_same(dist_view, dist)
        assert_paths_walk(g, dist_view, pred_view)


# Hop-scaled keys need (n - 1) * (max|w| * n + 1) within a quarter of the tags' range (tagged.cuh):
# at n = 300 a max|w| up to 11 for int32 and float32 (the int32 twin), about 5.0e10 for int64 and
# float64. The largest that fits and one past it, on each side; both walk.
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_hop_scaled_keys_range(dtype, rng, capfd):
    n = 300
    max_length = 2**22 - 2 if np.dtype(dtype).itemsize == 4 else 2**54 - 2  # Tags<I>::max_length
    most = (max_length // 4 // (n - 1) - 1) // n
    for top, fits in ((most, True), (most + 1, False)):
        g = general_graph(n, dtype, rng, most=2)  # weights -1 .. 2
        g[6, :] = no_edge(dtype)  # no cycle through 6, so none through the heavy edge below
        g[6, 6] = 0
        g[5, 6] = -top
        (dist, pred), line = trace_of(capfd, lambda: gpu_host_solve(g, pred=True))
        assert ("with hop counts in its keys" in line) == fits, (top, line)
        assert_same(dist, cpu_solve(g))
        assert_paths_walk(g, dist, pred)


# A negative cycle on hop-scaled keys: NegativeCycleError naming its vertices; without the checks the
# diagonal shows it, predecessors are left unwalked (no chain to follow), and the next call works.
@pytest.mark.parametrize("dtype", [np.float64, np.int64], ids=lambda d: np.dtype(d).name)
def test_hop_scaled_negative_cycle(dtype, rng, capfd):
    g = general_graph(2000, dtype, rng)
    g[10, 11] = -200
    g[11, 10] = 1
    with pytest.raises(apsp.NegativeCycleError) as err:
        gpu_host_solve(g, pred=True)
    assert {10, 11} <= set(err.value.vertices)
    (dist, pred), line = trace_of(capfd, lambda: gpu_host_solve(g, pred=True, checks=False))
    assert "with hop counts in its keys" in line
    assert dist[10, 10] < 0 and dist[11, 11] < 0
    assert ((pred == -9999) | ((pred >= 0) & (pred < 2000))).all()  # no tag left unresolved
    h = general_graph(2000, dtype, rng)
    dist, pred = gpu_host_solve(h, pred=True)
    assert_same(dist, cpu_solve(h))
    assert_paths_walk(h, dist, pred)


# float graphs whose weights are all integers take the argmin plan: float32 on its int32 twin, on
# the same buffer (converted in place and back, engine.cu), float64 on its own kernels (faster than
# the int64 plans). Both exact, so dist equals the CPU engine's bit for bit.
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [129, 300, 1000, 2101])
def test_integer_weighted_float_predecessors(n, dtype, rng, capfd):
    g = random_graph(n, dtype, rng, negative=False)
    (dist, pred), line = trace_of(capfd, lambda: gpu_host_solve(g, pred=True))
    twin = " on integer kernels" if dtype == np.float32 else ""
    assert line == f"apsp cuda: plan argmin, {np.dtype(dtype).name}{twin}, n = {n}"
    want = cpu_solve(g)
    assert dist.dtype == want.dtype
    np.testing.assert_array_equal(dist, want)
    assert_tight_predecessors(g, dist, pred)


# Where the argmin plan is left out (APSP_CUDA_ARGMIN=0; the branch taken where float64's input
# backup does not fit in free memory), float64 integer weights take the int64 tagged plan and
# fractional ones (quarters: every sum exact, so bit for bit too) the general plan.
@pytest.mark.parametrize("weights, want_plan", [("integer", "tagged"), ("fractional", "pred32")])
def test_float64_predecessors_without_the_argmin_plan(weights, want_plan, rng, capfd, monkeypatch):
    monkeypatch.setenv("APSP_CUDA_ARGMIN", "0")
    g = random_graph(300, np.float64, rng, negative=False)
    if weights == "fractional":
        plus_fraction(g)
    (dist, pred), plan = plan_of(capfd, lambda: gpu_host_solve(g, pred=True))
    assert plan == want_plan
    np.testing.assert_array_equal(dist, cpu_solve(g))
    assert_tight_predecessors(g, dist, pred)


# The plan of float32 graphs by their weights: positive integers (unit weights from `unweighted`
# too, whatever the raw weights are) take the argmin plan on the int32 twin, also with path lengths
# past the tags' bound of 2^22 - 2, as long as they are exact in float32 (up to 2^24); past that,
# or with a fractional weight, float32's own argmin plan; a zero or a negative weight the general
# plan.
def plan_choice_graph(case: str, rng, longest: float):
    """A float32 graph (n = 300, positive integer weights) changed for one plan-choice case, and
    the solve's keywords: one fractional, zero or negative weight; an integer weight making
    (n - 1) * max w exceed `longest` (past_exact: 2^24); fractional weights solved as
    unweighted."""
    n = 300
    g = random_graph(n, np.float32, rng, negative=False)
    kw = {}
    if case == "fractional":
        g[5, 7] = 2.5
    elif case == "zero":
        g[5, 7] = 0.0
    elif case == "negative":
        g[5, 7] = -1.0
    elif case == "long_paths":
        g[5, 7] = np.floor(longest / (n - 1)) + 1
    elif case == "past_exact":
        g[5, 7] = np.floor(2.0 ** 24 / (n - 1)) + 1
    elif case == "unweighted":
        plus_fraction(g)
        kw = {"unweighted": True}
    return g, kw


@pytest.mark.parametrize("case", ["fractional", "zero", "negative", "long_paths", "past_exact",
                                  "unweighted"])
def test_float_predecessor_plan_choice(case, rng, capfd):
    n = 300
    g, kw = plan_choice_graph(case, rng, 2.0 ** 22 - 2)
    (dist, pred), line = trace_of(capfd, lambda: gpu_host_solve(g, pred=True, **kw))
    want = {"unweighted": "argmin, float32 on integer kernels",
            "long_paths": "argmin, float32 on integer kernels",
            "past_exact": "argmin, float32", "fractional": "argmin, float32"}.get(
        case, "pred32, float32")
    assert line == f"apsp cuda: plan {want}, n = {n}"
    assert_same(dist, cpu_solve(g, **kw))
    effective = np.where(np.isfinite(g), 1, np.inf).astype(np.float32) if kw else g
    if case in ("unweighted", "long_paths", "past_exact"):
        assert_tight_predecessors(effective, dist, pred)
    else:  # fractional and signed weights: lengths along the paths, up to float rounding
        for i in range(0, n, 41):
            for j in range(n):
                if i != j and np.isfinite(dist[i, j]):
                    path = apsp.path(pred, i, j)
                    assert path[0] == i and path[-1] == j
                    length = sum(float(g[a, b]) for a, b in zip(path, path[1:]))
                    assert length == pytest.approx(float(dist[i, j]), rel=1e-5)


# float32 graphs whose weights are all positive integers (the input scan of a checked solve says
# so) run the round loops of their int32 twin on the same buffer, converted in place and back:
# every sum is exact in both dtypes, so the results equal the CPU engine's bit for bit. Sizes:
# ragged and whole tiles, and both deeper round loops. float32 on super-rounds (n >= 2240) keeps
# its own kernels with the min3 step where the GPU has it (sm_90: faster there, engine.cu), exact
# too. float64 keeps its own kernels (faster than int64's, engine.cu: IntegerTwin), exact as well.
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [257, 300, 1000, 4097])
def test_integer_weighted_floats_choose_their_kernels(n, dtype, rng, capfd, monkeypatch):
    monkeypatch.setenv("APSP_CUDA_NARROW", "0")  # the hub bound would take these weights
    g = random_graph(n, dtype, rng, negative=False)
    got, line = trace_of(capfd, lambda: gpu_host_solve(g))
    name = np.dtype(dtype).name
    if name == "float64":
        assert re.search(rf"plan \w+, float64, n = {n}$", line), line
    elif n >= 2240 and sm90():
        assert line.endswith(f"float32 with the 3-input min, n = {n}"), line
    else:
        assert line.endswith(f"float32 on integer kernels, n = {n}"), line
    want = cpu_solve(g)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# The twin's choice: fractional, zero and negative weights, path lengths past the float32 bound
# (2^24) and a forced plan keep the float kernels; undirected and unweighted graphs (the rules
# run first) and progress reports take the twin. Results equal the CPU engine's either way.
@pytest.mark.parametrize("case", ["fractional", "zero", "negative", "long_paths", "forced",
                                  "undirected", "unweighted", "progress"])
def test_integer_twin_choice(case, rng, capfd, monkeypatch):
    g, kw = plan_choice_graph(case, rng, 2.0 ** 24)
    if case == "forced":
        monkeypatch.setenv("APSP_CUDA_TILES", "k64w")
    elif case == "undirected":
        kw = {"directed": False}
    elif case == "progress":
        reports = []
        kw = {"progress": lambda done, total: reports.append((done, total))}
    got, line = trace_of(capfd, lambda: gpu_host_solve(g, **kw))
    twin = case in ("undirected", "unweighted", "progress")
    assert line.endswith("on integer kernels, n = 300") == twin, line
    np.testing.assert_array_equal(got, cpu_solve(g, **{k: v for k, v in kw.items()
                                                       if k != "progress"}))
    if case == "progress":
        assert reports and reports[-1] == (5, 5)


# One device buffer solved with the twin, then with the float kernels (a fractional weight), then
# with the twin again: the cached CUDA graphs of the two plans (same buffer, n and leading
# dimension) are told apart.
def test_integer_twin_and_float_kernels_share_a_buffer(torch, rng, capfd):
    n = 300
    g = random_graph(n, np.float32, rng, negative=False)
    f = g.copy()
    f[5, 7] = 2.5
    buf = torch.empty((n, n + 3), dtype=torch.float32, device="cuda")
    view = buf[:, :n]
    s = torch.cuda.current_stream()

    def solve(graph):
        view.copy_(torch.from_numpy(graph))
        _core.solve_device(view.data_ptr(), n, buf.stride(0), "float32", 0, 0,
                           torch.cuda.current_device(), s.cuda_stream, True, False, True, True, None)
        s.synchronize()
        return view.cpu().numpy()

    for graph, twin in ((g, True), (f, False), (g, True)):
        got, line = trace_of(capfd, lambda: solve(graph))
        assert line.endswith("on integer kernels, n = 300") == twin, line
        np.testing.assert_array_equal(got, cpu_solve(graph))


# Float32 graphs whose weights are all non-negative (fractional here: positive integer weights
# take the twin) run the round loops with the min3 step: two FADD and one VIMNMX3 per two pivots,
# on the values' bits (Semiring<float>::relax2_nonnegative). The same sums and minima as the FMNMX
# step of a solve without the input scan, so the results are equal. Every round loop; ragged and
# whole tiles; with and without zero weights.
@pytest.mark.parametrize("zeros", [False, True], ids=["positive", "zeros"])
@pytest.mark.parametrize("plan", ["auto", "k64w", "k64d", "k64q", "k64o"])
@pytest.mark.parametrize("n", [65, 300, 1000, 2101])
def test_nonnegative_float32_min3_step(plan, n, zeros, rng, capfd, monkeypatch):
    if plan != "auto":
        monkeypatch.setenv("APSP_CUDA_TILES", plan)
    g = fractional_graph(n, rng)
    if zeros:  # zero-weight edges, and so zero-weight cycles
        g[rng.random((n, n)) < 0.05] = 0
    got, line = trace_of(capfd, lambda: gpu_host_solve(g))
    if plan != "auto" or n > FLOW_MAX_N or (n > 256 and not sm90()):
        assert line.endswith(f"float32 with the 3-input min, n = {n}"), line
    elif n > 256:  # auto: the flow plan (no min3 step); n <= 256: the one-cluster plan
        said = flow_workers_said(n)
        assert line.endswith(f"plan flow, float32 with {said} per block, n = {n}"), line
    np.testing.assert_array_equal(got, gpu_host_solve(g, checks=False))
    assert_same(got, cpu_solve(g))


# With the checks off nothing scans the input, so past the CUDA-graph sizes (n > 4096) the rules
# kernel flags any value below zero and the min3 kernels pick their step on the device: min3 on a
# graph of non-negative weights (equal to the checked solve, whose scan chose min3 on the host),
# FADD + FMNMX where a weight is negative.
@pytest.mark.parametrize("negative", [False, True], ids=["nonnegative", "negative"])
def test_min3_step_chosen_on_the_device(negative, rng, capfd):
    n = 4100
    g = random_graph(n, np.float32, rng, negative=negative)
    plus_fraction(g)  # fractional: not the integer twin
    np.fill_diagonal(g, 0)
    got, lines = trace_lines(capfd, lambda: gpu_host_solve(g, checks=False), "apsp cuda: plan ",
                             "apsp cuda: min3 ")
    assert lines == [f"apsp cuda: plan k64d, float32 with the 3-input min where every value is "
                     f">= 0, n = {n}",
                     "apsp cuda: min3 step " + ("off (a value below zero)" if negative else "on")]
    assert_same(got, cpu_solve(g))
    if not negative:
        np.testing.assert_array_equal(got, gpu_host_solve(g))


# The min3 step needs every weight >= 0: zero weights take it too, a negative weight keeps FMNMX.
@pytest.mark.parametrize("case", ["fractional", "zero", "negative"])
def test_min3_choice(case, rng, capfd, monkeypatch):
    monkeypatch.setenv("APSP_CUDA_TILES", "k64w")  # n = 300: the flow plan, which has no min3 step
    g, kw = plan_choice_graph(case, rng, 2.0 ** 24)
    g = g + np.float32(0.25) * (g > 0)  # fractional weights everywhere: not the twin
    got, line = trace_of(capfd, lambda: gpu_host_solve(g, **kw))
    assert line.endswith("with the 3-input min, n = 300") == (case != "negative"), line
    np.testing.assert_array_equal(got, cpu_solve(g, **kw))


def plus_fraction(g: np.ndarray) -> np.ndarray:
    """g (a float graph) with 0.25 added to every finite entry, in place: fractional weights, so
    no integer twin; returns g."""
    g[np.isfinite(g)] += g.dtype.type(0.25)
    return g


def fractional_graph(n: int, rng, dtype=np.float32) -> np.ndarray:
    """A float graph of positive fractional weights (1 .. 60), with unreachable pairs."""
    return random_graph(n, dtype, rng, negative=False) + rng.random((n, n)).astype(dtype)


FLOATS = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)


def assert_float_paths(g: np.ndarray, dist: np.ndarray, pred: np.ndarray, *,
                       strictly_closer: bool) -> None:
    """pred is -9999 exactly on the diagonal and where unreachable; where `strictly_closer`, every
    predecessor is strictly closer to its source than its vertex (so no chain can loop); the paths
    of rows 0 and n // 2 step along edges and have the lengths dist reports (float rounding)."""
    n = g.shape[0]
    i, j, k = predecessor_edges(g, dist, pred)
    if strictly_closer:
        assert (dist[i, k] < dist[i, j]).all()
    for i in (0, n // 2):
        for j in range(n):
            if i != j and np.isfinite(dist[i, j]):
                path = apsp.path(pred, i, j)
                assert path[0] == i and path[-1] == j and len(path) == len(set(path))
                length = sum(float(g[a, b]) for a, b in zip(path, path[1:]))
                assert length == pytest.approx(float(dist[i, j]), rel=1e-5)


# Positive fractional float weights take the argmin plan (phase 3 keeps the winning group of
# pivots per element and finds the pivot in it after the loop; engine.cu), whose predecessors are
# resolved and checked to be strictly closer. Sizes: one super-round and a bit (129), ragged tiles
# of every kind, and n large enough for interior tiles.
@FLOATS
@pytest.mark.parametrize("n", [129, 200, 257, 300, 1000, 2101])
def test_fractional_float_predecessors(n, dtype, rng, capfd):
    g = fractional_graph(n, rng, dtype)
    (dist, pred), lines = argmin_trace(capfd, lambda: gpu_host_solve(g, pred=True))
    assert lines == [f"apsp cuda: plan argmin, {np.dtype(dtype).name}, n = {n}"]
    assert_same(dist, cpu_solve(g))
    assert_float_paths(g, dist, pred, strictly_closer=True)


# Phase 3 of the argmin plan leaves "as in pivot row k" entries, resolved down their chains after
# the loop (kernels.cuh, resolve_kernel; past 64 steps each step is checked to be strictly
# closer). A path through every vertex in a random order, with fractional weights, gives shortest
# paths of up to n - 1 edges and long chains.
@FLOATS
def test_fractional_float_predecessors_long_chains(dtype, rng, capfd):
    n = 1200
    order = rng.permutation(n)
    g = np.full((n, n), np.inf, dtype)
    np.fill_diagonal(g, 0)
    g[order[:-1], order[1:]] = 0.5 + rng.random(n - 1).astype(dtype)
    (dist, pred), lines = argmin_trace(capfd, lambda: gpu_host_solve(g, pred=True))
    assert lines == [f"apsp cuda: plan argmin, {np.dtype(dtype).name}, n = {n}"]
    assert_same(dist, cpu_solve(g))
    assert_float_paths(g, dist, pred, strictly_closer=True)
    assert (pred[order[0], order[1:]] == order[:-1]).all()  # the one path from the first vertex


# The argmin plan on device views: a leading dimension that is not a multiple of 16 bytes (the
# 1-element tile path) and one that is, with n ragged (the zero-filled 16-byte edge path).
@FLOATS
@pytest.mark.parametrize("n", [300, 2101])
@pytest.mark.parametrize("pad", [13, 16])
def test_fractional_float_predecessors_device_views(torch, n, pad, dtype, rng, capfd):
    g = fractional_graph(n, rng, dtype)
    (dist, pred), lines = argmin_trace(
        capfd, lambda: gpu_device_solve(torch, g, pad=pad - n % 16 if pad == 16 else pad, pred=True))
    assert lines == [f"apsp cuda: plan argmin, {np.dtype(dtype).name}, n = {n}"]
    assert_same(dist, cpu_solve(g))
    assert_float_paths(g, dist, pred, strictly_closer=True)


# The predecessor plans' interior tiles take TMA copies on sm_90 too (the argmin search then reads
# A at its dense pitch); APSP_CUDA_TMA=0 keeps cp.async: both give the same exact answers.
@pytest.mark.parametrize("tma", ["1", "0"])
@pytest.mark.parametrize("dtype, weights, want_plan", [
    (np.int32, "integer", "argmin"), (np.int64, "integer", "argmin"),
    (np.int32, "integer", "tagged"), (np.int64, "integer", "tagged"),
    (np.float32, "integer", "argmin"), (np.float32, "fractional", "argmin"),
    (np.float64, "fractional", "argmin")],
    ids=["int32", "int64", "int32-tagged", "int64-tagged", "float32-twin", "float32", "float64"])
def test_predecessor_interior_tiles_with_and_without_tma(tma, dtype, weights, want_plan, rng, capfd,
                                                         monkeypatch):
    monkeypatch.setenv("APSP_CUDA_TMA", tma)
    if want_plan == "tagged":  # as int32 past kArgminMaxN
        monkeypatch.setenv("APSP_CUDA_ARGMIN", "0")
    n = 1000
    g = (random_graph(n, dtype, rng, negative=False) if weights == "integer"
         else fractional_graph(n, rng, dtype))
    (dist, pred), plan = plan_of(capfd, lambda: gpu_host_solve(g, pred=True))
    assert plan == want_plan
    assert_same(dist, cpu_solve(g))
    if weights == "integer":
        assert_tight_predecessors(g, dist, pred)
    else:
        assert_float_paths(g, dist, pred, strictly_closer=True)


# Where float rounding makes a predecessor as far as its vertex (1e8 + 1.5 == 1e8 in float32,
# 1e17 + 1.5 == 1e17 in float64), the argmin plan's check fails and the engine solves again on the
# general plan, whose (length, hops) step keeps the chains loop-free: the paths still lead back to
# the source.
@pytest.mark.parametrize("dtype, big", [(np.float32, 1e8), (np.float64, 1e17)],
                         ids=["float32", "float64"])
def test_argmin_predecessors_solved_again_where_rounding_ties(dtype, big, rng, capfd):
    n = 200
    g = np.full((n, n), np.inf, dtype)
    np.fill_diagonal(g, 0)
    g[0, 1] = big
    g[np.arange(1, n - 1), np.arange(2, n)] = 1.5
    (dist, pred), lines = argmin_trace(capfd, lambda: gpu_host_solve(g, pred=True))
    assert lines == [f"apsp cuda: plan argmin, {np.dtype(dtype).name}, n = {n}",
                     "apsp cuda: argmin predecessors not strictly closer (float rounding): "
                     "solved again on pred32"]
    assert dist[0, 2] == dist[0, 1]
    assert_same(dist, cpu_solve(g))
    assert_float_paths(g, dist, pred, strictly_closer=False)
    assert apsp.path(pred, 0, n - 1) == list(range(n))


# The plans of positive integer weights on device views (the argmin plan, for float32 on its int32
# twin; the tagged plan with APSP_CUDA_ARGMIN=0): a leading dimension that is not a multiple of 16
# bytes (the 1-element tile path) and one that is, with n ragged (the zero-filled 16-byte edge
# path).
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [300, 2101])
@pytest.mark.parametrize("pad", [13, 16])
@pytest.mark.parametrize("argmin", ["1", "0"])
def test_positive_integer_predecessors_device_views(torch, argmin, n, pad, dtype, rng,
                                                    monkeypatch):
    monkeypatch.setenv("APSP_CUDA_ARGMIN", argmin)
    g = random_graph(n, dtype, rng, negative=False)
    dist, pred = gpu_device_solve(torch, g, pad=pad - n % 16 if pad == 16 else pad, pred=True)
    assert_same(dist, cpu_solve(g))
    assert_tight_predecessors(g, dist, pred)


# The argmin and tagged plans after the rules: predecessors describe the symmetrised or
# unit-weight graph.
@pytest.mark.parametrize("rules", ["undirected", "unweighted"])
@pytest.mark.parametrize("argmin", ["1", "0"])
def test_positive_int32_predecessors_with_rules(argmin, rules, rng, monkeypatch):
    monkeypatch.setenv("APSP_CUDA_ARGMIN", argmin)
    n = 300
    g = random_graph(n, np.int32, rng, negative=False)
    inf = INF[np.dtype(np.int32)]
    if rules == "undirected":
        kw, effective = {"directed": False}, np.minimum(g, g.T)
    else:
        g[rng.random((n, n)) < 0.02] = 0  # raw zeros and negatives are edges of weight 1 here
        g[rng.random((n, n)) < 0.02] = -3
        kw, effective = {"unweighted": True}, np.where(g == inf, inf, 1).astype(np.int32)
    dist, pred = gpu_host_solve(g, pred=True, **kw)
    assert_same(dist, cpu_solve(g, **kw))
    assert_tight_predecessors(effective, dist, pred)


# Graphs outside the tagged plan's range stay exact: zero-weight edges (and zero-weight cycles) on
# the general plan, and weights whose (n - 1) * max w is beyond its 2^22 - 2 bound on the argmin
# plan.
@pytest.mark.parametrize("case", ["zero_weights", "long_paths"])
def test_int32_predecessors_outside_the_tagged_range(case, rng):
    n = 300
    g = random_graph(n, np.int32, rng, negative=False)
    if case == "zero_weights":
        g[rng.random((n, n)) < 0.05] = 0
    else:
        g[g != INF[np.dtype(np.int32)]] *= 1000  # (n - 1) * 59000 > 2^22
    dist, pred = gpu_host_solve(g, pred=True)
    assert_same(dist, cpu_solve(g))
    if case == "long_paths":
        assert_tight_predecessors(g, dist, pred)
    else:  # zero-weight cycles: tight edges may form loops, so check lengths along the paths
        for i in range(0, n, 37):
            for j in range(n):
                if i != j and dist[i, j] != INF[np.dtype(np.int32)]:
                    path = apsp.path(pred, i, j)
                    assert path[0] == i and path[-1] == j
                    assert sum(int(g[a, b]) for a, b in zip(path, path[1:])) == dist[i, j]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_undirected_and_unweighted(dtype, rng):
    g = random_graph(150, dtype, rng, negative=False)
    for kw in ({"directed": False}, {"unweighted": True}, {"directed": False, "unweighted": True}):
        assert_same(gpu_host_solve(g, **kw), cpu_solve(g, **kw))


def test_all_unreachable_and_diagonal(rng):
    for dtype in DTYPES:
        g = np.full((70, 70), no_edge(dtype), dtype=dtype)
        g[3, 3] = 5
        got = gpu_host_solve(g)
        want = np.full((70, 70), no_edge(dtype), dtype=dtype)
        np.fill_diagonal(want, 0)
        assert_same(got, want)


def test_integer_no_edge_values_above_inf_are_clamped():
    g = np.array([[0, 2**31 - 1, 5], [apsp.INT32_INF + 7, 0, 1], [2, 2**30, 0]], np.int32)
    assert_same(gpu_host_solve(g), cpu_solve(g))


# The rules before the rounds (n > 256): in 16-byte groups where the graph is directed, without
# predecessors, and its rows start on 16 bytes (kernels.cuh: rules_rows_kernel, its last group
# element by element where n is ragged), else one element a thread (rules_kernel). Integer
# weights above INF are no edge, a positive diagonal becomes 0, unweighted edges weigh 1.
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("aligned", [True, False], ids=["aligned", "unaligned"])
@pytest.mark.parametrize("n", [301, 1300])
def test_rules_before_the_rounds(torch, n, aligned, dtype, rng):
    g = random_graph(n, dtype, rng)
    if np.dtype(dtype).kind == "i":
        g[rng.integers(0, n, 300), rng.integers(0, n, 300)] = no_edge(dtype) + 7
    np.fill_diagonal(g, rng.integers(1, 9, n))
    lanes = 16 // np.dtype(dtype).itemsize
    pad = -n % lanes + (0 if aligned else 1)  # ld = n + pad: a multiple of 16 bytes or not
    for kw in ({}, {"unweighted": True}):
        assert_same(gpu_device_solve(torch, g, pad=pad, **kw), cpu_solve(g, **kw))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_negative_cycle_raises_like_cpu(dtype, rng):
    g = random_graph(90, dtype, rng, negative=False)
    g[10, 11] = -200
    g[11, 10] = 1
    with pytest.raises(apsp.NegativeCycleError) as gpu_err:
        gpu_host_solve(g)
    with pytest.raises(apsp.NegativeCycleError) as cpu_err:
        cpu_solve(g)
    # Both engines name the cycle's vertices. Beyond those, which diagonals turn negative
    # depends on the order of the updates once a negative cycle exists (and, for integers, on
    # where the sums wrap), so the two engines' lists need not be equal.
    for err in (gpu_err, cpu_err):
        assert {10, 11} <= set(err.value.vertices)


def test_nan_and_overflow_are_refused_before_solving():
    g = np.zeros((40, 40), np.float32)
    g[7, 9] = np.nan
    before = g.copy()
    with pytest.raises(ValueError, match=r"graph\[7, 9\] is NaN"):
        _core.solve_host(g, None, "cuda", 0, True, False, True, True, None)
    np.testing.assert_array_equal(g, before)  # nothing written
    h = np.zeros((40, 40), np.float64)
    h[1, 2] = -np.inf
    with pytest.raises(ValueError, match="-inf"):
        gpu_host_solve(h)
    big = np.full((3000, 3000), apsp.INT32_INF, np.int32)
    big[0, 1] = 400_000
    with pytest.raises(OverflowError, match="int64"):
        gpu_host_solve(big)


# Integer host inputs past n = 4096 (the super-round plans) are solved while they arrive: each
# time more rows are on the GPU, they take the rounds of the pivot blocks before them, then every
# row in takes the rounds of the new blocks (engine.cu: upload_and_enqueue_arriving). The results
# equal the upload-first path's (APSP_CUDA_OVERLAP=0) bit for bit, and the CPU engine's: ragged
# and aligned n; pinned chunks of one super-round's rows, of several, one chunk; super-rounds of 2,
# 4 and 8 blocks (k64d, k64q, k64o); unweighted. APSP_CUDA_STAGING_ROWS sets the rows a pinned
# chunk holds (rounded up to the super-round's).
@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n, plan, rows, unweighted", [
    (4097, "k64q", None, False),   # the staging's own chunks (32 MB)
    (4500, "k64d", 100, False),    # 128 rows a chunk: parts of 1, 1, 2, 4, 8, 16 chunks, the rest
    (4700, "k64q", 600, True),     # 768 rows: three super-rounds a chunk
    (5120, "k64o", 512, False),    # aligned n, super-rounds of 8 blocks, one each
    (4500, "k64q", 10**6, False),  # one chunk: all rows, then every round
])
def test_arriving_input_matches_upload_first(n, plan, rows, unweighted, dtype, rng, monkeypatch,
                                             capfd):
    g = random_graph(n, dtype, rng)
    monkeypatch.setenv("APSP_CUDA_TILES", plan)
    if rows:
        monkeypatch.setenv("APSP_CUDA_STAGING_ROWS", str(rows))
    got, line = trace_of(capfd, lambda: gpu_host_solve(g, unweighted=unweighted))
    depth = {"k64d": 128, "k64q": 256, "k64o": 512}[plan]
    chunk = -(-min(rows or 32 * 2**20 // (n * g.itemsize) // depth * depth, n) // depth) * depth
    done, parts = 0, 0  # a part ends with a pinned chunk, once the rows in have doubled, or at n
    for end in range(chunk, n + chunk, chunk):
        if min(end, n) == n or end >= 2 * done:
            done, parts = min(end, n), parts + 1
    assert line == (f"apsp cuda: plan {plan}, {np.dtype(dtype).name} while it arrives in "
                    f"{parts} parts, n = {n}")
    monkeypatch.setenv("APSP_CUDA_OVERLAP", "0")
    first, line = trace_of(capfd, lambda: gpu_host_solve(g, unweighted=unweighted))
    assert "arrives" not in line
    np.testing.assert_array_equal(got, first)
    assert_same(got, cpu_solve(g, unweighted=unweighted))


# What the arriving path does not take: floats (their sums could round differently in its
# order), undirected graphs (the rules read both triangles), predecessors, and n <= 4096.
@pytest.mark.parametrize("case", ["float32", "undirected", "pred", "n=4096"])
def test_arriving_input_only_where_exact(case, rng, capfd):
    n = 4096 if case == "n=4096" else 4200
    g = random_graph(n, np.float32 if case == "float32" else np.int32, rng,
                     negative=case != "undirected")
    kw = {"directed": False} if case == "undirected" else {"pred": True} if case == "pred" else {}
    _, line = trace_of(capfd, lambda: gpu_host_solve(g, **kw))
    assert "arrives" not in line, line


# Errors on the arriving path, as on the upload-first one: an input beyond the overflow bound
# raises OverflowError (found after the solve here) and is left as it was, a negative cycle raises
# NegativeCycleError naming its vertices; the next call works.
def test_arriving_input_errors(rng, capfd):
    big = random_graph(4200, np.int32, rng, negative=False)
    big[0, 1] = 400_000
    before = big.copy()
    with pytest.raises(OverflowError, match="int64"):
        _core.solve_host(big, None, "cuda", 0, True, False, True, True, None)
    np.testing.assert_array_equal(big, before)
    g = random_graph(4200, np.int64, rng, negative=False)
    g[3000, 3001] = -200
    g[3001, 3000] = 1
    with pytest.raises(apsp.NegativeCycleError) as err:
        trace_of(capfd, lambda: gpu_host_solve(g))
    assert {3000, 3001} <= set(err.value.vertices)
    h = random_graph(4200, np.int64, rng)
    _, line = trace_of(capfd, lambda: gpu_host_solve(h))
    assert "arrives" in line


@pytest.mark.parametrize("n", [300, 2000])
def test_repeated_calls_same_buffer(torch, n, rng):
    buf = torch.empty((n, n), dtype=torch.int32, device="cuda")
    for _ in range(3):  # 300: the flow plan, its counters cleared each call; 2000: a cached CUDA graph
        g = random_graph(n, np.int32, rng)
        buf.copy_(torch.from_numpy(g))
        s = torch.cuda.current_stream()
        _core.solve_device(buf.data_ptr(), n, n, "int32", 0, 0, 0, s.cuda_stream, True, False,
                           True, True, None)
        assert_same(buf.cpu().numpy(), cpu_solve(g))


def test_non_default_stream(torch, rng):
    g = random_graph(500, np.float32, rng)
    s = torch.cuda.Stream()
    assert_same(gpu_device_solve(torch, g, stream=s), cpu_solve(g))


# A high-priority stream: the rounds' CUDA graph is recorded at that priority (engine.cu:
# record_rounds, a graph apart from the default priority's), on 64-wide rounds and on super-rounds
# of two blocks; the result is the default stream's, bit for bit.
@pytest.mark.parametrize("dtype, n", [(np.int32, 1800), (np.int64, 1800)])
def test_high_priority_stream(torch, dtype, n, rng):
    g = random_graph(n, dtype, rng)
    s = torch.cuda.Stream(priority=-1)
    assert s.priority < 0
    np.testing.assert_array_equal(gpu_device_solve(torch, g, stream=s), gpu_device_solve(torch, g))


def test_two_threads_at_once(rng):
    graphs = [random_graph(n, dt, rng) for n, dt in ((900, np.int32), (1200, np.float32),
                                                      (200, np.float64), (2100, np.int64))]
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(idx: int) -> None:
        try:
            for _ in range(2):
                results[idx] = gpu_host_solve(graphs[idx])
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(graphs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, g in enumerate(graphs):
        assert_same(results[i], cpu_solve(g))


# The child of the test below: solves of new sizes (a graph recorded each) while another thread
# loops torch.cuda.synchronize().
_DEVICE_SYNC_CHILD = """
import threading, numpy as np, torch, apsp
from apsp import _core
rng = np.random.default_rng(5)
stop, syncs, failures = threading.Event(), [0], []
def sync_loop():
    while not stop.is_set():
        try:
            torch.cuda.synchronize()
            syncs[0] += 1
        except RuntimeError as e:  # "operation not permitted when stream is capturing"
            failures.append(str(e))
torch.zeros(1, device="cuda")
syncer = threading.Thread(target=sync_loop)
syncer.start()
solved = []
try:
    for n in range(1800, 2400, 8):  # one new graph key each
        g = np.where(rng.random((n, n)) < 0.05, rng.integers(1, 100, (n, n)), apsp.INT32_INF)
        g = g.astype(np.int32)
        work = g.copy()
        _core.solve_host(work, None, "cuda", 0, True, False, False, False, None)
        solved.append((g, work))
finally:
    stop.set()
    syncer.join()
assert not failures, failures[:2]
for g, got in solved:
    np.testing.assert_array_equal(got, apsp.solve(g, device="cpu"))
print("solves", len(solved), "syncs", syncs[0])
"""


def test_another_threads_device_syncs_beside_graph_building(torch):
    """Rounds up to n = 4096 run as a CUDA graph, built the first time a buffer is solved. It used
    to be built by stream capture: a device-wide sync in another thread (torch.cuda.synchronize())
    during a capture failed, and the CUDA 13.0 driver could crash the process in that race
    (GPU_NOTES.md, forty-fourth session). It is now built node by node, with no stream in capture
    mode: every sync succeeds, every solve records its graph and is right. In a child process, so
    that a crash fails this test with its signal."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _DEVICE_SYNC_CHILD], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "APSP_CUDA_TRACE": "1"})
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    solves, syncs = (int(x) for x in proc.stdout.split()[1::2])
    assert solves == len(range(1800, 2400, 8))
    assert proc.stderr.count("apsp cuda: rounds graph recorded") == solves, proc.stderr[-2000:]
    assert syncs >= solves, f"only {syncs} device syncs ran beside {solves} graph recordings"


def test_a_buffer_solved_again_replays_its_graph(torch, rng, capfd):
    """The round loop's graph is recorded the first time a buffer is solved (n = 2111: k64w, a
    size no other test solves in this process), then replayed: solving the same buffer again
    records nothing and gives the same answer."""
    n = 2111
    g = random_graph(n, np.int32, rng, density=0.05)
    t = torch.from_numpy(g).cuda()
    stream = torch.cuda.current_stream()

    def solve():
        _core.solve_device(t.data_ptr(), n, n, "int32", 0, 0, 0, stream.cuda_stream, True, False,
                           False, False, None)
        stream.synchronize()
        return t.cpu().numpy()

    first, recorded = trace_lines(capfd, solve, "apsp cuda: rounds graph recorded")
    again, recorded_again = trace_lines(capfd, solve, "apsp cuda: rounds graph recorded")
    assert len(recorded) == 1 and recorded[0].endswith(f"n = {n}"), recorded
    assert recorded_again == []
    expected = cpu_solve(g)
    assert_same(first, expected)
    assert_same(again, expected)


def test_buffers_past_four_of_one_shape_take_an_older_buffers_graph(torch, rng, capfd):
    """Up to four buffers of one round loop keep a graph each; a fifth takes the least recently
    used one's, its kernel arguments set anew (engine.cu: launch_rounds_graph), the TMA
    descriptors of its buffer included (rows on 16 bytes). Twelve buffers of n = 2116 (a size no
    other test solves) are solved without a sync between them, in turn on two streams, so that
    graphs are updated while their earlier launches are queued or running: every result must be
    its own graph's."""
    n = 2116
    graphs = [random_graph(n, np.int32, rng, density=0.05) for _ in range(12)]
    buffers = [torch.from_numpy(g).cuda() for g in graphs]
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    torch.cuda.synchronize()

    def solve_all():
        for i, t in enumerate(buffers):
            _core.solve_device(t.data_ptr(), n, n, "int32", 0, 0, 0, streams[i % 2].cuda_stream,
                               True, False, False, False, None)
        torch.cuda.synchronize()

    _, lines = trace_lines(capfd, solve_all, "apsp cuda: rounds graph")
    assert [ln.split(",")[0] for ln in lines] == (["apsp cuda: rounds graph recorded"] * 4 +
                                                   ["apsp cuda: rounds graph updated"] * 8), lines
    for g, t in zip(graphs, buffers):
        assert_same(t.cpu().numpy(), cpu_solve(g))


def test_graphs_switched_off_launch_every_kernel_on_its_own(torch, rng, capfd, monkeypatch):
    """APSP_CUDA_GRAPHS=0 (diagnostics): a new buffer's rounds are launched one by one, no graph
    is recorded, and the answer is the same."""
    monkeypatch.setenv("APSP_CUDA_GRAPHS", "0")
    g = random_graph(2113, np.int32, rng, density=0.05)
    got, recorded = trace_lines(capfd, lambda: gpu_host_solve(g), "apsp cuda: rounds graph")
    assert recorded == []
    assert_same(got, cpu_solve(g))


def test_dropped_results_beside_another_threads_graph_building(torch, rng):
    """Each dropped DeviceBuffer used to wait with cudaDeviceSynchronize, which, during another
    thread's round-loop capture, could crash the process in the driver (3 of 3 runs like this one
    on an H100; GPU_NOTES.md, forty-fourth session). Its cudaFree now waits for the device itself,
    and the graphs are no longer captured. One thread solves host graphs of new sizes (a graph
    built each) while another solves and drops interface-only results."""
    small = random_graph(64, np.int32, rng, density=0.3)
    t = torch.from_numpy(small).cuda()
    expected_small = cpu_solve(small)
    stop, dropped, errors = threading.Event(), [0], []

    def drop_loop() -> None:
        try:
            while not stop.is_set():
                r = apsp.solve(CAIOnly(t.__cuda_array_interface__))
                assert_same(torch.from_dlpack(r).cpu().numpy(), expected_small)
                del r
                dropped[0] += 1
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(repr(e))

    other = threading.Thread(target=drop_loop)
    other.start()
    solved = []
    try:
        for n in range(1800, 2400, 8):  # one new graph key each
            g = random_graph(n, np.int32, rng, density=0.05)
            solved.append((g, gpu_host_solve(g, checks=False)))
    finally:
        stop.set()
        other.join()
    assert not errors, errors
    assert dropped[0] >= 10, f"only {dropped[0]} results were dropped beside the graph building"
    for g, got in solved:
        assert_same(got, cpu_solve(g))


def test_an_exception_between_rounds_leaves_no_work_running(torch, rng):
    """A progress callback that raises (as Ctrl-C does) stops the solve, and what was already
    enqueued on the caller's stream has finished before the exception reaches the caller."""
    n = 4096
    g = torch.from_numpy(random_graph(n, np.int32, rng, density=0.05)).cuda()
    s = torch.cuda.Stream()

    class Stop(Exception):
        pass

    def stop_at_round_2(done: int, total: int) -> None:
        if done >= 2:
            raise Stop()

    torch.cuda.synchronize()
    with pytest.raises(Stop):
        _core.solve_device(g.data_ptr(), n, n, "int32", 0, 0, 0, s.cuda_stream, True, False,
                           False, False, stop_at_round_2)
    assert s.query(), "rounds enqueued before the exception were still running after it"
    h = random_graph(100, np.int32, rng)
    assert_same(gpu_host_solve(h), cpu_solve(h))


# A matrix solved in place whose rounds ran on another representation (16-bit lengths: the
# narrow plan; its int32 twin: float32 integer weights on 64-wide rounds) is put back in its own
# dtype when a progress callback raises between rounds: every entry then lies between its
# distance and its edge's weight, as after an interrupted solve of the matrix's own kernels.
@pytest.mark.parametrize("dtype, n, said", [
    (np.float64, 1000, "plan narrow2, float64 on 16-bit lengths"),
    (np.int32, 4200, "plan narrow2, int32 on 16-bit lengths"),
    (np.float32, 2000, "plan k64w, float32 on integer kernels"),
])
def test_an_exception_between_rounds_leaves_the_matrix_in_its_dtype(torch, dtype, n, said, rng,
                                                                       capfd):
    g = narrow_graph(n, dtype, rng, density=0.02)
    g[g == 0] = 1  # positive: the float32 twin's rule
    np.fill_diagonal(g, 0)
    t = torch.from_numpy(g).cuda()
    s = torch.cuda.Stream()
    seen = []

    class Stop(Exception):
        pass

    def stop_at_first_report(done: int, total: int) -> None:
        seen.append((done, total))
        raise Stop()

    def solve():
        with pytest.raises(Stop):
            _core.solve_device(t.data_ptr(), n, n, np.dtype(dtype).name, 0, 0, 0, s.cuda_stream,
                               True, False, True, True, stop_at_first_report)

    _, line = trace_of(capfd, solve)
    assert line == f"apsp cuda: {said}, n = {n}"
    assert seen and seen[0][0] < seen[0][1], seen  # stopped before the last round
    got = t.cpu().numpy()
    want = cpu_solve(g)
    assert np.all((got >= want) & (got <= g))
    assert (got < g).any()  # some rounds ran
    assert_same(cpu_solve(got), want)  # the rest of the solve from there gives the distances


def test_host_arrays_on_two_gpus_in_turn(rng):
    """The pinned staging sets are pooled per device (their events belong to one): host solves
    alternate between cuda:0 and cuda:1 and each is right."""
    need_two_gpus()
    g = random_graph(1500, np.float32, rng)
    want = cpu_solve(g)
    for device in ("cuda:0", "cuda:1", "cuda:0", "cuda:1"):
        assert_same(apsp.solve(g, device=device), want)


def test_two_threads_on_two_gpus_at_once(rng):
    """One thread a GPU, started together: host arrays of the same shapes on both (graphs cached
    per device, staging sets pooled per device) and a fractional float32 graph with predecessors
    (the device mend, its shared-memory setting per device); every result right. (Correctness
    under concurrency: it does not measure whether the two GPUs overlap.)"""
    need_two_gpus()
    graphs = [random_graph(n, dt, rng) for n, dt in ((2000, np.float32), (900, np.int32))]
    fractional = random_graph(700, np.float32, rng, negative=False) / np.float32(7)
    results: dict = {}
    errors: list[BaseException] = []

    def work(device: str) -> None:
        try:
            for _ in range(3):
                for k, g in enumerate(graphs):
                    results[device, k] = apsp.solve(g, device=device)
            results[device, "pred"] = apsp.solve(fractional, device=device,
                                                 return_predecessors=True)
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(d,)) for d in ("cuda:0", "cuda:1")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for device in ("cuda:0", "cuda:1"):
        for k, g in enumerate(graphs):
            assert_same(results[device, k], cpu_solve(g))
        dist, pred = results[device, "pred"]
        assert_same(dist, cpu_solve(fractional))
        assert_chains_lead_back(fractional, dist, pred)


def test_cuda_failure_is_runtime_error_and_next_call_works(rng):
    g = random_graph(50, np.float32, rng)
    bad_device = len(apsp.info()["devices"]) + 3
    with pytest.raises(RuntimeError, match=f"CUDA device {bad_device}.*invalid device ordinal"):
        _core.solve_host(g.copy(), None, "cuda", bad_device, True, False, True, True, None)
    assert_same(gpu_host_solve(g), cpu_solve(g))


def test_too_large_for_the_gpu_is_memory_error(tmp_path):
    free = apsp.info()["devices"][0]["free_memory"]
    assert free is not None, "NVML gave no free memory on this GPU machine"
    n = int(np.sqrt(free / 4 * 1.3)) + 1  # float32 n x n exceeds free memory by 30%
    mm = np.memmap(tmp_path / "huge.bin", dtype=np.float32, mode="w+", shape=(n, n))  # sparse file
    with pytest.raises(MemoryError, match=r"needs \d+ bytes .* only \d+ bytes"):
        _core.solve_host(mm, None, "cuda", 0, True, False, True, True, None)
    del mm
    g = np.zeros((10, 10), np.float32)
    assert_same(gpu_host_solve(g), np.zeros((10, 10), np.float32))


# Rounds are reported as the GPU finishes them (engine.cu, Progress: events a few reports behind
# the queue's head), in order, ending at the total; 64-wide rounds (past the flow plan's one
# launch, n <= FLOW_MAX_N) and super-rounds of 4 blocks, and for an int32 input solved while it
# arrives, rounds counted as tile rows x rounds (engine.cu: upload_and_enqueue_arriving).
@pytest.mark.parametrize("n, dtype", [(2000, np.float32), (4500, np.float32), (4500, np.int32)])
def test_progress_reports_rounds(n, dtype, rng):
    g = random_graph(n, dtype, rng)
    seen: list[tuple[int, int]] = []
    got = gpu_host_solve(g, progress=lambda done, total: seen.append((done, total)))
    assert_same(got, cpu_solve(g))
    assert seen and seen[-1][0] == seen[-1][1] == (n + 63) // 64
    assert len(seen) >= 20
    assert [d for d, _ in seen] == sorted(set(d for d, _ in seen))


# The 64-wide rounds launch their critical chain with programmatic dependent launch and store
# each pivot tile in the next round's launch (4-byte types; engine.cu: tuned_chain), replayed as
# a CUDA graph or enqueued round by round (progress): the same results as without it
# (APSP_CUDA_PDL=0), bit for bit, and as the CPU engine's.
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("how", ["graph", "progress"])
def test_programmatic_launch_matches_plain_launch(how, dtype, rng, monkeypatch):
    monkeypatch.setenv("APSP_CUDA_TILES", "k64w")  # n = 700: 4-byte types would take the flow plan
    g = random_graph(700, dtype, rng)
    if np.dtype(dtype).kind == "f":
        plus_fraction(g)  # fractional: the float kernels, not the integer twin
    kw = {"progress": lambda done, total: None} if how == "progress" else {}
    got = gpu_host_solve(g, **kw)
    monkeypatch.setenv("APSP_CUDA_PDL", "0")
    np.testing.assert_array_equal(got, gpu_host_solve(g, **kw))
    assert_same(got, cpu_solve(g))


# The flow plan's kernel is launched while the rules run and waits for them (engine.cu:
# enqueue_flow): the same results as launched after them (APSP_CUDA_PDL=0), bit for bit.
@pytest.mark.parametrize("dtype", [np.int32, np.float32], ids=lambda d: np.dtype(d).name)
def test_flow_plan_programmatic_launch(dtype, rng, monkeypatch, capfd):
    if not sm90():
        pytest.skip("the flow plan needs compute capability 9.0")
    g = random_graph(700, dtype, rng)
    if np.dtype(dtype).kind == "f":
        plus_fraction(g)
    got, ran = plan_of(capfd, lambda: gpu_host_solve(g))
    assert ran == "flow"
    monkeypatch.setenv("APSP_CUDA_PDL", "0")
    np.testing.assert_array_equal(got, gpu_host_solve(g))
    assert_same(got, cpu_solve(g))


# The one-launch plans report their rounds once, at the end.
@pytest.mark.parametrize("n", [50, 200, 300])
def test_progress_of_one_launch_plans(n, rng):
    g = random_graph(n, np.float32, rng)
    seen: list[tuple[int, int]] = []
    assert_same(gpu_host_solve(g, progress=lambda done, total: seen.append((done, total))),
                cpu_solve(g))
    rounds = 1 if n <= 64 else (n + 31) // 32 if sm90() and n <= 256 else (n + 63) // 64
    assert seen[-1] == (rounds, rounds)


# A progress callback that raises stops the solve with its exception; the rounds already queued
# finish on the GPU and the next call works.
def test_progress_callback_error_propagates(rng):
    g = random_graph(4500, np.int32, rng, negative=False)

    def stop(done, total):
        if done > total // 2:
            raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        gpu_host_solve(g, progress=stop)
    small = random_graph(300, np.int32, rng)
    assert_same(gpu_host_solve(small), cpu_solve(small))


def test_public_api_routes_numpy_to_cuda(rng):
    g = random_graph(200, np.float64, rng)
    out = apsp.solve(g, device="cuda")
    assert_same(out, cpu_solve(g))
    assert not np.shares_memory(out, g)


# The narrow plan (narrow.cuh): graphs of non-negative integer weights, in any dtype, whose every
# path length (n - 1) * max w is at most 32766 run on two 16-bit lengths a word, narrowed in place
# and widened back. Forced from n = 1 (one ragged pivot block) through ragged and odd n (a padded
# last word), super-rounds of 2 and 4 blocks of 128, zero weights, no-edge pairs, bit for bit the
# CPU engine.
NARROW_MAX_LENGTH = 32766
NARROW_MIN_N = {np.dtype(np.int32): 3328, np.dtype(np.float32): 3328,  # engine.cu: narrow_min_n
                np.dtype(np.int64): 384, np.dtype(np.float64): 384}


def narrow_graph(n: int, dtype, rng: np.random.Generator, top: int | None = None,
                 density: float = 0.3) -> np.ndarray:
    """Weights 0..top (by default the largest the plan takes at n), no edge elsewhere."""
    top = min(60, NARROW_MAX_LENGTH // max(n - 1, 1)) if top is None else top
    g = rng.integers(0, top + 1, size=(n, n)).astype(dtype)
    g[rng.random((n, n)) > density] = no_edge(dtype)
    return g


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 2, 127, 128, 129, 257, 1000, 1001, 2111])
@pytest.mark.parametrize("plan", ["narrow2", "narrow4"])
def test_narrow_plan_matches_cpu_engine(plan, n, dtype, rng, monkeypatch, capfd):
    g = narrow_graph(n, dtype, rng, density=0.1 if n > 500 else 0.3)
    monkeypatch.setenv("APSP_CUDA_TILES", plan)
    got, line = trace_of(capfd, lambda: gpu_host_solve(g))
    assert line == f"apsp cuda: plan {plan}, {np.dtype(dtype).name} on 16-bit lengths, n = {n}"
    np.testing.assert_array_equal(got, cpu_solve(g))


# Device arrays in their own layout: rows on 16 bytes (16-byte copies) or only on 4 (one word a
# copy: a 4-byte dtype's pitch of n + 1, or a view one element in); the columns outside the view
# are never touched (gpu_device_solve); the rules of undirected and unweighted graphs before the
# narrowing.
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n, pad, first, kw", [(300, 4, 0, {}), (300, 1, 0, {}), (777, 0, 1, {}),
                                               (1001, 3, 0, {"directed": False}),
                                               (640, 0, 0, {"unweighted": True})])
def test_narrow_plan_device_views(torch, n, pad, first, kw, dtype, rng, monkeypatch):
    g = narrow_graph(n, dtype, rng)
    if kw.get("unweighted"):
        g[g != no_edge(dtype)] += 10**6  # any weight: every edge counts 1
    monkeypatch.setenv("APSP_CUDA_TILES", "narrow2")
    got = gpu_device_solve(torch, g, pad=pad, first=first, **kw)
    np.testing.assert_array_equal(got, cpu_solve(g, **kw))


# The engine's own choice: the narrow plan from NARROW_MIN_N where the weights allow, the plan of
# the matrix's dtype otherwise. The longest paths it takes: a chain of (n - 1) edges summing to
# exactly 32766 (its largest length); one unit more on one edge, a negative one, or (floats) a
# fractional one, and the input's own plan runs.
@pytest.mark.parametrize("dtype, n, w, change, plan", [
    (np.int64, 763, 43, None, "narrow2"),       # 762 x 43 = 32766
    (np.int64, 763, 43, "one more", "k64w"),    # one edge of 44
    (np.int64, 763, 43, "negative", "k64w"),    # a shortcut of -1 (no cycle)
    (np.int64, 383, 85, None, "k64w"),          # below the 8-byte threshold
    (np.float64, 763, 43, None, "narrow2"),
    (np.float64, 763, 43, "one more", "k64w"),
    (np.float64, 763, 43, "fraction", "k64w"),  # one edge of 43.5
    (np.float64, 383, 85, None, "k64w"),
    (np.int32, 3328, 9, None, "narrow2"),
    (np.int32, 3327, 9, None, "k64d"),          # below the 4-byte threshold
    (np.int32, 3328, 10, None, "k64d"),         # 3327 x 10 > 32766
    (np.float32, 3328, 9, None, "narrow2"),
    (np.float32, 3327, 9, None, "k64d"),
    (np.float32, 3328, 9, "negative", "k64d"),
])
def test_narrow_plan_by_weights(dtype, n, w, change, plan, rng, capfd):
    order = rng.permutation(n)
    g, longest = narrow_boundary_chain(order, w, change, dtype)
    np.fill_diagonal(g, 0)
    got, ran = plan_of(capfd, lambda: gpu_host_solve(g))
    assert ran == plan
    want = cpu_solve(g)
    np.testing.assert_array_equal(got, want)
    assert want[order[0], order[-1]] == longest


# The hub bound (contract.hpp; engine.cu: hub_bound_fits), from n = 4096 for 4-byte dtypes and
# 1024 for 8-byte ones: whole weights >= 0 whose bound (n - 1) * max w fails still run narrow where
# the distances through vertex 0 show that every distance fits.
HUB_MIN_N = {4: 4096, 8: 1024}  # engine.cu: hub_min_n


def hub_trace(capfd, solve):
    """(result, the hub line or None, the plan line) of a traced solve."""
    out, lines = trace_lines(capfd, solve, "apsp cuda: hub bound ", "apsp cuda: plan ")
    hub = [ln for ln in lines if ln.startswith("apsp cuda: hub bound ")]
    plan = [ln for ln in lines if ln.startswith("apsp cuda: plan ")]
    assert len(hub) <= 1 and len(plan) == 1, lines
    return out, (hub[0] if hub else None), plan[0]


# At its limit: 16383 + 16383 through the hub fits (every distance 32766, the longest 16-bit
# length), 16383 + 16384 does not, and the narrow plan there would have said "unreachable".
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("in_w, fits", [(16383, True), (16384, False)])
def test_hub_bound_at_its_limit(dtype, in_w, fits, capfd):
    n = HUB_MIN_N[np.dtype(dtype).itemsize]
    g = hub_star(n, 16383, in_w, dtype)
    got, hub, plan = hub_trace(capfd, lambda: gpu_host_solve(g))
    verdict = "fits after 0" if fits else "refused after 1"  # refused once a pass lowered nothing
    assert hub == f"apsp cuda: hub bound {verdict} passes, n = {n}"
    assert ("on 16-bit lengths" in plan) == fits, plan
    assert got[1, 2] == 16383 + in_w
    np.testing.assert_array_equal(got, cpu_solve(g))


# Graphs it takes after passes: random weights (directed, with the unreachable block of
# random_graph, and undirected), host inputs and device views with a leading dimension past n;
# bit for bit the CPU engine's solve in the matrix's own dtype.
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", ["host", "undirected", "device view"])
def test_hub_bound_takes_graphs_whose_bound_fails(dtype, case, rng, capfd, request):
    n = HUB_MIN_N[np.dtype(dtype).itemsize] + 5
    g = random_graph(n, dtype, rng, negative=False)
    kw = {"directed": False} if case == "undirected" else {}
    if case == "device view":
        torch = request.getfixturevalue("torch")
        got, hub, plan = hub_trace(capfd, lambda: gpu_device_solve(torch, g, pad=3, first=1))
    else:
        got, hub, plan = hub_trace(capfd, lambda: gpu_host_solve(g, **kw))
    assert hub is not None and hub.startswith("apsp cuda: hub bound fits after"), hub
    assert plan.endswith(f"on 16-bit lengths, n = {n}"), plan
    np.testing.assert_array_equal(got, cpu_solve(g, **kw))


# What it refuses: a hub that reaches nobody, a vertex that nothing reaches, a ring whose
# distances pass 32766, and n below HUB_MIN_N (not looked for); the dtype's own plan runs.
@pytest.mark.parametrize("dtype", [np.float64, np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", ["lonely hub", "unreached vertex", "long ring", "small n"])
def test_hub_bound_refuses(case, dtype, rng, capfd):
    n = HUB_MIN_N[np.dtype(dtype).itemsize] - (1 if case == "small n" else 0)
    g = random_graph(n, dtype, rng, negative=False)
    if case == "lonely hub":
        g[0, 1:] = g[1:, 0] = no_edge(dtype)
    elif case == "unreached vertex":
        g[:, 5] = no_edge(dtype)
    elif case == "long ring":
        g = long_ring(n, dtype)
    np.fill_diagonal(g, 0)
    got, hub, plan = hub_trace(capfd, lambda: gpu_host_solve(g))
    if case == "small n":
        assert hub is None
    else:
        assert hub is not None and hub.startswith("apsp cuda: hub bound refused after"), hub
    assert "16-bit" not in plan
    np.testing.assert_array_equal(got, cpu_solve(g))


# Integer host inputs past n = 4096 (solved while they arrive) are first sampled (engine.cu:
# sample_fits_narrow, 64 rows, 0 and every n / 64th): where the sample fits 16-bit lengths, the
# input is uploaded whole so that the scan and the hub bound decide (the narrow plan, or the
# dtype's own plan where the hub refuses or a row the sample missed does not fit); where it does
# not fit, or with APSP_CUDA_NARROW=0, it is solved while it arrives. Every result is the CPU
# engine's.
@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case, sample, plan", [
    ("fits", "fits", "16-bit"),
    ("hub refuses", "fits", "wide"),
    ("sampled row too heavy", "does not fit", "arrives"),
    ("sampled row negative", "does not fit", "arrives"),
    ("unsampled row negative", "fits", "wide"),
    ("narrow off", None, "arrives"),
])
def test_integer_host_input_sampled_for_narrow(dtype, case, sample, plan, rng, monkeypatch,
                                               capfd):
    n = 4200
    g = random_graph(n, dtype, rng, negative=False)
    sampled = n // 64  # the second sampled row (1 * n // 64)
    if case == "hub refuses":
        g = long_ring(n, dtype)
    elif case == "sampled row too heavy":
        g[sampled, 7] = 40_000
    elif case in ("sampled row negative", "unsampled row negative"):
        row = sampled if case == "sampled row negative" else sampled + 1
        g[row, 7] = -1  # every other weight is at least 1: no negative cycle
    elif case == "narrow off":
        monkeypatch.setenv("APSP_CUDA_NARROW", "0")
    got, lines = trace_lines(capfd, lambda: gpu_host_solve(g), "apsp cuda: a sample",
                             "apsp cuda: plan ")
    samples = [ln for ln in lines if ln.startswith("apsp cuda: a sample")]
    plans = [ln for ln in lines if ln.startswith("apsp cuda: plan ")]
    assert len(plans) == 1, lines
    if sample is None:
        assert samples == []
    else:
        assert samples == [f"apsp cuda: a sample of 64 rows {sample}"
                           + (": uploaded whole for" if sample == "fits" else "")
                           + f" 16-bit lengths, n = {n}"]
    if plan == "16-bit":
        assert plans[0].endswith(f"on 16-bit lengths, n = {n}"), plans
    elif plan == "arrives":
        assert "while it arrives" in plans[0], plans
    else:
        assert "16-bit" not in plans[0] and "arrives" not in plans[0], plans
    np.testing.assert_array_equal(got, cpu_solve(g))


# Unweighted graphs need no scan to fit (every path is shorter than n): with the checks off too,
# and an integer host input past n = 4096 uploads first instead of solving while it arrives.
# APSP_CUDA_NARROW=0 keeps the plans of the matrix's dtype (the same results).
@pytest.mark.parametrize("checks", [True, False])
def test_narrow_plan_unweighted(checks, rng, monkeypatch, capfd):
    n = 4200
    g = random_graph(n, np.int32, rng, density=0.05)
    got, line = trace_of(capfd, lambda: gpu_host_solve(g, unweighted=True, checks=checks))
    assert line == f"apsp cuda: plan narrow2, int32 on 16-bit lengths, n = {n}"
    monkeypatch.setenv("APSP_CUDA_NARROW", "0")
    wide, line = trace_of(capfd, lambda: gpu_host_solve(g, unweighted=True, checks=checks))
    assert "arrives" in line
    np.testing.assert_array_equal(got, wide)
    assert got.max(where=got != no_edge(np.int32), initial=0) >= 2


# Float graphs too: unweighted ones with the checks on or off, and, with the checks on, any whose
# scan finds whole weights that fit (float32 on its 4-byte threshold, from the int32 twin's plan).
@pytest.mark.parametrize("dtype, n, kw", [
    (np.float64, 1000, {"unweighted": True, "checks": False}),
    (np.float64, 1000, {"unweighted": True}),
    (np.float64, 700, {"directed": False}),
    (np.float32, 3500, {}),
], ids=["float64-unweighted-unchecked", "float64-unweighted", "float64-undirected", "float32"])
def test_narrow_plan_floats(dtype, n, kw, rng, monkeypatch, capfd):
    g = narrow_graph(n, dtype, rng, density=0.05)
    g[g == 0] = 1  # no zero weights: those would join most pairs at length 0 at this density
    if kw.get("unweighted"):
        g[np.isfinite(g)] += 0.5  # any weight: every edge counts 1
    name = np.dtype(dtype).name
    got, line = trace_of(capfd, lambda: gpu_host_solve(g, **kw))
    assert line == f"apsp cuda: plan narrow2, {name} on 16-bit lengths, n = {n}"
    monkeypatch.setenv("APSP_CUDA_NARROW", "0")
    wide, line = trace_of(capfd, lambda: gpu_host_solve(g, **kw))
    assert "16-bit" not in line
    assert got.dtype == wide.dtype
    np.testing.assert_array_equal(got, wide)
    assert got.max(where=np.isfinite(got), initial=0) >= 2


def test_narrow_plan_forced_where_it_does_not_fit(rng, monkeypatch):
    monkeypatch.setenv("APSP_CUDA_TILES", "narrow2")
    g = narrow_graph(500, np.int32, rng, top=70)  # 499 x 70 > 32766
    with pytest.raises(ValueError, match=r"narrow2 needs .*\(n = 500\)"):
        gpu_host_solve(g)
    with pytest.raises(ValueError, match="narrow2 needs"):
        gpu_host_solve(plus_fraction(narrow_graph(500, np.float32, rng)))
    small = narrow_graph(500, np.int32, rng)
    np.testing.assert_array_equal(gpu_host_solve(small), cpu_solve(small))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
def test_float_predecessors_around_zero_weight_cycles_lead_back(dtype, directed) -> None:
    """The CUDA engine's host results, as the CPU engine's: sums that round and zero-weight
    cycles, and every chain leads back to its source (src/cuda/pred_repair.cu mends them on the
    device)."""
    for g in zero_weight_graphs():
        g = g.astype(dtype)
        dist, pred = gpu_host_solve(g, pred=True, directed=directed)
        assert_chains_lead_back(g, dist, pred, directed=directed)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
def test_float_predecessors_of_device_arrays_lead_back(torch, dtype, directed) -> None:
    """The same graphs from torch tensors: their predecessors are mended without leaving the GPU."""
    for g in zero_weight_graphs():
        g = g.astype(dtype)
        dist, pred = apsp.solve(torch.from_numpy(g).cuda(), return_predecessors=True,
                                directed=directed)
        assert dist.is_cuda and pred.is_cuda
        assert_chains_lead_back(g, dist.cpu().numpy(), pred.cpu().numpy(), directed=directed)


def test_zero_weight_graphs_loop_without_the_mend() -> None:
    """The control of the two tests above: with the mend switched off (APSP_PRED_REPAIR=0), some
    of these graphs' chains do loop on the GPU (1 to 5 of 241 per dtype and direction in the
    fifty-second session's probe; these are 4 x 241 solves of up to 700 vertices), so those tests
    can fail."""
    looped = 0
    with env_set(APSP_PRED_REPAIR="0"):
        for dtype in (np.float32, np.float64):
            for directed in (True, False):
                for g in zero_weight_graphs(240, (40, 65, 100, 130, 300, 700)):
                    dist, pred = gpu_host_solve(g.astype(dtype), pred=True, directed=directed)
                    looped += bool(looping_rows(dist, pred))
    assert looped > 0


def device_mend(torch, dist: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """The device mend alone on torch copies of dist and pred, on a side stream; the mended pred."""
    d, p = torch.from_numpy(dist).cuda(), torch.from_numpy(pred).cuda()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        _core.repair_predecessor_loops_device(torch.utils.dlpack.to_dlpack(d),
                                              torch.utils.dlpack.to_dlpack(p), s.cuda_stream)
    s.synchronize()
    return p.cpu().numpy()


# 12288: the most vertices whose chains fit in shared memory on sm_90 (pred_repair.cu:
# kMendSharedVertices); 13000: past them (global scratch).
@pytest.mark.parametrize("n", [4, 12288, 13000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_device_mend_of_a_crafted_loop(torch, n, dtype) -> None:
    """The device mend alone (_core.repair_predecessor_loops_device): a loop with a way back is
    mended through it as the host mend does, and one without is left as it was."""
    g, dist, pred = crafted_pred_loop(dtype, mendable=True, n=n)
    got = device_mend(torch, dist, pred)
    np.testing.assert_array_equal(got[0, :4], [-9999, 2, 3, 0])
    np.testing.assert_array_equal(got[0, 4:], pred[0, 4:])
    np.testing.assert_array_equal(got[1:], pred[1:])
    if n == 4:
        assert_chains_lead_back(g, dist, got)
    g, dist, pred = crafted_pred_loop(dtype, mendable=False, n=n)
    np.testing.assert_array_equal(device_mend(torch, dist, pred), pred)
    with env_set(APSP_PRED_REPAIR="0"):  # switched off, as on the host
        _, dist, pred = crafted_pred_loop(dtype, mendable=True, n=4)
        np.testing.assert_array_equal(device_mend(torch, dist, pred), pred)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
def test_device_mend_of_injected_loops(torch, dtype, directed) -> None:
    """Loops put into rows of real results: the device mend leaves loops in the same rows as the
    host mend (those without a way back), and every chain of the other rows leads back."""
    mended = 0
    for seed in range(12):
        g = rounding_zero_cycles((40, 65, 100, 130)[seed % 4], seed).astype(dtype)
        dist, pred = injected_pred_loops(g, directed=directed, seed=seed)
        before = looping_rows(dist, pred)
        host = pred.copy()
        _core.repair_predecessor_loops(dist, host)
        got = device_mend(torch, dist, pred)
        left = looping_rows(dist, got)
        assert left == looping_rows(dist, host)
        mended += len(before - left)
        assert_chains_lead_back(g, dist, got, directed=directed, skip_sources=left)
    assert mended > 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_device_mend_of_many_loops_in_one_row(torch, dtype) -> None:
    """Thirty loops in one row, from column 520 on: more than one batch of searches (16), chosen
    past the first 512 columns; each is mended through its hub, and nothing else changes."""
    g, dist, pred = crafted_pred_loops(dtype, loops=30, first=520)
    assert looping_rows(dist, pred) == {0}
    got = device_mend(torch, dist, pred)
    assert looping_rows(dist, got) == set()
    assert_chains_lead_back(g, dist, got)
    hubs = 520 + 3 * np.arange(30)
    for h in hubs:  # one of the loop's two vertices (or both, when in one batch) now follows h
        assert got[0, h + 1] == h or got[0, h + 2] == h, (h, got[0, h + 1], got[0, h + 2])
    assert set(np.nonzero(got != pred)[0].tolist()) == {0}
    mends_through_hubs(pred, got, hubs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_device_mend_stops_when_its_searches_run_out(torch, dtype) -> None:
    """The pool of test_mend_stops_when_its_searches_run_out (test_cpu_engine_kernels.py) on the
    device: 128 rows that need 16384 searches against 5120. It is spent exactly; the rows claim it
    in parallel, so which of them end mended may differ from the host's (at most 40 of them),
    every change is a loop's hub, and the chains of the rows without loops lead back."""
    sources, loops = 128, 64
    g, dist, pred = crafted_pred_loops(dtype, loops=loops, first=sources, sources=sources)
    n = g.shape[0]
    got = device_mend(torch, dist, pred)
    pool = _core.MEND_SEARCHES_PER_VERTEX * n
    assert int(np.count_nonzero(got != pred)) == pool
    left = looping_rows(dist, got)
    assert left <= set(range(sources)) and len(left) >= sources - pool // (2 * loops)
    assert_chains_lead_back(g, dist, got, skip_sources=frozenset(left))
    mends_through_hubs(pred, got, sources + 3 * np.arange(loops))


# ---- one host solve split over two GPUs (device=[...]; engine.cu: enqueue_split) ----------------
# Each GPU takes the rounds of a contiguous share of the rows; the owner of a super-round sends
# its pivot rows (and the square of its blocks as each was after its own step) to the other, so
# that every GPU reads what the one-GPU round loop reads: the results are the one-GPU results
# bit for bit, floats included. Forced super-round plans (APSP_CUDA_TILES) split at any n;
# without, from the split's threshold (SPLIT_MIN_N).
TWO = ["cuda:0", "cuda:1"]
SPLIT_MIN_N = 6144  # engine.cu: kSplitMinN
SPLIT_MIN_ROWS = SPLIT_MIN_N // 2  # engine.cu: kSplitMinRows, the fewest rows a GPU of a split gets


class StopSolve(Exception):
    """Raised by stop_at_round_8: a progress callback that stops a solve between rounds."""


def stop_at_round_8(done: int, total: int) -> None:
    if done >= 8:
        raise StopSolve()


def split_lines(capfd, solve):
    """Run `solve` with APSP_CUDA_TRACE=1: (its result, the engine's split lines)."""
    return trace_lines(capfd, solve, "apsp cuda: rounds split")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("tiles, n", [("k64d", 129), ("k64d", 1000), ("k64q", 1500),
                                      ("k64o", 2500)])
def test_split_over_every_gpu_is_the_one_gpu_solve_bit_for_bit(capfd, rng, dtype, tiles, n):
    """Over every GPU of the machine: windows of whole super-rounds, as many as there are GPUs or
    super-rounds (n = 129 on k64d: three blocks, windows of two and one)."""
    gpus = need_two_gpus()
    g = random_graph(n, dtype, rng)  # negative edges, unreachable pairs, ragged last tile
    supers = -(-(-(-n // 64)) // {"k64d": 2, "k64q": 4, "k64o": 8}[tiles])
    parts = min(len(gpus), supers)
    with env_set(APSP_CUDA_TILES=tiles):
        one = apsp.solve(g, device="cuda:0")
        split, lines = split_lines(capfd, lambda: apsp.solve(g, device=gpus))
    assert len(lines) == 1 and f"over {parts} GPUs" in lines[0], lines
    assert f"on cuda:{parts - 1}," in lines[0], lines
    np.testing.assert_array_equal(split, one)
    assert_same(split, cpu_solve(g))


def test_split_with_another_gpu_first(capfd, rng):
    """cuda:1 holds the result and owns the first rows; cuda:0 helps."""
    need_two_gpus()
    for dtype in (np.float32, np.int64):
        g = random_graph(1500, dtype, rng)
        with env_set(APSP_CUDA_TILES="k64q"):
            one = apsp.solve(g, device="cuda:1")
            split, lines = split_lines(capfd, lambda: apsp.solve(g, device=["cuda:1", "cuda:0"]))
        assert len(lines) == 1 and "rows 0..767 on cuda:1" in lines[0], lines
        np.testing.assert_array_equal(split, one)


# Without a forced plan: k64q and k64o as the engine picks them, int32 past the one-GPU
# benchmarks' n, the 8-byte types at the threshold.
@pytest.mark.parametrize("dtype, n", [(np.int32, 12288), (np.float64, SPLIT_MIN_N),
                                      (np.int64, SPLIT_MIN_N)], ids=lambda v: str(v))
def test_split_of_the_engines_own_plans(capfd, rng, dtype, n):
    need_two_gpus()
    g = random_graph(n, dtype, rng)
    one = apsp.solve(g, device="cuda:0")
    split, lines = split_lines(capfd, lambda: apsp.solve(g, device=TWO))
    assert len(lines) == 1 and f"n = {n}" in lines[0], lines
    np.testing.assert_array_equal(split, one)


# float32 with the checks off on a host input (n > 4096): the min3 step chosen on the device by
# the rules' flag, which each helper gets a copy of; with a negative weight the flag says no.
@pytest.mark.parametrize("negative", [False, True], ids=["min3", "negative"])
def test_split_copies_the_device_min3_flag(capfd, rng, negative):
    need_two_gpus()
    g = (np.abs(random_graph(4200, np.float32, rng)) + np.float32(1)) / np.float32(3)  # >= 1/3
    if negative:
        g[10, 20] = -0.25  # no negative cycle: every other edge weighs 1/3 or more
    results = []
    with env_set(APSP_CUDA_TILES="k64q"):
        for helpers in ([], [1]):
            work = g.copy()
            _, lines = trace_lines(capfd, lambda: _core.solve_host(
                work, None, "cuda", 0, True, False, False, False, None, None, helpers),
                "apsp cuda: plan", "apsp cuda: rounds split", "apsp cuda: min3 step")
            assert "with the 3-input min where every value is >= 0" in lines[0], lines
            assert len([ln for ln in lines if "rounds split" in ln]) == (1 if helpers else 0), lines
            assert lines[-1].startswith("apsp cuda: min3 step " + ("off" if negative else "on"))
            results.append(work)
    np.testing.assert_array_equal(results[1], results[0])
    assert_same(results[1], cpu_solve(g))


def test_split_beside_another_thread_on_the_helper_gpu(rng):
    """A split over cuda:0 and cuda:1 while another thread solves host arrays on cuda:1."""
    need_two_gpus()
    big = random_graph(1500, np.float32, rng)
    small = [random_graph(900, np.int32, rng) for _ in range(3)]
    with env_set(APSP_CUDA_TILES="k64q"):
        want_big = apsp.solve(big, device="cuda:0")
        want_small = [apsp.solve(s, device="cuda:1") for s in small]
        got: dict = {}
        errors: list[BaseException] = []

        def split_work() -> None:
            try:
                got["split"] = [apsp.solve(big, device=TWO) for _ in range(3)]
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        def other_work() -> None:
            try:
                got["other"] = [[apsp.solve(s, device="cuda:1") for s in small] for _ in range(3)]
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=split_work), threading.Thread(target=other_work)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    for r in got["split"]:
        np.testing.assert_array_equal(r, want_big)
    for rs in got["other"]:
        for r, w in zip(rs, want_small):
            np.testing.assert_array_equal(r, w)


# float32 of non-negative weights (the min3 step on Hopper), fractional ones with negative
# weights, the undirected and unweighted rules, a scipy.sparse input (scattered on cuda:0).
@pytest.mark.parametrize("case", ["min3", "fractional", "undirected", "unweighted", "sparse"])
def test_split_over_two_gpus_other_inputs(capfd, rng, case):
    need_two_gpus()
    g = random_graph(1100, np.float32, rng)
    if case in ("min3", "undirected", "unweighted"):  # every weight >= 0 (no negative 2-cycle)
        g = np.abs(g)
    elif case == "fractional":  # negative and fractional weights: FADD + FMNMX
        g = g / np.float32(7)
    kw = {"undirected": {"directed": False}, "unweighted": {"unweighted": True}}.get(case, {})
    if case == "sparse":
        sp = pytest.importorskip("scipy.sparse")
        g = sp.csr_matrix(np.where(np.isfinite(g), g, 0))
    with env_set(APSP_CUDA_TILES="k64q"):
        one = apsp.solve(g, device="cuda:0", **kw)
        two, lines = split_lines(capfd, lambda: apsp.solve(g, device=TWO, **kw))
    assert len(lines) == 1, lines
    np.testing.assert_array_equal(two, one)


def test_split_over_two_gpus_from_its_threshold(capfd, rng):
    """Without a forced plan the split starts at SPLIT_MIN_N; below it cuda:0 solves alone."""
    need_two_gpus()
    small = random_graph(SPLIT_MIN_N - 64, np.int32, rng)
    got, lines = split_lines(capfd, lambda: apsp.solve(small, device=TWO))
    assert lines == []
    np.testing.assert_array_equal(got, apsp.solve(small, device="cuda:0"))
    big = random_graph(SPLIT_MIN_N, np.int32, rng)
    got, lines = split_lines(capfd, lambda: apsp.solve(big, device=TWO))
    assert len(lines) == 1 and f"n = {SPLIT_MIN_N}" in lines[0], lines
    np.testing.assert_array_equal(got, apsp.solve(big, device="cuda:0"))


@pytest.mark.parametrize("n", [SPLIT_MIN_N, 3 * SPLIT_MIN_ROWS])
def test_split_takes_as_many_gpus_as_pay(capfd, rng, n):
    """Without a forced plan each GPU gets SPLIT_MIN_ROWS rows at least: of a longer list the
    first ones take the solve (here listed from the last GPU down), the rest start nothing."""
    gpus = need_two_gpus()[::-1]
    used = min(len(gpus), n // SPLIT_MIN_ROWS)
    g = random_graph(n, np.int32, rng)
    got, lines = trace_lines(capfd, lambda: apsp.solve(g, device=gpus), "apsp cuda: rounds split",
                             "apsp cuda: n = ")
    left_out = [f"apsp cuda: n = {n}: split over the first {used} of the {len(gpus)} GPUs listed "
                f"(at least {SPLIT_MIN_ROWS} rows a GPU)"] if used < len(gpus) else []
    assert lines[:-1] == left_out, lines
    assert f"rounds split over {used} GPUs" in lines[-1], lines
    for i, gpu in enumerate(gpus):
        assert (f"on {gpu}," in lines[-1]) == (i < used), lines
    np.testing.assert_array_equal(got, apsp.solve(g, device="cuda:0"))


def test_split_reports_the_negative_cycles_one_gpu_reports(rng):
    need_two_gpus()
    g = random_graph(1000, np.float64, rng)
    g[700, 5], g[5, 700] = -500.0, 1.0  # a negative cycle across the two GPUs' rows
    with env_set(APSP_CUDA_TILES="k64d"):
        with pytest.raises(apsp.NegativeCycleError) as one:
            apsp.solve(g, device="cuda:0")
        with pytest.raises(apsp.NegativeCycleError) as two:
            apsp.solve(g, device=TWO)
    assert list(two.value.vertices) == list(one.value.vertices)
    assert 5 in list(two.value.vertices) and 700 in list(two.value.vertices)


def test_split_with_predecessors_runs_on_the_first_gpu(capfd, rng):
    """Predecessor plans do not split: cuda:1 alone holds the solve when it is named first."""
    need_two_gpus()
    g = random_graph(1000, np.float32, rng)
    (dist, pred), lines = split_lines(
        capfd, lambda: apsp.solve(g, device=["cuda:1", "cuda:0"], return_predecessors=True))
    assert lines == []
    assert_same(dist, cpu_solve(g))
    assert_chains_lead_back(g, dist, pred)


def test_split_progress_reports_every_round(rng):
    need_two_gpus()
    n = 2500
    g = random_graph(n, np.int32, rng)
    seen: list[tuple[int, int]] = []
    work = g.copy()
    with env_set(APSP_CUDA_TILES="k64d"):
        _core.solve_host(work, None, "cuda", 0, True, False, True, True,
                         lambda done, total: seen.append((done, total)), None, [1])
    assert_same(work, cpu_solve(g))
    assert seen and seen[-1][0] == seen[-1][1] == (n + 63) // 64
    assert [d for d, _ in seen] == sorted(set(d for d, _ in seen))


def pool_use_of_two_gpus(torch) -> list[int]:
    """This process's bytes in use in the stream-ordered pools of cuda:0 and cuda:1 once both
    GPUs are idle (tests running beside it on the GPUs do not change it, unlike free memory)."""
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    return [_core.pool_bytes_in_use(d) for d in (0, 1)]


def test_split_callback_error_leaves_both_gpus_usable(torch, rng):
    """A progress callback that raises between rounds stops the split solve; both GPUs' work has
    ended, the helper's memory is back, and the next split solve is right."""
    need_two_gpus()
    g = random_graph(2500, np.int32, rng)
    torch.cuda.init()
    with env_set(APSP_CUDA_TILES="k64d"):
        want = apsp.solve(g, device=TWO)  # anything made once per process
        used_before = pool_use_of_two_gpus(torch)
        with pytest.raises(StopSolve):
            _core.solve_host(g.copy(), None, "cuda", 0, True, False, True, True, stop_at_round_8,
                             None, [1])
        assert pool_use_of_two_gpus(torch) == used_before
        np.testing.assert_array_equal(apsp.solve(g, device=TWO), want)
        np.testing.assert_array_equal(want, apsp.solve(g, device="cuda:0"))


def test_split_helpers_are_checked(rng):
    need_two_gpus()
    g = random_graph(300, np.float32, rng)
    with pytest.raises(ValueError, match="cuda:0 is named twice"):
        _core.solve_host(g.copy(), None, "cuda", 0, True, False, True, True, None, None, [1, 0])
    with pytest.raises(ValueError, match="cuda:99 is not a GPU of this machine"):
        _core.solve_host(g.copy(), None, "cuda", 0, True, False, True, True, None, None, [99])
    with pytest.raises(ValueError, match="names cuda:1 more than once"):
        apsp.solve(g, device=["cuda:1", 1])
    assert_same(apsp.solve(g, device=TWO), cpu_solve(g))


# Device arrays split too: the list starts with the GPU the array lives on, which holds the
# result; the work on the others starts after what the caller's stream held and ends before what
# it gets next, and the host does not wait unless the checks ask it to.
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_split_of_a_torch_view_in_place(capfd, torch, rng, dtype):
    """A view with a leading dimension past n, starting at column 3 of its buffer, solved in
    place over every GPU: bit for bit the one-GPU result, and nothing outside the view written
    (the helpers' rows come back without the gaps between rows)."""
    gpus = need_two_gpus()
    n = 1500
    g = random_graph(n, dtype, rng)
    tdtype = getattr(torch, np.dtype(dtype).name)
    buf = torch.full((n + 1, n + 11), 7, dtype=tdtype, device="cuda:0")
    view = buf[:n, 3:3 + n]
    view.copy_(torch.from_numpy(g))
    with env_set(APSP_CUDA_TILES="k64q"):
        one = apsp.solve(torch.from_numpy(g).cuda(0), device="cuda:0").cpu().numpy()
        out, lines = split_lines(capfd, lambda: apsp.solve(view, device=gpus, overwrite=True))
    assert out is view
    assert len(lines) == 1 and f"over {min(len(gpus), 6)} GPUs" in lines[0], lines
    np.testing.assert_array_equal(view.cpu().numpy(), one)
    assert_same(view.cpu().numpy(), cpu_solve(g))
    outside = buf.cpu().numpy()
    outside[:n, 3:3 + n] = 7
    assert (outside == 7).all()


def test_split_of_a_torch_tensor_follows_the_callers_stream(capfd, torch, rng):
    """A tensor on cuda:1 split with cuda:0, on a side stream of cuda:1 whose pending work writes
    the input; check=False, so the call returns without waiting; the copy the solve works on
    (overwrite=False) and the result are ordered on that stream."""
    need_two_gpus()
    n = 1400
    g = random_graph(n, np.float32, rng)
    with env_set(APSP_CUDA_TILES="k64d"):
        want = apsp.solve(g, device="cuda:1")
        src = torch.from_numpy(g).cuda(1)
        side = torch.cuda.Stream(device="cuda:1")
        with torch.cuda.device(1), torch.cuda.stream(side):
            t = torch.empty_like(src)
            torch.cuda._sleep(200_000_000)  # the write below lands well after the call returns
            t.copy_(src)
            got, lines = split_lines(capfd, lambda: apsp.solve(t, device=[1, 0], check=False))
            assert not side.query()  # the call did not wait for the GPUs
            got_host = got.cpu()  # on the side stream: after the solve
        side.synchronize()
    assert len(lines) == 1 and re.search(r"rows 0\.\.\d+ on cuda:1,", lines[0]), lines
    assert got.device.index == 1
    np.testing.assert_array_equal(got_host.numpy(), want)
    np.testing.assert_array_equal(t.cpu().numpy(), g)  # overwrite=False: the input as it was


def test_split_of_a_cupy_array(capfd, rng):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    need_two_gpus()
    g = random_graph(1300, np.int64, rng)
    with env_set(APSP_CUDA_TILES="k64d"):
        one = apsp.solve(g, device="cuda:0")
        with cupy.cuda.Device(0):
            arr = cupy.asarray(g)
            got, lines = split_lines(capfd, lambda: apsp.solve(arr, device=TWO))
            assert isinstance(got, cupy.ndarray) and got.device.id == 0
            host = cupy.asnumpy(got)
    assert len(lines) == 1, lines
    np.testing.assert_array_equal(host, one)
    np.testing.assert_array_equal(cupy.asnumpy(arr), g)


def test_split_of_a_device_array_with_predecessors_runs_where_it_lives(capfd, torch, rng):
    need_two_gpus()
    g = random_graph(1000, np.float32, rng)
    t = torch.from_numpy(g).cuda(1)
    with env_set(APSP_CUDA_TILES="k64d"):
        (dist, pred), lines = split_lines(
            capfd, lambda: apsp.solve(t, device=[1, 0], return_predecessors=True))
    assert lines == []
    assert dist.device.index == 1 and pred.device.index == 1
    assert_same(dist.cpu().numpy(), cpu_solve(g))
    assert_chains_lead_back(g, dist.cpu().numpy(), pred.cpu().numpy())


def test_split_of_a_device_array_names_its_gpu_first(torch, rng):
    need_two_gpus()
    t = torch.from_numpy(random_graph(100, np.float32, rng)).cuda(0)
    before = t.clone()
    with pytest.raises(ValueError, match=r"graph lives on cuda:0 .* starts with the GPU it lives on"):
        apsp.solve(t, device=["cuda:1", "cuda:0"], overwrite=True)
    with pytest.raises(ValueError, match="cuda:0 is named twice"):
        _core.solve_array(torch.utils.dlpack.to_dlpack(t), None, 0, True, False, True, True, None,
                          [1, 0])
    assert torch.equal(t, before)


def test_split_of_a_device_array_gives_the_helpers_memory_back(capfd, torch, rng):
    """Unchecked solves return at once; the helper's buffers go back on its own streams once the
    result is gathered, with no host wait."""
    need_two_gpus()
    g = random_graph(2500, np.int32, rng)
    torch.cuda.init()
    t = torch.from_numpy(g).cuda(0)
    want = apsp.solve(g, device="cuda:0")
    with env_set(APSP_CUDA_TILES="k64d"):
        apsp.solve(t.clone(), device=TWO, check=False)  # anything made once per process
        used_before = pool_use_of_two_gpus(torch)
        results, lines = split_lines(
            capfd, lambda: [apsp.solve(t, device=TWO, check=False) for _ in range(3)])
        used_after = pool_use_of_two_gpus(torch)
    assert len(lines) == 3, lines
    assert used_after == used_before
    for r in results:
        np.testing.assert_array_equal(r.cpu().numpy(), want)


def test_split_of_a_device_array_stops_on_a_raising_callback(torch, rng):
    """A progress callback that raises mid-split: every GPU's work has ended when the error
    arrives (the tensor no longer changes), and the next split is right. progress=True on a
    device-array split reports and solves right."""
    need_two_gpus()
    g = random_graph(2500, np.int32, rng)
    want = apsp.solve(g, device="cuda:0")
    t = torch.from_numpy(g).cuda(0)

    with env_set(APSP_CUDA_TILES="k64d"):
        with pytest.raises(StopSolve):
            _core.solve_array(torch.utils.dlpack.to_dlpack(t), None,
                              torch.cuda.current_stream(0).cuda_stream, True, False, True, True,
                              stop_at_round_8, [1])
        first = t.cpu()
        time.sleep(0.2)
        assert torch.equal(t.cpu(), first)
        got = apsp.solve(torch.from_numpy(g).cuda(0), device=TWO, progress=True)
    np.testing.assert_array_equal(got.cpu().numpy(), want)


def test_split_of_a_stream_in_capture_runs_on_one_gpu(capfd, torch, rng):
    """Inside torch.cuda.graph the solve is captured on the tensor's GPU alone (the helpers'
    streams would not join the capture); the replay gives the one-GPU result."""
    need_two_gpus()
    n = 6144
    g = random_graph(n, np.int32, rng)
    want = apsp.solve(g, device="cuda:0")
    src = torch.from_numpy(g).cuda(0)
    static = src.clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.device(0):
        _, lines = trace_lines(capfd, lambda: _capture(torch, graph, static), "apsp cuda: ")
        assert any("being captured into a CUDA graph: solved on cuda:0 alone" in ln
                   for ln in lines), lines
        assert not any(ln.startswith("apsp cuda: rounds split") for ln in lines), lines
        static.copy_(src)
        graph.replay()
        torch.cuda.synchronize(0)
    np.testing.assert_array_equal(static.cpu().numpy(), want)


def _capture(torch, graph, static) -> None:
    with torch.cuda.graph(graph):
        apsp.solve(static, device=TWO, overwrite=True, check=False)


def test_cli_splits_over_gpus_written_with_commas(tmp_path, rng):
    import subprocess
    import sys

    need_two_gpus()
    out = subprocess.run([sys.executable, "-m", "apsp", "demo", "--n", "1200", "--device",
                          "cuda:0,cuda:1"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "APSP_CUDA_TILES": "k64d", "APSP_CUDA_TRACE": "1"})
    assert out.returncode == 0, out.stderr
    assert "on the GPUs cuda:0, cuda:1" in out.stdout
    assert "apsp cuda: rounds split over 2 GPUs" in out.stderr
    assert "results agree with scipy" in out.stdout
