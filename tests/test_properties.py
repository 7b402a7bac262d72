"""Property tests (hypothesis) against SciPy on random graphs: sizes across the tile boundary,
every dtype, negative weights without negative cycles, zero-weight edges, non-edges, and the
options. A graph is drawn as (n, dtype, density, zero fraction, seed) and built with NumPy, so
examples stay cheap at n ~ 100 and shrink towards small n. Every property runs on the CPU
engine and, in the GPU tier, on the CUDA engine. The profile (bounded, derandomised in CI) is
chosen in conftest.py."""
from __future__ import annotations

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph as csgraph
import pytest
from hypothesis import given
from hypothesis import strategies as st

import apsp
from graphs import (DTYPES, as_float, assert_matches_scipy, assert_paths_consistent, no_edge,
                    to_dtype)


@st.composite
def graphs(draw, *, max_n=100, negative=True, zeros=True):
    n = draw(st.integers(0, max_n))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    density = draw(st.floats(0.0, 1.0))
    zero_frac = draw(st.floats(0.0, 0.5)) if zeros else 0.0
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    c = rng.integers(0 if zeros else 1, 30, size=(n, n)).astype(np.float64)
    c[rng.random((n, n)) < zero_frac] = 0.0
    if negative and draw(st.booleans()):
        p = rng.integers(-50, 50, size=n).astype(np.float64)  # w = c + p_i - p_j: no negative cycle
        w = c + p[:, None] - p[None, :]
    else:
        w = c
    g = np.where(rng.random((n, n)) < density, w, np.inf)
    g[np.eye(n, dtype=bool) & (rng.random((n, n)) < 0.5)] = np.inf  # diagonal: 0, positive or none
    return to_dtype(g, dtype)


# Not the `device` fixture: hypothesis reruns a test's body, not its function-scoped fixtures.
ENGINES = pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])


@ENGINES
@given(graphs())
def test_solve_matches_scipy(device, g):
    before = g.copy()
    dist = apsp.solve(g, device=device)
    assert_matches_scipy(dist, g)
    np.testing.assert_array_equal(g, before)


@ENGINES
@given(graphs(negative=False), st.booleans(), st.booleans())
def test_options_match_scipy(device, g, directed, unweighted):
    dist = apsp.solve(g, directed=directed, unweighted=unweighted, device=device)
    assert_matches_scipy(dist, g, directed=directed, unweighted=unweighted)


@ENGINES
@given(graphs(max_n=64))
def test_predecessor_paths_have_the_reported_length(device, g):
    # Within one tile (n <= 64) every graph, zero-weight cycles included.
    dist, pred = apsp.solve(g, return_predecessors=True, device=device)
    assert_matches_scipy(dist, g)
    assert_paths_consistent(g, dist, pred)


@ENGINES
@given(graphs())
def test_predecessor_paths_across_tiles(device, g):
    # Across tiles, zero-weight cycles included (see test_predecessors_zero_weight_cycle).
    dist, pred = apsp.solve(g, return_predecessors=True, device=device)
    assert_paths_consistent(g, dist, pred, max_pairs=3000)


@ENGINES
@given(graphs())
def test_result_is_closed(device, g):
    # Shortest-path distances are their own shortest paths: solving them again changes nothing.
    dist = apsp.solve(g, device=device)
    np.testing.assert_array_equal(apsp.solve(dist, device=device), dist)
    f = as_float(dist)
    if f.shape[0]:  # the triangle inequality: f[i, k] + f[k, j] >= f[i, j] for every k
        assert np.all((f[:, :, None] + f[None, :, :]).min(axis=1) >= f)


