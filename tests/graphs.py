"""Shared test helpers: graph builders (random graphs and the families that break tiled code),
SciPy references in apsp's semantics, and result checks. Imported by the test modules; holds no
tests itself. Everything is deterministic given the generator passed in."""
from __future__ import annotations

import contextlib
import os
from typing import Callable, Dict, Iterator, Optional

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph as csgraph

import apsp

DTYPES = (np.float32, np.float64, np.int32, np.int64)
# n that are not multiples of the CPU tile (64) or of the usual GPU tiles, and their neighbours.
TILE_SIZES = (1, 2, 3, 31, 63, 64, 65, 127, 129)


class CAIOnly:
    """A device array known only through __cuda_array_interface__ (like Numba's): apsp's results
    for it are its own DeviceBuffer."""

    def __init__(self, interface: dict) -> None:
        self.__cuda_array_interface__ = interface


@contextlib.contextmanager
def env_set(**values: str) -> Iterator[None]:
    """Environment variables set for the block and restored after it (the engines read their
    switches, such as APSP_CPU_NARROW, at each solve)."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def traced(capfd, solve: Callable, variable: str, *prefixes: str):
    """Runs `solve` with the trace switch `variable` (APSP_CUDA_TRACE, APSP_CPU_TRACE) set: (its
    result, the engine's stderr lines starting with one of `prefixes`)."""
    capfd.readouterr()
    with env_set(**{variable: "1"}):
        out = solve()
    return out, [ln for ln in capfd.readouterr().err.splitlines() if ln.startswith(prefixes)]


def seconds_to_interrupt(call: Callable, after: float) -> float:
    """Seconds `call` took to stop when a Ctrl-C (SIGINT, as `_thread.interrupt_main` sends it)
    arrived `after` seconds in. The signal's handler raises a test-only exception (pytest would
    take a KeyboardInterrupt for the user's) while `call` runs, and does nothing once it has
    returned: a Ctrl-C that `call` ignored, handled as it returns, measures the whole call; one
    handled after it, or never sent, is an AssertionError that says when `call` ended."""
    import _thread
    import signal
    import threading
    import time

    class Interrupted(Exception):
        pass

    running = [True]

    def handler(signum, frame):
        if running[0]:
            raise Interrupted()

    old = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(after, _thread.interrupt_main)
    try:
        timer.start()
        t0 = time.perf_counter()
        try:
            call()
            running[0] = False
        except Interrupted:
            return time.perf_counter() - t0
        raise AssertionError(f"not interrupted: the call ended {time.perf_counter() - t0:.3f} s "
                             f"in, the Ctrl-C was due {after:.3f} s in")
    finally:
        running[0] = False
        timer.cancel()
        signal.signal(signal.SIGINT, old)


def assert_interrupt_stops_early(call: Callable, full: float, what: str) -> None:
    """A Ctrl-C sent a tenth of the way into `call` (which, uninterrupted, took `full` seconds)
    stops it before half of that. Timings swing on a loaded machine (sixteen test workers on one
    GPU), so a miss is measured once more: `call` timed again uninterrupted, under the load as it
    is now, then interrupted again. An engine that ignored the Ctrl-C misses both times."""
    import time

    elapsed = seconds_to_interrupt(call, full / 10)
    if elapsed < full / 2:
        return
    first = f"stopped after {elapsed:.3f} s of a {full:.3f} s {what}"
    t0 = time.perf_counter()
    call()
    full = time.perf_counter() - t0
    elapsed = seconds_to_interrupt(call, full / 10)
    assert elapsed < full / 2, f"{first}, then after {elapsed:.3f} s of a {full:.3f} s {what}"


def no_edge(dtype) -> float:
    """The value that means "no edge" (and "unreachable") for `dtype`."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.inf
    return apsp.INT32_INF if dtype == np.int32 else apsp.INT64_INF


def random_graph(rng: np.random.Generator, n: int, dtype=np.float64, *, density: float = 0.3,
                 low: int = 1, high: int = 100, zero_frac: float = 0.0) -> np.ndarray:
    """Random directed graph: each off-diagonal edge present with probability `density`, integer
    weights in [low, high) (exact in every dtype), a fraction `zero_frac` of edges of weight 0,
    diagonal 0. Non-edges are the dtype's no-edge value."""
    w = rng.integers(low, high, size=(n, n)).astype(np.float64)
    if zero_frac:
        w[rng.random((n, n)) < zero_frac] = 0.0
    g = np.where(rng.random((n, n)) < density, w, np.inf)
    np.fill_diagonal(g, 0.0)
    return to_dtype(g, dtype)


def to_dtype(g: np.ndarray, dtype) -> np.ndarray:
    """A float64 graph with +inf non-edges in `dtype` (integers get the INF constant)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return g.astype(dtype)
    out = np.where(np.isinf(g), 0, g).astype(dtype)
    out[np.isinf(g)] = no_edge(dtype)
    return out


def potential_negative_graph(rng: np.random.Generator, n: int, dtype=np.float64, *,
                             density: float = 0.3) -> np.ndarray:
    """Negative edges but no negative cycle: w(i, j) = c(i, j) + p(i) - p(j) with c >= 0, so
    every cycle has the non-negative weight of its c-cycle (Johnson's reweighting in reverse)."""
    c = rng.integers(0, 20, size=(n, n)).astype(np.float64)
    p = rng.integers(0, 30, size=n).astype(np.float64)
    w = c + p[:, None] - p[None, :]
    g = np.where(rng.random((n, n)) < density, w, np.inf)
    np.fill_diagonal(g, 0.0)
    return to_dtype(g, dtype)


def negative_cycle_graph(rng: np.random.Generator, n: int, dtype=np.float64) -> np.ndarray:
    """A random non-negative graph plus the cycle 0 -> 1 -> ... -> k -> 0 of total weight -1
    (k = min(n, 5) - 1; for n = 1, a self-loop of weight -1)."""
    g = random_graph(rng, n, np.float64, density=0.2).astype(np.float64)
    k = min(n, 5)
    if k == 1:
        g[0, 0] = -1.0
    else:
        for v in range(k - 1):
            g[v, v + 1] = 1.0
        g[k - 1, 0] = -float(k)  # cycle weight (k - 1) - k = -1
    return to_dtype(g, dtype)


def hub_star(n: int, out_w, in_w, dtype=np.float64) -> np.ndarray:
    """Edges 0 -> j of weight out_w and j -> 0 of in_w for every other j, and no other edge:
    every distance between two other vertices is in_w + out_w, through vertex 0. The hub bound
    (contract.hpp) reads out_w + in_w from the hub's own row and column, before any pass: with
    out_w + in_w = 32766 the narrow solves take it whatever n, one unit more and they must not."""
    g = np.full((n, n), no_edge(dtype), dtype)
    g[0, 1:] = out_w
    g[1:, 0] = in_w
    np.fill_diagonal(g, 0)
    return g


def long_ring(n: int, dtype=np.float64, w=99) -> np.ndarray:
    """A ring 0 -> 1 -> ... -> n - 1 -> 0 of weight w and no other edge: d(0, n - 1) = w (n - 1),
    past 32766 from n = 332 (w = 99), so the hub bound refuses it, after every pass lowered a
    bound (all kHubPasses run: its worst case)."""
    g = np.full((n, n), no_edge(dtype), dtype)
    g[np.arange(n), (np.arange(n) + 1) % n] = w
    np.fill_diagonal(g, 0)
    return g


def narrow_boundary_chain(order: np.ndarray, w, change: Optional[str],
                          dtype=np.float64) -> tuple:
    """(g, longest): a chain order[0] -> ... -> order[-1] of n - 1 edges of weight w and no other
    edge, and the length of its longest shortest path. With (n - 1) * w = 32766 it is the longest
    graph the narrow solves take (contract.hpp: narrow_weights_fit); `change` makes it miss their
    rule: "one more" (one edge of w + 1), "negative" (a shortcut of -1 from order[0] to
    order[2]: no cycle), "fraction" (one edge of w + 0.5), or None (unchanged)."""
    n = len(order)
    g = np.full((n, n), no_edge(dtype), dtype)
    g[order[:-1], order[1:]] = w
    longest = (n - 1) * w
    if change == "one more":
        g[order[n // 2], order[n // 2 + 1]] += 1
        longest += 1
    elif change == "negative":
        g[order[0], order[2]] = -1
        longest = (n - 3) * w - 1
    elif change == "fraction":
        g[order[n // 2], order[n // 2 + 1]] += 0.5
        longest += 0.5
    return g, longest


def family(name: str, rng: np.random.Generator, n: int, dtype) -> np.ndarray:
    """One of FAMILIES, as a dense graph in `dtype`."""
    return FAMILIES[name](rng, n, dtype)


def _disconnected(rng, n, dtype):
    g = random_graph(rng, n, np.float64, density=0.5)
    half = n // 2  # two components with no edges between them
    g[:half, half:] = np.inf
    g[half:, :half] = np.inf
    return to_dtype(g, dtype)


def _all_inf_rows(rng, n, dtype):
    g = random_graph(rng, n, np.float64, density=0.4)
    rows = rng.choice(n, size=max(1, n // 5), replace=False)
    g[rows, :] = np.inf  # sinks: no out-edges (and, for a third of them, no diagonal entry either)
    g[:, rows[: max(1, len(rows) // 3)]] = np.inf
    return to_dtype(g, dtype)


def _empty(rng, n, dtype):
    return to_dtype(np.full((n, n), np.inf), dtype)  # not even the diagonal: it is 0 anyway


def _path(rng, n, dtype):
    g = np.full((n, n), np.inf)
    idx = np.arange(n - 1)
    g[idx, idx + 1] = rng.integers(1, 10, size=n - 1)  # a chain: n - 1 hops end to end
    return to_dtype(g, dtype)


FAMILIES: Dict[str, Callable[[np.random.Generator, int, object], np.ndarray]] = {
    "random": lambda rng, n, dtype: random_graph(rng, n, dtype),
    "dense": lambda rng, n, dtype: random_graph(rng, n, dtype, density=1.0),
    "sparse": lambda rng, n, dtype: random_graph(rng, n, dtype, density=2.0 / max(n, 1)),
    "zero_edges": lambda rng, n, dtype: random_graph(rng, n, dtype, density=0.3, zero_frac=0.3),
    "negative_edges": potential_negative_graph,
    "disconnected": _disconnected,
    "all_inf_rows": _all_inf_rows,
    "empty": _empty,
    "chain": _path,
}


def scipy_reference(g: np.ndarray, *, directed: bool = True, unweighted: bool = False,
                    return_predecessors: bool = False):
    """SciPy's answer for apsp's reading of `g` (no-edge values are non-edges, zeros are edges),
    as float64 with +inf where unreachable. SciPy gets a CSR matrix of the edges because for dense
    and masked input its floyd_warshall treats zeros as non-edges. Negative self-loops must be
    handled by the caller (SciPy forces the diagonal to 0)."""
    n = g.shape[0]
    edge = g < no_edge(g.dtype)
    np.fill_diagonal(edge, False)
    rows, cols = np.nonzero(edge)
    sp = scipy.sparse.csr_matrix((g[rows, cols].astype(np.float64), (rows, cols)), shape=(n, n))
    return csgraph.floyd_warshall(sp, directed=directed, unweighted=unweighted,
                                  return_predecessors=return_predecessors)


def as_float(dist: np.ndarray) -> np.ndarray:
    """apsp's result in SciPy's terms: float64, integer INF -> +inf."""
    out = dist.astype(np.float64)
    if dist.dtype.kind == "i":
        out[dist == no_edge(dist.dtype)] = np.inf
    return out


def assert_matches_scipy(dist: np.ndarray, g: np.ndarray, *, directed: bool = True,
                         unweighted: bool = False, ref: Optional[np.ndarray] = None) -> None:
    """dist is exactly SciPy's answer (integer weights keep every sum exact in all four dtypes at
    the sizes tested), unreachable entries are exactly the dtype's no-edge value, the dtype is
    the computed one, and the diagonal is 0."""
    if ref is None:
        ref = scipy_reference(g, directed=directed, unweighted=unweighted)
    np.testing.assert_array_equal(as_float(dist), ref)
    unreachable = np.isinf(ref)
    assert np.all(dist[unreachable] == no_edge(dist.dtype))
    assert np.all(np.diagonal(dist) == 0)


def path_length(g: np.ndarray, vertices: list, *, unweighted: bool = False,
                directed: bool = True) -> float:
    """Weight of the walk `vertices` in g (float64); every step must be an edge."""
    total = 0.0
    for a, b in zip(vertices, vertices[1:]):
        w = g[a, b] if directed else min(g[a, b], g[b, a])
        assert w < no_edge(g.dtype), f"step {a} -> {b} of path {vertices} is not an edge"
        total += 1.0 if unweighted else float(w)
    return total


def rounding_zero_cycles(n: int, seed: int, density: float = 0.05) -> np.ndarray:
    """A float64 graph (inf = no edge) whose path sums round (weights with two decimals) and a
    third of whose edges weigh 0: the blocked rounds can then lower a distance by one unit in the
    last place around a zero-weight cycle, which made predecessor chains loop before the host
    results were mended (src/core/pred_repair.hpp)."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 30, (n, n)) + np.round(rng.random((n, n)), 2)
    c[rng.random((n, n)) < 0.3] = 0.0
    g = np.where(rng.random((n, n)) < density, c, np.inf)
    np.fill_diagonal(g, np.inf)
    return g


def zero_cycle_loop_case() -> np.ndarray:
    """The audit's smallest float64 graph whose chain 52 -> 6 looped (37 <-> 64, both ways 0)
    before the mend: 65 vertices, 9 edges both ways."""
    g = np.full((65, 65), np.inf)
    for a, b, w in [(6, 37, 0.0), (6, 49, 0.11), (21, 40, 0.0), (21, 55, 71.66), (23, 40, 0.84),
                    (23, 49, 607.61), (37, 64, 0.0), (47, 52, 757.37), (47, 55, 0.33)]:
        g[a, b] = g[b, a] = w
    return g


def zero_weight_graphs(count: int = 60, sizes: tuple = (40, 65, 100, 130, 300)) -> list:
    """The audit's graph and `count` graphs whose float sums round around zero-weight cycles."""
    return [zero_cycle_loop_case()] + [rounding_zero_cycles(sizes[seed % len(sizes)], seed)
                                       for seed in range(count)]


def crafted_pred_loop(dtype, mendable: bool, n: int = 4):
    """(graph, dist, pred) of n >= 4 vertices, the CPU engine's results, whose row 0 was then given
    the loop that float rounding can leave around the zero-weight cycle 1 <-> 2: pred[0][1] = 2
    and pred[0][2] = 1. mendable: 0 -> 3 -> 2 (1 + 0) is a shortest path with a direct last edge,
    and a mend makes pred[0][:4] = [-9999, 2, 3, 0]; else the only way in is the edge 0 -> 1 that
    the loop overwrote, and no mend may make a path up. Vertices from 4 on have no edges."""
    g = np.full((4, 4), np.inf)
    g[0, 1], g[1, 2], g[2, 1] = 1.0, 0.0, 0.0
    if mendable:
        g[0, 3], g[3, 2] = 1.0, 0.0
    d4, p4 = apsp.solve(g.astype(dtype), return_predecessors=True, device="cpu")
    big = np.full((n, n), np.inf, dtype=dtype)
    big[:4, :4] = g
    dist = np.full((n, n), np.inf, dtype=dtype)
    np.fill_diagonal(dist, 0)
    dist[:4, :4] = d4
    pred = np.full((n, n), -9999, dtype=np.int32)
    pred[:4, :4] = p4
    pred[0, 1], pred[0, 2] = 2, 1
    return big, dist, pred


def injected_pred_loops(g: np.ndarray, *, directed: bool = True, rows: int = 8, seed: int = 0):
    """(dist, pred) of g (the CPU engine's) with a two-vertex loop put into up to `rows` rows i:
    pred[i][a] = b and pred[i][b] = a for an edge a <-> b of weight 0 both ways, with
    dist[i][a] == dist[i][b] (finite), as float rounding can leave one."""
    dist, pred = apsp.solve(g, return_predecessors=True, directed=directed, device="cpu")
    w = g if directed else np.minimum(g, g.T)
    a_s, b_s = np.nonzero((w == 0) & (w.T == 0) & ~np.eye(len(g), dtype=bool))
    rng = np.random.default_rng(seed)
    done = 0
    for i in rng.permutation(len(g)):
        same = ((dist[i, a_s] == dist[i, b_s]) & np.isfinite(dist[i, a_s]) & (a_s != i)
                & (b_s != i))
        if same.any():
            k = rng.choice(np.flatnonzero(same))
            pred[i, a_s[k]], pred[i, b_s[k]] = b_s[k], a_s[k]
            done += 1
            if done == rows:
                break
    return dist, pred


def looping_rows(dist: np.ndarray, pred: np.ndarray) -> set:
    """The rows i with a reachable j whose predecessor chain does not lead back to i within n
    steps (it loops, or stops short). Pointer jumping: O(n^2 log n)."""
    n = pred.shape[0]
    rows = np.arange(n)[:, None]
    anc = pred.astype(np.int64)
    anc[(anc < 0) | (anc >= n)] = -1
    anc[np.arange(n), np.arange(n)] = np.arange(n)  # a chain that reaches i stays there
    for _ in range(int(np.ceil(np.log2(max(n, 2)))) + 1):  # 2^steps >= n
        anc = np.where(anc >= 0, anc[rows, np.maximum(anc, 0)], -1)
    lost = np.isfinite(as_float(dist)) & ~np.eye(n, dtype=bool) & (anc != rows)
    return set(np.flatnonzero(lost.any(axis=1)).tolist())


def crafted_pred_loops(dtype, loops: int, first: int, sources: int = 1):
    """(graph, dist, pred) whose rows 0 .. sources - 1 (sources <= first) were each given `loops`
    loops, as float rounding can leave them: for t < loops, vertices h, a, b = first + 3t, +1, +2
    with edges s -> h (1) from every source s, h -> a, h -> b and a <-> b (0), the CPU engine's
    results, then pred[s][a] = b and pred[s][b] = a. Each loop is mended through h (a direct
    shortest edge, and h leads back)."""
    assert sources <= first
    n = first + 3 * loops
    g = np.full((n, n), np.inf)
    h = first + 3 * np.arange(loops)
    g[np.ix_(np.arange(sources), h)] = 1.0
    g[h, h + 1] = g[h, h + 2] = g[h + 1, h + 2] = g[h + 2, h + 1] = 0.0
    g = g.astype(dtype)
    dist, pred = apsp.solve(g, return_predecessors=True, device="cpu")
    src = np.arange(sources)[:, None]
    pred[src, h + 1], pred[src, h + 2] = h + 2, h + 1
    return g, dist, pred


def mends_through_hubs(pred: np.ndarray, got: np.ndarray, hubs: np.ndarray) -> None:
    """Asserts that a mend of crafted_pred_loops changed only loop vertices' entries, each to its
    loop's hub h (one of a loop's two vertices, or both when searched together, now follows h)."""
    rows, cols = np.nonzero(got != pred)
    hub_of = {}
    for h in hubs.tolist():
        hub_of[h + 1] = hub_of[h + 2] = h
    assert set(cols.tolist()) <= set(hub_of), "a mend changed an entry outside the loops"
    wrong = [(i, j, got[i, j]) for i, j in zip(rows.tolist(), cols.tolist()) if got[i, j] != hub_of[j]]
    assert not wrong, f"entries mended to something other than their hub: {wrong[:5]}"


def assert_chains_lead_back(g: np.ndarray, dist: np.ndarray, pred: np.ndarray, *,
                            directed: bool = True, rtol: float = 1e-4,
                            skip_sources: frozenset = frozenset()) -> None:
    """Every reachable pair's predecessor chain leads back to its source within n steps along
    edges of g, and the edges' weights add up to dist within `rtol` (float sums round; for exact
    sums see assert_paths_consistent). All pairs but those from `skip_sources`, vectorized."""
    n = g.shape[0]
    w = as_float(g) if directed else np.minimum(as_float(g), as_float(g).T)
    fd = as_float(dist)
    src, dst = np.nonzero(np.isfinite(fd) & ~np.eye(n, dtype=bool))
    if skip_sources:
        keep = ~np.isin(src, list(skip_sources))
        src, dst = src[keep], dst[keep]
    cur, total = dst.copy(), np.zeros(len(src))
    active = np.ones(len(src), dtype=bool)
    for _ in range(n):
        a = np.flatnonzero(active)
        if not a.size:
            break
        p = pred[src[a], cur[a]].astype(np.int64)
        bad = (p < 0) | (p >= n)
        assert not bad.any(), f"chain of {src[a][bad][0]} -> {dst[a][bad][0]} stops at {p[bad][0]}"
        step = w[p, cur[a]]
        bad = ~np.isfinite(step)
        assert not bad.any(), f"chain of {src[a][bad][0]} -> {dst[a][bad][0]} takes a non-edge"
        total[a] += step
        cur[a] = p
        active[a] = p != src[a]
    assert not active.any(), (f"the chain of {src[active][0]} -> {dst[active][0]} does not lead back "
                              "to its source (a loop)")
    np.testing.assert_allclose(total, fd[src, dst], rtol=rtol, atol=1e-6)


def assert_paths_consistent(g: np.ndarray, dist: np.ndarray, pred: np.ndarray, *,
                            unweighted: bool = False, directed: bool = True,
                            max_pairs: int = 20000) -> None:
    """pred follows the contract (int32, -9999 on the diagonal and where unreachable) and every
    path rebuilt from it with apsp.path has exactly the length dist reports (all pairs, or a
    fixed random sample of `max_pairs` of them plus row 0 for large n). Ties may pick any
    shortest path, so the paths themselves are not compared with SciPy's."""
    n = g.shape[0]
    assert pred.dtype == np.int32 and pred.shape == (n, n)
    fdist = as_float(dist)
    unreachable = np.isinf(fdist)
    assert np.all(np.diagonal(pred) == -9999)
    assert np.all(pred[unreachable] == -9999)
    off = ~unreachable & ~np.eye(n, dtype=bool)
    assert np.all((pred[off] >= 0) & (pred[off] < n))
    if n * n <= max_pairs:
        pairs = [(i, j) for i in range(n) for j in range(n)]
    else:
        rng = np.random.default_rng(0)
        pairs = [(0, j) for j in range(n)] + list(zip(rng.integers(0, n, max_pairs).tolist(),
                                                      rng.integers(0, n, max_pairs).tolist()))
    for i, j in pairs:
        p = apsp.path(pred, i, j)
        if i == j:
            assert p == [i]
        elif unreachable[i, j]:
            assert p == []
        else:
            assert p[0] == i and p[-1] == j and len(p) == len(set(p))
            assert path_length(g, p, unweighted=unweighted, directed=directed) == fdist[i, j]
