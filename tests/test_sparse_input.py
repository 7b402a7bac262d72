"""scipy.sparse input to apsp.solve (CSR, CSC, COO, sparse arrays and matrices): stored entries
are edges, explicit zeros are zero-weight edges, duplicates take the minimum, the dtype rules of
dense input apply, and the matrix itself is never modified."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import apsp
from graphs import DTYPES, assert_matches_scipy, assert_paths_consistent, no_edge

FORMATS = ("csr", "csc", "coo")


def _edges(rng, n, m, dtype):
    rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
    data = rng.integers(-3 if np.dtype(dtype).kind != "u" else 0, 20, m)
    data[rng.random(m) < 0.2] = 0  # explicit zeros
    return rows, cols, data


def _dense_min(n, rows, cols, data, dtype):
    """What densifying must give: the minimum of the stored entries, no-edge elsewhere."""
    g = np.full((n, n), no_edge(dtype), dtype=dtype)
    for r, c, w in zip(rows, cols, data):
        g[r, c] = min(g[r, c], w)
    return g


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("cls", ("matrix", "array"))
@pytest.mark.parametrize("n", (1, 65, 130))
def test_sparse_matches_dense(device, fmt, dtype, cls, n):
    rng = np.random.default_rng(n)
    rows, cols, data = _edges(rng, n, 3 * n, dtype)
    data = np.abs(data)  # duplicates of a negative edge could form negative cycles
    make = scipy.sparse.coo_matrix if cls == "matrix" else scipy.sparse.coo_array
    sp = make((data.astype(dtype), (rows, cols)), shape=(n, n)).asformat(fmt)
    snapshot = (sp.copy(), sp.nnz)
    dist = apsp.solve(sp, device=device)
    assert isinstance(dist, np.ndarray) and dist.dtype == dtype
    stored = sp.tocoo()  # converting COO to CSR/CSC summed duplicates: the matrix holds these
    dense = _dense_min(n, stored.row, stored.col, stored.data, dtype)
    assert_matches_scipy(dist, dense)
    np.testing.assert_array_equal(dist, apsp.solve(dense, device=device))
    assert sp.nnz == snapshot[1] and (sp != snapshot[0]).nnz == 0  # untouched


def _with_duplicates(fmt):
    """[[inf, 5 and 2], [9, inf]] with the duplicate (0, 1) entries stored unsummed."""
    if fmt == "coo":
        return scipy.sparse.coo_matrix((np.array([5.0, 2.0, 9.0]), (np.array([0, 0, 1]), np.array([1, 1, 0]))),
                                       shape=(2, 2))
    if fmt == "csr":
        return scipy.sparse.csr_matrix((np.array([5.0, 2.0, 9.0]), np.array([1, 1, 0]), np.array([0, 2, 3])),
                                       shape=(2, 2))
    return scipy.sparse.csc_matrix((np.array([9.0, 5.0, 2.0]), np.array([1, 0, 0]), np.array([0, 1, 3])),
                                   shape=(2, 2))


@pytest.mark.parametrize("fmt", FORMATS)
def test_duplicates_take_the_minimum_unsummed(device, fmt):
    sp = _with_duplicates(fmt)  # SciPy's own conversions would sum them (5 + 2 = 7)
    assert sp.nnz == 3
    np.testing.assert_array_equal(apsp.solve(sp, device=device), [[0, 2], [9, 0]])


def test_explicit_zero_is_an_edge_and_missing_is_not(device):
    sp = scipy.sparse.csr_matrix((np.array([0.0, 0.0]), np.array([1, 2]), np.array([0, 1, 2, 2])),
                                 shape=(3, 3))
    np.testing.assert_array_equal(apsp.solve(sp, device=device),
                                  [[0, 0, 0], [np.inf, 0, 0], [np.inf, np.inf, 0]])


@pytest.mark.parametrize(("dtype", "computed"), [(np.bool_, np.int32), (np.int8, np.int32),
                                                 (np.uint16, np.int32), (np.uint32, np.int64)],
                         ids=lambda d: np.dtype(d).name)
def test_small_dtypes_widened(device, dtype, computed):
    sp = scipy.sparse.csr_matrix(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=dtype))
    dist = apsp.solve(sp, device=device)
    assert dist.dtype == computed
    np.testing.assert_array_equal(dist, [[0, 1, 2], [2, 0, 1], [1, 2, 0]])


def test_integer_entries_at_inf_are_no_edge(device):
    sp = scipy.sparse.coo_matrix((np.array([apsp.INT32_INF, 3], dtype=np.int32),
                                  (np.array([0, 1]), np.array([1, 0]))), shape=(2, 2))
    np.testing.assert_array_equal(apsp.solve(sp, device=device), [[0, apsp.INT32_INF], [3, 0]])


def test_predecessors_undirected_unweighted(device):
    sp = scipy.sparse.random(80, 80, density=0.05, format="csr", random_state=4, dtype=np.float64)
    sp.data = np.round(sp.data * 10) + 1  # integer weights; no zeros, so no zero-weight cycles
    coo = sp.tocoo()
    dense = np.full((80, 80), np.inf)
    dense[coo.row, coo.col] = coo.data
    for kw in ({}, {"directed": False}, {"unweighted": True}):
        dist, pred = apsp.solve(sp, return_predecessors=True, device=device, **kw)
        assert_matches_scipy(dist, dense, **kw)
        assert_paths_consistent(dense, dist, pred, **kw)
