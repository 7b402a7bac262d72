"""The CPU engine's tiled kernels against SciPy at the sizes that break tiled code.

The engine works in pivot blocks of 64 rows/columns and register tiles of 8 rows x 32 (4-byte)
or 16 (8-byte) columns (64 for the narrow solve's 16-bit lengths), with padded last rounds and
ragged last tiles, on any leading dimension.
These tests call the compiled engine directly (``apsp._core.solve_host``, the engine the public
API uses for ``device="cpu"``) on every dtype, with and without predecessors, on views whose rows
are longer than n, and check every entry. Not here: the public API's intake and error contract
(tests/test_api*.py and friends).

Weights are small integers, so every path length is exact in every dtype and results must match
SciPy (which computes in float64) exactly, not just approximately.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError
from scipy.sparse.csgraph import floyd_warshall

import apsp
from apsp import _core
from graphs import (assert_chains_lead_back, crafted_pred_loop, crafted_pred_loops, env_set,
                    hub_star, injected_pred_loops, long_ring, looping_rows, mends_through_hubs,
                    narrow_boundary_chain, random_graph, rounding_zero_cycles, traced,
                    zero_cycle_loop_case)

DTYPES = ("float32", "float64", "int32", "int64")
INF = {"float32": np.inf, "float64": np.inf, "int32": apsp.INT32_INF, "int64": apsp.INT64_INF}
# 1, 2: smaller than every tile; 63/64/65: around one pivot block; 127/129: around two, with
# a ragged last register tile; 1000: many rounds, a last round of 40 and ragged tiles everywhere.
SIZES = (1, 2, 7, 8, 9, 63, 64, 65, 127, 129)


def random_weights(n: int, seed: int, density: float = 0.1, negative: bool = False) -> np.ndarray:
    """float64 weights in 1..99 (inf = no edge). negative=True shifts them by integer potentials
    h: w(i, j) + h(i) - h(j) keeps every cycle's weight (so no negative cycle) but makes many edges
    negative."""
    rng = np.random.default_rng(seed)
    w = np.where(rng.random((n, n)) < density, rng.integers(1, 100, (n, n)), np.inf)
    if negative:
        h = rng.integers(0, 60, n)
        w = w + h[:, None] - h[None, :]
        w[w == 0] = 1  # SciPy reads a dense 0 as "no edge"; raising a weight adds no cycle
    return w


def as_dtype(w: np.ndarray, dtype: str) -> np.ndarray:
    if dtype.startswith("float"):
        return w.astype(dtype)
    return np.where(np.isinf(w), INF[dtype], w).astype(dtype)


def engine(w: np.ndarray, dtype: str, *, ld_extra: int = 0, pred: bool = False, directed=True,
           unweighted=False):
    """Runs the CPU engine in place on a view with leading dimension n + ld_extra; checks that
    the columns outside the view are untouched and returns (dist as float64 with inf, pred)."""
    n = w.shape[0]
    big = np.full((n, n + ld_extra), 7, dtype=dtype)
    view = big[:, :n]
    view[...] = as_dtype(w, dtype)
    p = np.full((n, n + ld_extra), 5, dtype=np.int32)
    pview = p[:, :n] if pred else None
    _core.solve_host(view, pview, "cpu", 0, directed, unweighted, True, True, None)
    assert np.all(big[:, n:] == 7), "the engine wrote outside the n x n view"
    if pred:
        assert np.all(p[:, n:] == 5), "the engine wrote outside the predecessor view"
    dist = view.astype(np.float64)
    if not dtype.startswith("float"):
        assert np.all((view <= INF[dtype] // 2) | (view == INF[dtype])), "unsnapped integer value"
        dist[view == INF[dtype]] = np.inf
    return dist, (pview.copy() if pred else None)


def check_predecessors(w: np.ndarray, dist: np.ndarray, pred: np.ndarray) -> None:
    """pred[i, j] must close a shortest path: dist[i, j] == dist[i, q] + w[q, j], q = pred[i, j]
    (dist[i, i] counted as 0), and -9999 exactly where j is unreachable or j == i."""
    n = w.shape[0]
    none = np.isinf(dist) | np.eye(n, dtype=bool)
    assert np.all(pred[none] == -9999)
    i, j = np.nonzero(~none)
    q = pred[i, j]
    assert np.all((q >= 0) & (q < n))
    to_q = np.where(q == i, 0.0, dist[i, q])
    np.testing.assert_array_equal(to_q + w[q, j], dist[i, j])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sizes_and_leading_dimensions(n, dtype):
    w = random_weights(n, seed=n, density=0.15, negative=True)
    ref = floyd_warshall(w)
    for ld_extra in (0, 3, 64):
        dist, _ = engine(w, dtype, ld_extra=ld_extra)
        np.testing.assert_array_equal(dist, ref, err_msg=f"n={n} {dtype} ld=n+{ld_extra}")


@pytest.mark.parametrize("n", (1, 2, 63, 65, 129))
@pytest.mark.parametrize("dtype", DTYPES)
def test_predecessors(n, dtype):
    w = random_weights(n, seed=100 + n, density=0.1, negative=True)
    ref = floyd_warshall(w)
    dist, pred = engine(w, dtype, ld_extra=5, pred=True)
    np.testing.assert_array_equal(dist, ref)
    check_predecessors(w, dist, pred)


def test_n1000_every_dtype_with_and_without_predecessors():
    # Many rounds, a last round of 40 pivots, ragged register tiles on every row group; one
    # SciPy call gives the reference for all eight engine runs.
    w = random_weights(1000, seed=7, density=0.01, negative=True)
    w[:, 990:] = np.inf  # the last 10 vertices cannot be reached from anywhere else
    ref = floyd_warshall(w)
    assert np.isinf(ref).any() and (ref < 0).any()  # the graph tests both "no edge" and negatives
    for dtype in DTYPES:
        dist, _ = engine(w, dtype, ld_extra=24)
        np.testing.assert_array_equal(dist, ref, err_msg=dtype)
        dist, pred = engine(w, dtype, pred=True)
        np.testing.assert_array_equal(dist, ref, err_msg=dtype)
        check_predecessors(w, dist, pred)


@pytest.mark.parametrize("dtype", DTYPES)
def test_undirected_and_unweighted(dtype):
    w = random_weights(129, seed=3, density=0.05)
    dist, _ = engine(w, dtype, ld_extra=1, directed=False)
    np.testing.assert_array_equal(dist, floyd_warshall(w, directed=False))
    dist, _ = engine(w, dtype, unweighted=True)
    np.testing.assert_array_equal(dist, floyd_warshall(w, unweighted=True))


@pytest.mark.parametrize("dtype", DTYPES)
def test_negative_cycle_across_blocks(dtype):
    # A cycle 3 -> 70 -> 128 -> 3 of weight -1 spans three pivot blocks and a ragged one.
    n = 129
    w = random_weights(n, seed=11, density=0.05)
    w[3, 70], w[70, 128], w[128, 3] = 5, -10, 4
    with pytest.raises(ScipyNegativeCycleError):
        floyd_warshall(w)
    with pytest.raises(apsp.NegativeCycleError) as info:
        engine(w, dtype)
    assert {3, 70, 128} <= set(info.value.vertices)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_scan_reports_the_first_nan_and_neg_inf(dtype):
    # The input scan runs in parallel over rows; the reported entry must still be the first.
    w = random_weights(200, seed=5).astype(dtype)
    w[150, 3] = np.nan
    w[77, 190] = np.nan
    with pytest.raises(ValueError, match=r"graph\[77, 190\] is NaN"):
        _core.solve_host(w.copy(), None, "cpu", 0, True, False, True, True, None)
    w[77, 190] = -np.inf
    with pytest.raises(ValueError, match=r"graph\[150, 3\] is NaN"):
        _core.solve_host(w.copy(), None, "cpu", 0, True, False, True, True, None)
    w[150, 3] = 1
    with pytest.raises(ValueError, match=r"graph\[77, 190\] is -inf"):
        _core.solve_host(w.copy(), None, "cpu", 0, True, False, True, True, None)


def test_scan_overflow_bound_counts_off_diagonal_and_negative_diagonal():
    # (n-1) * max|w| must stay below INT32_INF // 2; a positive diagonal never counts (it is
    # replaced by 0), a negative one does.
    n = 100
    limit = apsp.INT32_INF // 2
    big = limit // (n - 1) + 1
    g = np.full((n, n), apsp.INT32_INF, dtype=np.int32)
    g[10, 10] = big * 4
    _core.solve_host(g, None, "cpu", 0, True, False, True, True, None)  # diagonal: no error
    g = np.full((n, n), apsp.INT32_INF, dtype=np.int32)
    g[60, 2] = -big
    with pytest.raises(OverflowError, match="int64"):
        _core.solve_host(g, None, "cpu", 0, True, False, True, True, None)
    g = np.full((n, n), apsp.INT32_INF, dtype=np.int32)
    g[60, 60] = -big
    with pytest.raises(OverflowError):
        _core.solve_host(g, None, "cpu", 0, True, False, True, True, None)


# ---- the narrow solve: 16-bit lengths -------------------------------------------------------------
# Graphs of whole weights >= 0 (any dtype) whose every path length (n - 1) * max w is at most 32766
# run, from n = 128, on 16-bit lengths packed at the start of the matrix's own bytes and widened
# back (fw_cpu.cpp: solve_narrow). APSP_CPU_TRACE=1 names the solve that ran; APSP_CPU_NARROW=0
# switches the narrow solve off, which gives the dtype's own solve on the same graph.
NARROW_MAX_LENGTH = 32766
NARROW_MIN_N = 128  # fw_cpu.cpp: kNarrowMinN


def cpu_traced(capfd, solve):
    """Runs `solve` with APSP_CPU_TRACE=1: (its result, the engine's trace lines)."""
    return traced(capfd, solve, "APSP_CPU_TRACE", "apsp cpu: ")


# Sizes: one pivot block, a ragged one, many with a ragged last strip of every register-tile
# width; leading dimensions that keep rows apart. Weights 1..top (SciPy reads a dense 0 as no
# edge), the largest the solve takes at n; then zeros too, against the dtype's own solve.
@pytest.mark.parametrize("n", (128, 129, 191, 255, 300, 1001))
@pytest.mark.parametrize("dtype", DTYPES)
def test_narrow_solve_matches_scipy(n, dtype, capfd):
    top = min(99, NARROW_MAX_LENGTH // (n - 1))
    rng = np.random.default_rng(n)
    w = np.where(rng.random((n, n)) < 0.1, rng.integers(1, top + 1, (n, n)), np.inf)
    ref = floyd_warshall(w)
    for ld_extra in (0, 3):
        (dist, _), lines = cpu_traced(capfd, lambda: engine(w, dtype, ld_extra=ld_extra))
        assert lines == [f"apsp cpu: solve on 16-bit lengths, {dtype}, n = {n}"]
        np.testing.assert_array_equal(dist, ref, err_msg=f"n={n} {dtype} ld=n+{ld_extra}")
    w[rng.random((n, n)) < 0.02] = 0
    dist, _ = engine(w, dtype, ld_extra=1)
    with env_set(APSP_CPU_NARROW="0"):  # the dtype's own solve
        own, _ = engine(w, dtype, ld_extra=1)
    np.testing.assert_array_equal(dist, own)


# The choice by weights: a chain of n - 1 edges summing to exactly 32766 (the longest length it
# takes) runs narrow; one unit more on one edge, a negative edge, a fractional one (floats), or n
# below NARROW_MIN_N, and the dtype's own solve runs. Results equal either way.
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, w, change, narrow", [
    (255, 129, None, True),          # 254 x 129 = 32766
    (255, 129, "one more", False),
    (255, 129, "negative", False),
    (255, 129, "fraction", False),
    (127, 258, None, False),         # 126 x 258 = 32508, below the size threshold
])
def test_narrow_solve_by_weights(dtype, n, w, change, narrow, capfd):
    if change == "fraction" and not dtype.startswith("float"):
        pytest.skip("integer weights have no fractions")
    order = np.random.default_rng(n).permutation(n)
    g, longest = narrow_boundary_chain(order, w, change)
    (dist, _), lines = cpu_traced(capfd, lambda: engine(g, dtype))
    said = " on 16-bit lengths" if narrow else ""
    assert lines == [f"apsp cpu: solve{said}, {dtype}, n = {n}"]
    assert dist[order[0], order[-1]] == longest
    np.testing.assert_array_equal(dist, floyd_warshall(g))


