"""Property tests (hypothesis) against SciPy on random graphs: sizes across the tile boundary,
every dtype, negative weights without negative cycles, zero-weight edges, non-edges, and the
options. A graph is drawn as (n, dtype, density, zero fraction, seed) and built with NumPy, so
examples stay cheap at n ~ 100 and shrink towards small n. The profile (bounded, derandomised
in CI) is chosen in conftest.py."""
from __future__ import annotations

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph as csgraph
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


@given(graphs())
def test_solve_matches_scipy(g):
    before = g.copy()
    dist = apsp.solve(g, device="cpu")
    assert_matches_scipy(dist, g)
    np.testing.assert_array_equal(g, before)


@given(graphs(negative=False), st.booleans(), st.booleans())
def test_options_match_scipy(g, directed, unweighted):
    dist = apsp.solve(g, directed=directed, unweighted=unweighted, device="cpu")
    assert_matches_scipy(dist, g, directed=directed, unweighted=unweighted)


@given(graphs(max_n=64))
def test_predecessor_paths_have_the_reported_length(g):
    # Within one tile (n <= 64) every graph, zero-weight cycles included.
    dist, pred = apsp.solve(g, return_predecessors=True, device="cpu")
    assert_matches_scipy(dist, g)
    assert_paths_consistent(g, dist, pred)


@given(graphs())
def test_predecessor_paths_across_tiles(g):
    # Across tiles, zero-weight cycles included (see test_predecessors_zero_weight_cycle).
    dist, pred = apsp.solve(g, return_predecessors=True, device="cpu")
    assert_paths_consistent(g, dist, pred, max_pairs=3000)


@given(graphs())
def test_result_is_closed(g):
    # Shortest-path distances are their own shortest paths: solving them again changes nothing.
    dist = apsp.solve(g, device="cpu")
    np.testing.assert_array_equal(apsp.solve(dist, device="cpu"), dist)
    f = as_float(dist)
    if f.shape[0]:  # the triangle inequality: f[i, k] + f[k, j] >= f[i, j] for every k
        assert np.all((f[:, :, None] + f[None, :, :]).min(axis=1) >= f)


@given(graphs(negative=False), st.integers(0, 2**32 - 1))
def test_sparse_with_duplicates_equals_dense_minimum(g, seed):
    n = g.shape[0]
    rows, cols = np.nonzero(g < no_edge(g.dtype))
    data = g[rows, cols]
    rng = np.random.default_rng(seed)
    extra = rng.integers(0, max(len(rows), 1), size=len(rows) // 2) if len(rows) else np.array([], int)
    rows2 = np.concatenate([rows, rows[extra]])  # duplicates that are larger: the minimum is g
    cols2 = np.concatenate([cols, cols[extra]])
    data2 = np.concatenate([data, data[extra] + 3]).astype(g.dtype)
    sp = scipy.sparse.coo_matrix((data2, (rows2, cols2)), shape=(n, n))
    np.testing.assert_array_equal(apsp.solve(sp, device="cpu"), apsp.solve(g, device="cpu"))


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
