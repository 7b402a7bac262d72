"""apsp.floyd_warshall against scipy.sparse.csgraph.floyd_warshall on the inputs SciPy's
documentation describes: dense arrays (zeros, inf and NaN are non-edges), masked arrays, sparse
matrices (explicit zeros are edges, duplicates take the minimum), the diagonal forced to 0,
float64 results, -9999 predecessors, NegativeCycleError, overwrite."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.csgraph as csgraph

import apsp
from graphs import path_length, potential_negative_graph


def _dense(rng, n, *, negative=False):
    g = rng.integers(1, 50, size=(n, n)).astype(np.float64)
    if negative:
        g = potential_negative_graph(rng, n, np.float64, density=1.0)
    g[rng.random((n, n)) < 0.6] = 0.0  # zeros: non-edges in SciPy's dense convention
    g[rng.random((n, n)) < 0.1] = np.inf
    g[rng.random((n, n)) < 0.05] = np.nan
    return g


def _check_pred(graph_dense, dist, pred):
    """Every path rebuilt from pred has the reported length (ties may differ from SciPy's)."""
    n = dist.shape[0]
    assert pred.dtype == np.int32
    np.testing.assert_array_equal(pred == -9999, np.isinf(dist) | np.eye(n, dtype=bool))
    for i in range(n):
        for j in range(n):
            if i != j and np.isfinite(dist[i, j]):
                p = apsp.path(pred, i, j)
                assert path_length(graph_dense, p) == dist[i, j]


def _same(ours, theirs):
    assert ours.dtype == np.float64 == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("n", (1, 2, 63, 65, 129))
@pytest.mark.parametrize("directed", (True, False))
@pytest.mark.parametrize("unweighted", (False, True))
def test_dense(n, directed, unweighted):
    g = _dense(np.random.default_rng(n), n)
    before = g.copy()
    kw = dict(directed=directed, unweighted=unweighted)
    _same(apsp.floyd_warshall(g, **kw), csgraph.floyd_warshall(g, **kw))
    np.testing.assert_array_equal(g, before)  # overwrite=False: input untouched


@pytest.mark.parametrize("n", (3, 65))
def test_dense_negative_weights_and_predecessors(n):
    g = _dense(np.random.default_rng(n), n, negative=True)
    ref_d, ref_p = csgraph.floyd_warshall(g, return_predecessors=True)
    dist, pred = apsp.floyd_warshall(g, return_predecessors=True)
    _same(dist, ref_d)
    edges = np.where((g == 0) | ~np.isfinite(g), np.inf, g)  # SciPy's reading of g
    np.fill_diagonal(edges, 0)
    _check_pred(edges, dist, pred)
    np.testing.assert_array_equal(pred == -9999, ref_p == -9999)


def test_scipy_docstring_example():
    graph = scipy.sparse.csr_array([[0, 1, 2, 0], [0, 0, 0, 1], [2, 0, 0, 3], [0, 0, 0, 0]])
    dist, pred = apsp.floyd_warshall(csgraph=graph, directed=False, return_predecessors=True)
    np.testing.assert_array_equal(dist, [[0, 1, 2, 2], [1, 0, 3, 1], [2, 3, 0, 3], [2, 1, 3, 0]])
    np.testing.assert_array_equal(pred, [[-9999, 0, 0, 1], [1, -9999, 0, 1], [2, 0, -9999, 2],
                                         [1, 3, 3, -9999]])


def test_lists_and_integer_arrays():
    g = [[0, 1, 0], [0, 0, 2], [3, 0, 0]]
    _same(apsp.floyd_warshall(g), csgraph.floyd_warshall(g))
    _same(apsp.floyd_warshall(np.array(g, dtype=np.int32)), csgraph.floyd_warshall(np.array(g, dtype=np.int32)))


def test_masked_arrays():
    rng = np.random.default_rng(2)
    g = rng.integers(0, 9, size=(40, 40)).astype(np.float64)  # zeros are non-edges even unmasked
    masked = np.ma.masked_array(g, mask=rng.random((40, 40)) < 0.5)
    _same(apsp.floyd_warshall(masked), csgraph.floyd_warshall(masked))
    _same(apsp.floyd_warshall(masked, directed=False), csgraph.floyd_warshall(masked, directed=False))
    ints = np.ma.masked_array(g.astype(np.int64), mask=masked.mask)
    _same(apsp.floyd_warshall(ints), csgraph.floyd_warshall(ints))


@pytest.mark.parametrize("fmt", ("csr", "csc", "lil"))
@pytest.mark.parametrize("directed", (True, False))
def test_sparse_explicit_zeros_and_duplicates(fmt, directed):
    rng = np.random.default_rng(3)
    n, m = 70, 400
    rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
    data = rng.integers(0, 5, m).astype(np.float64)  # many explicit zeros (edges)
    graph = scipy.sparse.coo_matrix((data, (rows, cols)), shape=(n, n)).asformat(fmt)
    assert graph.nnz and (graph.tocoo().data == 0).any()
    _same(apsp.floyd_warshall(graph, directed=directed), csgraph.floyd_warshall(graph, directed=directed))
    # duplicates, kept unsummed in a CSR matrix: the minimum wins in both
    dup = scipy.sparse.csr_matrix((np.array([5.0, 2.0, 7.0]), np.array([1, 1, 0]), np.array([0, 2, 3])),
                                  shape=(2, 2))
    assert not dup.has_canonical_format
    _same(apsp.floyd_warshall(dup), csgraph.floyd_warshall(dup))
    _same(apsp.floyd_warshall(dup, directed=directed), csgraph.floyd_warshall(dup, directed=directed))


def test_sparse_non_finite_entries_are_non_edges():
    g = scipy.sparse.csr_matrix((np.array([np.nan, np.inf, -1.0, 4.0]), np.array([1, 0, 1, 2]),
                                 np.array([0, 1, 3, 4])), shape=(3, 3))
    _same(apsp.floyd_warshall(g), csgraph.floyd_warshall(g))


def test_sparse_stored_minus_inf_is_refused():
    # SciPy spreads a stored -inf edge to every path through it; apsp computes finite weights, so
    # it says so instead of dropping the edge.
    g = scipy.sparse.csr_matrix((np.array([-np.inf, 1.0]), (np.array([0, 1]), np.array([1, 2]))),
                                shape=(3, 3))
    assert np.isneginf(csgraph.floyd_warshall(g)[0, 2])
    with pytest.raises(ValueError, match=r"csgraph\[0, 1\] is a stored -inf edge"):
        apsp.floyd_warshall(g)


def test_dense_minus_inf_is_a_non_edge():
    g = np.array([[0, -np.inf, 1], [2, 0, np.nan], [np.inf, 3, 0]])
    _same(apsp.floyd_warshall(g), csgraph.floyd_warshall(g))


def test_diagonal_forced_to_zero_negative_self_loop_ignored():
    g = np.array([[-5.0, 1.0], [2.0, 7.0]])
    _same(apsp.floyd_warshall(g), csgraph.floyd_warshall(g))  # no NegativeCycleError in SciPy


def test_negative_cycle_is_scipys_exception_too():
    g = np.array([[0, 1.0, 0], [0, 0, 1.0], [-3.0, 0, 0]])
    with pytest.raises(csgraph.NegativeCycleError):
        csgraph.floyd_warshall(g)
    with pytest.raises(csgraph.NegativeCycleError) as info:  # an existing except clause
        apsp.floyd_warshall(g)
    assert isinstance(info.value, apsp.NegativeCycleError)
    assert sorted(info.value.vertices) == [0, 1, 2]


def test_overwrite_writes_into_c_ordered_float64():
    g = _dense(np.random.default_rng(4), 70)
    expected = csgraph.floyd_warshall(g)
    out = apsp.floyd_warshall(g, overwrite=True)
    assert out is g
    np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("make", [lambda g: np.asfortranarray(g), lambda g: g.astype(np.float32),
                                  lambda g: scipy.sparse.csr_matrix(g)],
                         ids=["fortran", "float32", "sparse"])
def test_overwrite_is_ignored_where_scipy_ignores_it(make):
    g = make(_dense(np.random.default_rng(5), 20))
    before = g.copy()
    out = apsp.floyd_warshall(g, overwrite=True)
    _same(out, csgraph.floyd_warshall(before))
    if scipy.sparse.issparse(g):
        np.testing.assert_array_equal(g.toarray(), before.toarray())
    else:
        np.testing.assert_array_equal(g, before)


def test_shape_errors():
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        apsp.floyd_warshall(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"\(5,\)"):
        apsp.floyd_warshall(np.zeros(5))


def test_empty_graph():
    out = apsp.floyd_warshall(np.zeros((0, 0)))
    assert out.shape == (0, 0) and out.dtype == np.float64


def test_dense_weights_within_isclose_of_zero_are_non_edges_as_in_scipy():
    # SciPy reads a dense input through np.ma.masked_values(g, 0): floats with |w| <= 1e-8 are
    # "no edge" there, evaluated in the input's own dtype; integers and masked arrays compare
    # exactly.
    g = np.array([[0, 1e-9, 0, 0], [0, 0, 1.0, -1e-8], [1.0, 0, 0, 2e-8], [1.0, 0, 0, 0]])
    for graph in (g, g.astype(np.float32), g.astype(np.float16), np.ma.masked_array(g),
                  (g * 1e9).astype(np.int64)):
        _same(apsp.floyd_warshall(graph), csgraph.floyd_warshall(graph))
    assert np.isinf(apsp.floyd_warshall(g)[0, 1])
    # a negative cycle through a weight that small is not one in SciPy's reading either
    cyc = np.array([[0, -1.0], [1e-9, 0]])
    _same(apsp.floyd_warshall(cyc), csgraph.floyd_warshall(cyc))
    # the same rule in place, where the caller's memory is the work buffer
    work = g.copy()
    apsp.floyd_warshall(work, overwrite=True)
    _same(work, csgraph.floyd_warshall(g))


def test_sparse_subclasses_are_sparse():
    class MyCSR(scipy.sparse.csr_array):
        pass

    m = MyCSR(np.array([[0, 1.0, 0], [2.0, 0, 0], [0, 0, 0]]))
    _same(apsp.floyd_warshall(m), csgraph.floyd_warshall(m))
    np.testing.assert_array_equal(apsp.solve(m), [[0, 1, np.inf], [2, 0, np.inf], [np.inf] * 2 + [0]])


def test_sparse_duplicate_nan_is_not_an_edge():
    # an unsummed pair (NaN, 1.0): SciPy ignores the NaN and keeps 1.0, in either order
    for values in ([np.nan, 1.0], [1.0, np.nan]):
        m = scipy.sparse.csr_matrix((np.array(values), np.array([1, 1]), np.array([0, 2, 2])),
                                    shape=(2, 2))
        _same(apsp.floyd_warshall(m), csgraph.floyd_warshall(m))
    with pytest.raises(ValueError, match="NaN"):  # apsp.solve's own rule: a stored NaN is refused
        apsp.solve(m)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("kind", ["matrix", "memmap"])
def test_overwrite_writes_into_ndarray_subclasses(kind, tmp_path):
    g = _dense(np.random.default_rng(6), 40)
    expected = csgraph.floyd_warshall(g)
    if kind == "matrix":
        x = np.matrix(g)
    else:
        x = np.memmap(tmp_path / "g.f8", dtype=np.float64, mode="w+", shape=g.shape)
        x[:] = g
    out = apsp.floyd_warshall(x, overwrite=True)
    assert type(out) is np.ndarray and np.shares_memory(out, x)
    np.testing.assert_array_equal(np.asarray(x), expected)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("make", [np.asarray, scipy.sparse.csr_matrix, np.ma.masked_array])
def test_negative_cycle_is_named_in_order(make):
    # 0 <-> 1 is the negative cycle; 2, 3, 4 reach it and back through positive edges
    g = np.zeros((5, 5))
    g[0, 1] = g[1, 0] = -1
    g[1, 2] = g[2, 3] = g[3, 4] = g[4, 0] = 1
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.floyd_warshall(make(g))
    assert sorted(info.value.cycle) == [0, 1]
    assert "(total weight -2)" in str(info.value)
    assert {0, 1} <= set(info.value.vertices)


def test_dates_and_time_spans_are_refused():
    with pytest.raises(TypeError, match="timedelta64"):
        apsp.floyd_warshall(np.array([[0, 5], [3, 0]], dtype="m8[s]"))


def test_float_overflow_is_refused_where_scipy_would_round_to_inf():
    g = np.array([[0, 1e308, 0], [0, 0, 1e308], [1, 0, 0]])
    assert np.isinf(csgraph.floyd_warshall(g)[0, 2])
    with pytest.raises(OverflowError, match=r"2 \* 1e\+308"):
        apsp.floyd_warshall(g)