# The hub bound (contract.hpp): from n = 1024, graphs of whole weights >= 0 whose bound
# (n - 1) * max w fails run narrow where the distances through vertex 0 show that every distance
# fits (max d(0, j) + max d(i, 0) <= 32766, found in at most 4 passes over the matrix).
HUB_MIN_N = 1024  # fw_cpu.cpp: kHubMinN


def hub_lines(capfd, solve):
    """(result, the hub line's verdict and passes, the solve line) of a traced CPU solve."""
    out, lines = cpu_traced(capfd, solve)
    hub = [ln.split(" (")[0] for ln in lines if ln.startswith("apsp cpu: hub bound")]
    return out, hub, [ln for ln in lines if ln.startswith("apsp cpu: solve")]


# At its limit: 16383 + 16383 through the hub fits (every distance 32766, the longest 16-bit
# length), 16383 + 16384 does not, and a narrow solve there would have said "unreachable".
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_w, fits", [(16383, True), (16384, False)])
def test_hub_bound_at_its_limit(dtype, in_w, fits, capfd):
    n = HUB_MIN_N
    g = hub_star(n, 16383, in_w)
    (dist, _), hub, solve = hub_lines(capfd, lambda: engine(g, dtype))
    passes = 0 if fits else 1  # refused once a pass lowered nothing
    assert hub == [f"apsp cpu: hub bound {'fits' if fits else 'refused'} after {passes} passes, "
                   f"n = {n}"]
    said = " on 16-bit lengths" if fits else ""
    assert solve == [f"apsp cpu: solve{said}, {dtype}, n = {n}"]
    assert dist[1, 2] == 16383 + in_w
    np.testing.assert_array_equal(dist, floyd_warshall(g))