@ENGINES
@given(graphs(negative=False), st.integers(0, 2**32 - 1))
def test_sparse_with_duplicates_equals_dense_minimum(device, g, seed):
    n = g.shape[0]
    rows, cols = np.nonzero(g < no_edge(g.dtype))
    data = g[rows, cols]
    rng = np.random.default_rng(seed)
    extra = rng.integers(0, max(len(rows), 1), size=len(rows) // 2) if len(rows) else np.array([], int)
    rows2 = np.concatenate([rows, rows[extra]])
    cols2 = np.concatenate([cols, cols[extra]])
    # duplicates larger or smaller than the first entry (still >= 0), in a shuffled order
    dup = np.where(rng.random(len(extra)) < 0.5, data[extra] + 3, data[extra] // 2)
    data2 = np.concatenate([data, dup]).astype(g.dtype)
    order = rng.permutation(len(data2))
    rows2, cols2, data2 = rows2[order], cols2[order], data2[order]
    sp = scipy.sparse.coo_matrix((data2, (rows2, cols2)), shape=(n, n))
    want = np.full_like(g, no_edge(g.dtype))  # each entry's minimum, by sorting: first per (row, col)
    by = np.lexsort((data2, cols2, rows2))
    first = np.ones(len(by), dtype=bool)
    first[1:] = (rows2[by][1:] != rows2[by][:-1]) | (cols2[by][1:] != cols2[by][:-1])
    want[rows2[by][first], cols2[by][first]] = data2[by][first]
    np.testing.assert_array_equal(apsp.solve(sp, device=device), apsp.solve(want, device=device))


@given(graphs(), st.booleans())
def test_floyd_warshall_drop_in_matches_scipy(g, directed):
    dense = as_float(g)  # SciPy's dense convention: zeros and inf are non-edges
    try:
        expected = csgraph.floyd_warshall(dense, directed=directed)
    except csgraph.NegativeCycleError:
        try:
            apsp.floyd_warshall(dense, directed=directed)
        except csgraph.NegativeCycleError:
            return
        raise AssertionError("SciPy found a negative cycle, apsp did not")
    np.testing.assert_array_equal(apsp.floyd_warshall(dense, directed=directed), expected)


@st.composite
def graphs_with_a_negative_cycle(draw, *, max_n=150):
    """A random graph with weights >= 0 and one planted cycle of 1 to 8 vertices (a self-loop
    when 1) whose weights sum below zero, its vertices spread across tiles. Every negative edge
    lies on that cycle, so every negative cycle shares a vertex with it."""
    n = draw(st.integers(2, max_n))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    density = draw(st.floats(0.0, 1.0))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    g = np.where(rng.random((n, n)) < density, rng.integers(0, 30, size=(n, n)), np.inf)
    cycle = rng.choice(n, size=draw(st.integers(1, min(n, 8))), replace=False)
    w = rng.integers(-10, 11, size=len(cycle)).astype(np.float64)
    w[-1] = -1 - rng.integers(0, 10) - w[:-1].sum()  # the cycle sums to -1 .. -10
    g[cycle, np.roll(cycle, -1)] = w
    return to_dtype(g, dtype), cycle


@ENGINES
@given(graphs_with_a_negative_cycle())
def test_negative_cycles_are_found_and_named(device, case):
    g, cycle = case
    before = g.copy()
    edge = g < no_edge(g.dtype)
    if len(cycle) > 1:  # SciPy forces the diagonal to 0, so it cannot see a negative self-loop
        stored = scipy.sparse.csr_matrix((as_float(g)[edge], np.nonzero(edge)), shape=g.shape)
        with pytest.raises(csgraph.NegativeCycleError):  # stored zeros are zero-weight edges
            csgraph.floyd_warshall(stored)
    with pytest.raises(apsp.NegativeCycleError) as err:
        apsp.solve(g, device=device)
    named = np.asarray(err.value.vertices)
    np.testing.assert_array_equal(g, before)
    # Each named vertex has a negative closed walk: it shares a strongly connected component
    # (of the edges) with the planted cycle, through which every negative cycle passes.
    edges = scipy.sparse.csr_matrix((np.ones(int(edge.sum())), np.nonzero(edge)), shape=g.shape)
    _, component = csgraph.connected_components(edges, directed=True, connection="strong")
    assert len(named) > 0
    assert set(component[named]) == {component[cycle[0]]}, (named.tolist(), cycle.tolist())
    # .cycle is one negative cycle, in order: distinct vertices, edges of the input, a negative sum.
    found = err.value.cycle
    assert len(found) == len(set(found)) > 0 and set(found) <= set(named.tolist())
    hops = list(zip(found, found[1:] + found[:1]))
    assert all(edge[a, b] or (a == b and g[a, a] < 0) for a, b in hops), (found, cycle.tolist())
    assert sum(as_float(g)[a, b] for a, b in hops) < 0, (found, cycle.tolist())
    assert " -> ".join(str(v) for v in [*found, found[0]]) in str(err.value)
