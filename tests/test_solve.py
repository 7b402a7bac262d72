"""apsp.solve against SciPy on the graph families and sizes that break tiled code, for every
computed dtype, on each engine (the `device` fixture); plus directed=False, unweighted=True and
predecessors (every path rebuilt from pred has exactly the reported length)."""
from __future__ import annotations

import numpy as np
import pytest

import apsp
from graphs import (DTYPES, FAMILIES, TILE_SIZES, assert_matches_scipy, assert_paths_consistent,
                    family, random_graph)


@pytest.mark.parametrize("n", TILE_SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_families_match_scipy(device, name, dtype, n):
    g = family(name, np.random.default_rng(n), n, dtype)
    before = g.copy()
    dist = apsp.solve(g, device=device)
    assert dist.dtype == np.dtype(dtype) and dist.shape == (n, n)
    assert_matches_scipy(dist, g)
    np.testing.assert_array_equal(g, before)  # the input is untouched


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_large_n_not_a_tile_multiple(device, dtype):
    # 1000 = 15 * 64 + 40: many full tiles and a ragged edge, beyond the single-round sizes above.
    g = random_graph(np.random.default_rng(7), 1000, dtype, density=0.01, zero_frac=0.1)
    assert_matches_scipy(apsp.solve(g, device=device), g)


@pytest.mark.parametrize("n", (2, 63, 65, 129))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ("random", "negative_edges", "zero_edges", "disconnected"))
def test_undirected_and_unweighted(device, name, dtype, n):
    g = family(name, np.random.default_rng(n + 1), n, dtype)
    if name == "negative_edges":  # symmetrising makes a negative edge a negative 2-cycle
        g = np.where(g < 0, -g, g)
    assert_matches_scipy(apsp.solve(g, directed=False, device=device), g, directed=False)
    assert_matches_scipy(apsp.solve(g, unweighted=True, device=device), g, unweighted=True)
    assert_matches_scipy(apsp.solve(g, directed=False, unweighted=True, device=device), g,
                         directed=False, unweighted=True)


def test_unweighted_makes_negative_edges_hops(device):
    g = np.array([[0, -5, np.inf], [np.inf, 0, -5], [-5, np.inf, 0]])  # a negative 3-cycle
    with pytest.raises(apsp.NegativeCycleError):
        apsp.solve(g, device=device)
    hops = apsp.solve(g, unweighted=True, device=device)  # as hop counts there is no cycle
    np.testing.assert_array_equal(hops, [[0, 1, 2], [2, 0, 1], [1, 2, 0]])


def test_undirected_takes_the_smaller_direction(device):
    g = np.array([[0, 5, np.inf], [2, 0, 9], [np.inf, 1, 0]], dtype=np.float32)
    np.testing.assert_array_equal(apsp.solve(g, directed=False, device=device),
                                  [[0, 2, 3], [2, 0, 1], [3, 1, 0]])


def _pred_cases():
    for name in sorted(FAMILIES):
        for n in (1, 2, 63, 65, 129):
            yield pytest.param(name, n, id=f"{name}-{n}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name, n", list(_pred_cases()))
def test_predecessors(device, name, dtype, n):
    g = family(name, np.random.default_rng(n + 2), n, dtype)
    dist, pred = apsp.solve(g, return_predecessors=True, device=device)
    assert_matches_scipy(dist, g)
    np.testing.assert_array_equal(dist, apsp.solve(g, device=device))  # same distances either way
    assert_paths_consistent(g, dist, pred)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_predecessors_undirected_unweighted(device, dtype):
    g = random_graph(np.random.default_rng(3), 70, dtype, density=0.1)
    for kw in ({"directed": False}, {"unweighted": True}, {"directed": False, "unweighted": True}):
        dist, pred = apsp.solve(g, return_predecessors=True, device=device, **kw)
        assert_matches_scipy(dist, g, **kw)
        assert_paths_consistent(g, dist, pred, **kw)


def test_predecessors_large_n(device):
    g = random_graph(np.random.default_rng(11), 1000, np.float32, density=0.005)
    dist, pred = apsp.solve(g, return_predecessors=True, device=device)
    assert_matches_scipy(dist, g)
    assert_paths_consistent(g, dist, pred, max_pairs=5000)


def test_ties_any_shortest_path_is_right(device):
    # Two equally short routes 0 -> 1 -> 3 and 0 -> 2 -> 3, and a zero-weight detour 1 -> 2.
    g = np.array([[0, 1, 1, np.inf], [np.inf, 0, 0, 1], [np.inf, np.inf, 0, 1],
                  [np.inf, np.inf, np.inf, 0]])
    dist, pred = apsp.solve(g, return_predecessors=True, device=device)
    assert dist[0, 3] == 2
    assert apsp.path(pred, 0, 3) in ([0, 1, 3], [0, 2, 3], [0, 1, 2, 3])
    assert_paths_consistent(g, dist, pred)


def test_predecessors_zero_weight_cycle(device):
    # Positive weights, 5% zero-weight edges (so zero-weight cycles), n = 100 (two tiles). With a
    # plain "strict improvement" step, a blocked order left about a third of the pred chains
    # looping; the (length, hops) step of semiring.hpp keeps every chain a simple path.
    rng = np.random.default_rng(100)
    c = rng.integers(1, 20, size=(100, 100)).astype(np.float64)
    c[rng.random((100, 100)) < 0.05] = 0.0
    g = np.where(rng.random((100, 100)) < 0.3, c, np.inf)
    np.fill_diagonal(g, 0.0)
    dist, pred = apsp.solve(g, return_predecessors=True, device=device)
    assert_matches_scipy(dist, g)
    assert_paths_consistent(g, dist, pred)