# Graphs the hub bound takes after passes: random weights 1..99 (one pass), directed and
# undirected, and a sparse graph of a few edges a vertex (more); views with a leading dimension
# past n. Equal to the dtype's own solve and to SciPy.
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["dense", "undirected", "sparse"])
def test_hub_bound_takes_graphs_whose_bound_fails(dtype, case, capfd):
    n = HUB_MIN_N + 3
    rng = np.random.default_rng(7)
    w = random_graph(rng, n, np.float64, density=0.01 if case == "sparse" else 0.3)
    kw = {"directed": False} if case == "undirected" else {}
    (dist, _), hub, solve = hub_lines(capfd, lambda: engine(w, dtype, ld_extra=5, **kw))
    assert len(hub) == 1 and hub[0].startswith("apsp cpu: hub bound fits after"), hub
    assert solve == [f"apsp cpu: solve on 16-bit lengths, {dtype}, n = {n}"]
    if case == "sparse":
        assert not hub[0].startswith("apsp cpu: hub bound fits after 1 ")
    with env_set(APSP_CPU_NARROW="0"):
        own, _ = engine(w, dtype, **kw)
    np.testing.assert_array_equal(dist, own)
    if dtype == "float64":
        np.testing.assert_array_equal(dist, floyd_warshall(w, directed=not kw))


# What it refuses: a hub that reaches nobody (vertex 0 without edges), a vertex that nothing
# reaches, a ring whose distances pass 32766; and below HUB_MIN_N it is not looked for. The
# dtype's own solve runs, and the results are exact.
@pytest.mark.parametrize("case", ["lonely hub", "unreached vertex", "long ring", "small n"])
def test_hub_bound_refuses(case, capfd):
    n = HUB_MIN_N - 1 if case == "small n" else HUB_MIN_N
    rng = np.random.default_rng(8)
    w = random_graph(rng, n, np.float64)
    if case == "lonely hub":
        w[0, 1:] = w[1:, 0] = np.inf
    elif case == "unreached vertex":
        w[:, 5] = np.inf
        w[5, 5] = 0
    elif case == "long ring":
        w = long_ring(n)
    (dist, _), hub, solve = hub_lines(capfd, lambda: engine(w, "int32"))
    if case == "small n":
        assert hub == []
    else:
        assert len(hub) == 1 and hub[0].startswith("apsp cpu: hub bound refused after"), hub
    assert solve == [f"apsp cpu: solve, int32, n = {n}"]
    np.testing.assert_array_equal(dist, floyd_warshall(w))


# Unweighted graphs fit whatever their weights (every path is shorter than n), so they run narrow
# with the checks off too; undirected ones after the rules make them symmetric.
@pytest.mark.parametrize("dtype", DTYPES)
def test_narrow_solve_unweighted_and_undirected(dtype, capfd):
    n = 300
    w = random_weights(n, seed=9, density=0.02)
    w[np.isfinite(w)] += 1000  # too heavy for 16 bits, but unweighted counts every edge as 1
    work = as_dtype(w, dtype)
    _, lines = cpu_traced(capfd, lambda: _core.solve_host(
        work, None, "cpu", 0, True, True, False, False, None))
    assert lines == [f"apsp cpu: solve on 16-bit lengths, {dtype}, n = {n}"]
    np.testing.assert_array_equal(work.astype(np.float64),
                                  as_dtype(floyd_warshall(w, unweighted=True), dtype))
    top = NARROW_MAX_LENGTH // (n - 1)
    w = random_weights(n, seed=10, density=0.02)
    w[np.isfinite(w)] = (w[np.isfinite(w)] - 1) % top + 1
    (dist, _), lines = cpu_traced(capfd, lambda: engine(w, dtype, directed=False))
    assert lines == [f"apsp cpu: solve on 16-bit lengths, {dtype}, n = {n}"]
    np.testing.assert_array_equal(dist, floyd_warshall(w, directed=False))


# A progress callback that raises between rounds (as Ctrl-C does) leaves a matrix solved in place
# holding lengths of its own dtype: each entry between its distance and its edge's weight, never
# the 16-bit rows.
@pytest.mark.parametrize("dtype", DTYPES)
def test_narrow_solve_widens_after_an_exception(dtype, capfd):
    n = 700
    rng = np.random.default_rng(4)
    w = np.where(rng.random((n, n)) < 0.01, rng.integers(1, 40, (n, n)), np.inf)
    np.fill_diagonal(w, 0)
    work = as_dtype(w, dtype)
    seen = []

    class Stop(Exception):
        pass

    def stop_at_round_3(done: int, total: int) -> None:
        seen.append((done, total))
        if done == 3:
            raise Stop()

    with pytest.raises(Stop):
        cpu_traced(capfd, lambda: _core.solve_host(work, None, "cpu", 0, True, False,
                                                            True, True, stop_at_round_3))
    assert seen[-1] == (3, 11)  # 11 rounds of 64: stopped midway
    got = work.astype(np.float64)
    if not dtype.startswith("float"):
        got[work == INF[dtype]] = np.inf
    ref = floyd_warshall(w)
    assert np.all((got >= ref) & (got <= w))
    assert (got < w).any()  # three rounds happened


# Seeds of rounding_zero_cycles whose chains looped before the mend, in some dtype and direction
# (float32 undirected: none of the first 400; the others: 3 to 8 of them each).
LOOPING_SEEDS = (14, 25, 98, 125, 206, 233, 241, 246, 250, 298, 315, 341, 342)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
def test_float_predecessors_around_zero_weight_cycles_lead_back(dtype: str, directed: bool) -> None:
    """Sums that round and zero-weight cycles: every chain leads back to its source. The same
    graphs without the mend (APSP_PRED_REPAIR=0) must loop somewhere, so the test can fail."""
    graphs = [zero_cycle_loop_case()] + [rounding_zero_cycles((40, 65, 100, 130)[seed % 4], seed)
                                         for seed in LOOPING_SEEDS + tuple(range(20))]
    looped = 0
    for g in graphs:
        g = g.astype(dtype)
        n = g.shape[0]
        for mend in ("0", "1"):
            work = g.copy()
            pred = np.empty((n, n), np.int32)
            with env_set(APSP_PRED_REPAIR=mend):
                _core.solve_host(work, pred, "cpu", 0, directed, False, True, True, None)
            if mend == "1":
                assert_chains_lead_back(g, work, pred, directed=directed)
            else:
                try:
                    assert_chains_lead_back(g, work, pred, directed=directed)
                except AssertionError:
                    looped += 1
    assert looped > 0 or (dtype, directed) == ("float32", False), "no graph here needs the mend"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mend_of_a_crafted_loop(dtype: str) -> None:
    """The host mend alone (_core.repair_predecessor_loops): a loop with a way back is mended
    through it, one without is left as it was (no path is made up), and APSP_PRED_REPAIR=0 skips
    it."""
    g, dist, pred = crafted_pred_loop(dtype, mendable=True)
    assert _core.repair_predecessor_loops(dist, pred) == 1
    np.testing.assert_array_equal(pred[0], [-9999, 2, 3, 0])
    assert_chains_lead_back(g, dist, pred)
    _, dist, pred = crafted_pred_loop(dtype, mendable=False)
    before = pred.copy()
    assert _core.repair_predecessor_loops(dist, pred) == 0
    np.testing.assert_array_equal(pred, before)
    _, dist, pred = crafted_pred_loop(dtype, mendable=True)
    before = pred.copy()
    with env_set(APSP_PRED_REPAIR="0"):
        assert _core.repair_predecessor_loops(dist, pred) == 0
    np.testing.assert_array_equal(pred, before)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
def test_mend_of_injected_loops(dtype: str, directed: bool) -> None:
    """Loops put into rows of real results: the rows the mend reports are those whose chains all
    lead back afterwards, and most rows are."""
    injected = mended = 0
    for seed in range(12):
        g = rounding_zero_cycles((40, 65, 100, 130)[seed % 4], seed).astype(dtype)
        dist, pred = injected_pred_loops(g, directed=directed, seed=seed)
        before = looping_rows(dist, pred)
        count = _core.repair_predecessor_loops(dist, pred)
        left = looping_rows(dist, pred)
        assert left <= before and count == len(before - left)
        assert_chains_lead_back(g, dist, pred, directed=directed, skip_sources=left)
        injected += len(before)
        mended += count
    assert mended >= injected // 2 > 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mend_of_many_loops_in_one_row(dtype: str) -> None:
    """Thirty loops in one row: the host mend takes each through its hub and changes only row 0's
    looping entries (the device's twin is in test_gpu_engine.py)."""
    g, dist, pred = crafted_pred_loops(dtype, loops=30, first=520)
    assert looping_rows(dist, pred) == {0}
    got = pred.copy()
    assert _core.repair_predecessor_loops(dist, got) == 1
    assert looping_rows(dist, got) == set()
    assert_chains_lead_back(g, dist, got)
    rows, cols = np.nonzero(got != pred)
    assert set(rows.tolist()) == {0}
    mends_through_hubs(pred, got, 520 + 3 * np.arange(30))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mend_stops_when_its_searches_run_out(dtype) -> None:
    """128 rows of 64 loops each need 128 searches a row here (both vertices of a loop are
    searched, and each search mends its vertex through the hub), 16384 in all, against a pool of
    16 a vertex, 5120 at n = 320. The pool is spent exactly and in row order: the first 40 rows
    are mended, the others keep their loops (apsp.path reports them), and nothing else changes."""
    sources, loops = 128, 64
    g, dist, pred = crafted_pred_loops(dtype, loops=loops, first=sources, sources=sources)
    n = g.shape[0]
    assert looping_rows(dist, pred) == set(range(sources))
    got = pred.copy()
    mended = _core.repair_predecessor_loops(dist, got)
    assert int(np.count_nonzero(got != pred)) == _core.MEND_SEARCHES_PER_VERTEX * n
    assert mended == _core.MEND_SEARCHES_PER_VERTEX * n // (2 * loops)
    left = looping_rows(dist, got)
    assert left == set(range(mended, sources))
    assert_chains_lead_back(g, dist, got, skip_sources=frozenset(left))
    mends_through_hubs(pred, got, sources + 3 * np.arange(loops))
    j = sources + 3 * (loops - 1) + 1  # vertex a of the last loop: mended only in a mended row
    assert apsp.path(got, 0, j) == [0, j - 1, j]
    with pytest.raises(ValueError, match=f"inconsistent at row {sources - 1}"):
        apsp.path(got, sources - 1, j)
