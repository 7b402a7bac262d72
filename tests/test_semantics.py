"""The numeric contract of apsp.solve, case by case: INF rules per dtype, zero and negative
weights, widening of small dtypes, the integer overflow guard at its exact boundary, n = 0 and
n = 1, overwrite=True writing in place, progress output, and the GIL released while computing."""
from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import scipy.sparse

import apsp
from graphs import (DTYPES, assert_interrupt_stops_early, assert_matches_scipy,
                    assert_paths_consistent, no_edge, random_graph)

INT_DTYPES = (np.int32, np.int64)


def test_constants():
    assert apsp.INT32_INF == 2**30 - 1 == 1073741823
    assert apsp.INT64_INF == 2**62 - 1
    assert isinstance(apsp.INT32_INF, int) and isinstance(apsp.INT64_INF, int)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_small_known_answer(device, dtype):
    inf = no_edge(dtype)
    g = np.array([[0, 4, inf, inf], [inf, 0, -2, inf], [1, inf, 0, inf], [inf, inf, 0, 0]], dtype=dtype)
    expected = np.array([[0, 4, 2, inf], [-1, 0, -2, inf], [1, 5, 0, inf], [1, 5, 0, 0]], dtype=dtype)
    dist = apsp.solve(g, device=device)
    assert dist.dtype == dtype
    np.testing.assert_array_equal(dist, expected)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_values_at_or_above_inf_are_no_edge(device, dtype):
    inf = no_edge(dtype)
    top = np.iinfo(dtype).max
    g = np.array([[0, inf, top, 3], [inf + 1, 0, 1, top], [top, inf, 0, inf], [top - 1, 2, top, 0]],
                 dtype=dtype)
    before = g.copy()
    dist = apsp.solve(g, device=device)
    np.testing.assert_array_equal(g, before)
    expected = np.array([[0, 5, 6, 3], [inf, 0, 1, inf], [inf, inf, 0, inf], [inf, 2, 3, 0]], dtype=dtype)
    np.testing.assert_array_equal(dist, expected)  # unreachable is exactly INF, never INF + x


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_zero_weight_edges_are_edges(device, dtype):
    inf = no_edge(dtype)
    g = np.array([[0, 0, inf], [inf, 0, 0], [inf, inf, 0]], dtype=dtype)
    np.testing.assert_array_equal(apsp.solve(g, device=device), [[0, 0, 0], [inf, 0, 0], [inf, inf, 0]])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_diagonal_is_zero_and_positive_self_loops_are_ignored(device, dtype):
    inf = no_edge(dtype)
    g = np.array([[7, 1], [inf, inf]], dtype=dtype)
    np.testing.assert_array_equal(apsp.solve(g, device=device), [[0, 1], [inf, 0]])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_n0_and_n1(device, dtype):
    empty = apsp.solve(np.zeros((0, 0), dtype=dtype), device=device)
    assert empty.shape == (0, 0) and empty.dtype == dtype
    d, p = apsp.solve(np.zeros((0, 0), dtype=dtype), return_predecessors=True, device=device)
    assert d.shape == p.shape == (0, 0) and p.dtype == np.int32
    for w in (5, 0, no_edge(dtype)):
        d, p = apsp.solve(np.array([[w]], dtype=dtype), return_predecessors=True, device=device)
        assert d.tolist() == [[0]] and d.dtype == dtype and p.tolist() == [[-9999]]
    with pytest.raises(apsp.NegativeCycleError):
        apsp.solve(np.array([[-1]], dtype=dtype), device=device)


@pytest.mark.parametrize(("dtype", "computed"), [
    (np.bool_, np.int32), (np.int8, np.int32), (np.int16, np.int32), (np.uint8, np.int32),
    (np.uint16, np.int32), (np.uint32, np.int64), (np.float16, np.float32)],
    ids=lambda d: np.dtype(d).name)
def test_small_dtypes_are_widened_without_loss(device, dtype, computed):
    rng = np.random.default_rng(5)
    g = rng.integers(0, 2 if dtype is np.bool_ else 100, size=(20, 20)).astype(dtype)
    if dtype is np.float16:
        g[rng.random((20, 20)) < 0.5] = np.inf
    before = g.copy()
    dist = apsp.solve(g, device=device)
    assert dist.dtype == computed
    np.testing.assert_array_equal(g, before)
    np.testing.assert_array_equal(dist, apsp.solve(g.astype(computed), device=device))
    if dtype is np.uint32:  # values beyond int32 survive the widening
        big = np.array([[0, 4_000_000_000], [1, 0]], dtype=np.uint32)
        np.testing.assert_array_equal(apsp.solve(big, device=device), [[0, 4_000_000_000], [1, 0]])


def test_bool_false_is_a_zero_weight_edge(device):
    # Widened like NumPy would (False -> 0), and zero is a real edge: documented in solve().
    g = np.array([[False, True], [False, False]])
    np.testing.assert_array_equal(apsp.solve(g, device=device), [[0, 1], [0, 0]])


def test_float16_inf_stays_no_edge(device):
    g = np.array([[0, np.inf], [1, 0]], dtype=np.float16)
    np.testing.assert_array_equal(apsp.solve(g, device=device), np.array([[0, np.inf], [1, 0]], np.float32))


def test_lists_and_non_contiguous_inputs(device):
    g = random_graph(np.random.default_rng(9), 70, np.float64)
    expected = apsp.solve(g, device=device)
    np.testing.assert_array_equal(apsp.solve(g.tolist(), device=device), expected)
    np.testing.assert_array_equal(apsp.solve(np.asfortranarray(g), device=device), expected)
    big = np.full((90, 150), -1.0)
    big[5:75, 10:80] = g
    view = big[5:75, 10:80]
    np.testing.assert_array_equal(apsp.solve(view, device=device), expected)
    np.testing.assert_array_equal(apsp.solve(g.T.copy().T, device=device), expected)
    ro = g.copy()
    ro.flags.writeable = False
    np.testing.assert_array_equal(apsp.solve(ro, device=device), expected)


# ---- the integer overflow guard -------------------------------------------------------------
# It refuses when (n - 1) * max|w| >= INF // 2. INT32_INF // 2 = 2^29 - 1 = 233 * 1103 * 2089,
# so n = 234 with |w| = (2^29 - 1) / 233 hits the bound exactly; INT64_INF // 2 = 2^61 - 1 is
# prime, so only n = 2 hits it exactly (|w| = 2^61 - 1).
def _chain(n, w, dtype):
    g = np.full((n, n), no_edge(dtype), dtype=dtype)
    idx = np.arange(n - 1)
    g[idx, idx + 1] = w
    return g


@pytest.mark.parametrize(("dtype", "n", "w_at_bound"), [
    (np.int32, 234, (2**29 - 1) // 233), (np.int32, 2, 2**29 - 1), (np.int32, 3, 2**28),
    (np.int64, 2, 2**61 - 1), (np.int64, 3, 2**60)], ids=lambda v: str(v) if isinstance(v, int) else np.dtype(v).name)
@pytest.mark.parametrize("sign", (1, -1))
def test_overflow_guard_boundary(device, dtype, n, w_at_bound, sign):
    limit = no_edge(dtype) // 2
    assert (n - 1) * w_at_bound >= limit > (n - 1) * (w_at_bound - 1)
    at = _chain(n, sign * w_at_bound, dtype)
    before = at.copy()
    with pytest.raises(OverflowError) as info:
        apsp.solve(at, device=device)
    msg = str(info.value)
    assert np.dtype(dtype).name in msg and str(w_at_bound) in msg
    assert ("int64" if dtype == np.int32 else "float64") in msg.split("instead")[0]  # the dtype to use
    np.testing.assert_array_equal(at, before)
    under = _chain(n, sign * (w_at_bound - 1), dtype)  # one below: computed, exactly
    dist = apsp.solve(under, device=device)
    expected_far = sign * (n - 1) * (w_at_bound - 1)  # the whole chain, as a Python int
    assert int(dist[0, n - 1]) == expected_far
    assert int(dist[n - 1, 0]) == no_edge(dtype)
    if n > 2:
        assert int(dist[1, n - 1]) == sign * (n - 2) * (w_at_bound - 1)


def test_overflow_guard_ignores_no_edge_values_and_counts_unweighted_as_one(device):
    g = np.full((500, 500), apsp.INT32_INF, dtype=np.int32)
    g[0, 1] = 2**29  # (n-1) * 2^29 is far beyond the bound ...
    with pytest.raises(OverflowError):
        apsp.solve(g, device=device)
    hops = apsp.solve(g, unweighted=True, device=device)  # ... but as a hop count it is 1
    assert hops[0, 1] == 1 and hops[1, 0] == apsp.INT32_INF


def test_overflow_guard_diagonal(device):
    # A huge positive self-loop is not part of any shortest path: no refusal, diagonal 0.
    g = np.array([[2**30 - 2, 1], [1, 0]], dtype=np.int32)
    np.testing.assert_array_equal(apsp.solve(g, device=device), [[0, 1], [1, 0]])


@pytest.mark.parametrize("dtype", (np.float32, np.float64), ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("sign", (1, -1))
def test_float_overflow_guard_leaves_room_for_rounding(device, dtype, sign):
    # (n - 1) * w at the largest finite value: the sums, each rounded, could reach +-inf (they
    # did, before the guard counted rounding), so it refuses; with room for rounding it computes.
    n, largest = 4, float(np.finfo(dtype).max)
    at = _chain(n, sign * dtype(largest / 3), dtype)
    with pytest.raises(OverflowError, match="within rounding of or beyond"):
        apsp.solve(at, device=device)
    dist = apsp.solve(_chain(n, sign * dtype(largest / 3 * 0.999), dtype), device=device)
    assert np.isfinite(dist[0, n - 1]) and np.sign(dist[0, n - 1]) == sign


# ---- negative weights and cycles -------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_negative_cycle_names_its_vertices(device, dtype):
    inf = no_edge(dtype)
    # 1 -> 2 -> 3 -> 1 weighs -1; 0 reaches the cycle but is not on it; 4 is isolated.
    g = np.array([[0, 1, inf, inf, inf], [inf, 0, 2, inf, inf], [inf, inf, 0, 1, inf],
                  [inf, -4, inf, 0, inf], [inf, inf, inf, inf, 0]], dtype=dtype)
    before = g.copy()
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.solve(g, device=device)
    assert sorted(info.value.vertices) == [1, 2, 3]
    assert isinstance(info.value, ValueError)
    assert "1, 2, 3" in str(info.value)
    assert info.value.cycle in ([1, 2, 3], [2, 3, 1], [3, 1, 2])
    assert "(total weight -1)" in str(info.value)
    np.testing.assert_array_equal(g, before)
    g[3, 1] = -3  # now the cycle weighs 0: fine, and the next call works
    assert apsp.solve(g, device=device)[0, 1] == 1


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_negative_self_loop_is_a_negative_cycle(device, dtype):
    g = random_graph(np.random.default_rng(1), 70, dtype)
    g[66, 66] = -1
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.solve(g, device=device)
    assert 66 in info.value.vertices


def test_negative_cycle_error_is_scipys_and_pickles():
    import pickle

    from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError

    err = apsp.NegativeCycleError("cycle", [3, 4], [4, 3])
    assert isinstance(err, ScipyNegativeCycleError) and isinstance(err, ValueError)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is apsp.NegativeCycleError and str(back) == "cycle"
    assert back.vertices == [3, 4] and back.cycle == [4, 3]


def _hub_and_cycle(dtype):
    """Vertices 0..19 reach vertex 50 and back (weight +2 each way round), and 50 -> 51 -> 50
    weighs -9: all 22 vertices have negative closed walks, but only 50 and 51 lie on a cycle."""
    inf = no_edge(dtype)
    g = np.full((52, 52), inf, dtype=dtype)
    np.fill_diagonal(g, 0)
    g[:20, 50] = g[50, :20] = 1
    g[50, 51], g[51, 50] = -10, 1
    return g


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_negative_cycle_is_named_in_order_before_the_walks(device, dtype):
    g = _hub_and_cycle(dtype)
    for graph in (g, scipy.sparse.csr_matrix(np.where(g == no_edge(dtype), 0, g))):
        with pytest.raises(apsp.NegativeCycleError) as info:
            apsp.solve(graph, device=device)
        assert len(info.value.vertices) == 22 and info.value.vertices[0] == 0
        assert info.value.cycle in ([50, 51], [51, 50])
        assert str(info.value).startswith("the graph has a negative cycle: ")
        assert "51 -> 50 -> 51" in str(info.value) or "50 -> 51 -> 50" in str(info.value)
    with pytest.raises(apsp.NegativeCycleError) as info:  # the input is consumed: no cycle
        apsp.solve(g, overwrite=True, device=device)
    assert info.value.cycle == [] and len(info.value.vertices) == 22


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("pred", [False, True], ids=["dist", "pred"])
def test_negative_cycle_vertices_are_exact_when_integer_walks_wrap(device, dtype, pred):
    """Complete digraphs of weight -1 make the engines' walk lengths fall geometrically and wrap
    around int32 (24 vertices) or int64 (48): their vertex list then missed vertex 0 of the cycle
    0 -> 64 -> 0, or named vertex 24, which no walk returns to. The list is now computed per
    strong component of the untouched input."""
    inf = no_edge(dtype)
    m = 24 if dtype == np.int32 else 48
    n = m + 45
    g = np.full((n, n), inf, dtype=dtype)
    g[n - m:, n - m:] = -1
    np.fill_diagonal(g, inf)
    g[0, n - 1], g[n - 1, 0] = -1, 0  # 0 -> n-1 -> 0 weighs -1
    g[1, n - m] = 1  # 1 reaches the clique, and nothing comes back to it
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.solve(g, return_predecessors=pred, device=device)
    assert info.value.vertices == [0] + list(range(n - m, n))
    assert len(info.value.cycle) >= 1 and str(info.value).startswith("the graph has a negative cycle: ")
    weight = sum(int(g[a, b]) for a, b in zip(info.value.cycle, info.value.cycle[1:] + info.value.cycle[:1]))
    assert weight < 0


def test_negative_cycle_search_is_bounded():
    from apsp import _cycles

    g = np.full((5000, 1), -1.0)  # never read: past MAX_VERTICES the search does not start
    assert _cycles.negative_cycle(g, list(range(_cycles.MAX_VERTICES + 1)), True) is None
    ring = np.full((3, 3), np.inf)
    ring[0, 1] = ring[1, 2] = ring[2, 0] = -1.0
    cycle, weight = _cycles.negative_cycle(ring, [0, 1, 2], True)
    assert cycle in ([0, 1, 2], [1, 2, 0], [2, 0, 1]) and weight == -3.0


def test_negative_cycle_search_reads_sparse_duplicates_as_the_engines_do(device):
    # 0 -> 1 is stored twice (-3, -3): the engines take the minimum, -3, so 0 -> 1 -> 0 weighs
    # +1; the negative cycle is 0 -> 1 -> 2 -> 0 (-1), not the sum's -6 + 4 that tocsr() reads
    g = scipy.sparse.coo_matrix(([-3.0, -3.0, 4.0, 1.0, 1.0], ([0, 0, 1, 1, 2], [1, 1, 0, 2, 0])),
                                shape=(3, 3))
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.solve(g, device=device)
    assert info.value.cycle in ([0, 1, 2], [1, 2, 0], [2, 0, 1])
    assert "(total weight -1)" in str(info.value)


def test_negative_cycle_search_is_exact_for_int64(device):
    # weights past 2^53: in float64 the cycle would sum to 0 and not be named
    big = apsp.INT64_INF // 2 - 1
    g = np.array([[0, -big], [big - 1, 0]], dtype=np.int64)
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.solve(g, device=device)
    assert info.value.cycle in ([0, 1], [1, 0]) and "(total weight -1)" in str(info.value)


def test_negative_cycle_search_directed_false_and_self_loops(device):
    inf = np.inf
    g = np.array([[0, 3, inf, inf], [inf, 0, -1, inf], [inf, inf, 0, inf], [inf, inf, inf, -2]])
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.solve(g, device=device)
    assert info.value.cycle == [3] and "3 -> 3 (total weight -2)" in str(info.value)
    g[3, 3] = 0
    with pytest.raises(apsp.NegativeCycleError) as info:  # 1 - 2 is one edge both ways
        apsp.solve(g, directed=False, device=device)
    assert info.value.cycle in ([1, 2], [2, 1])


def test_undirected_negative_edge_is_a_negative_cycle(device):
    g = np.array([[0, -1], [np.inf, 0]])
    assert apsp.solve(g, device=device)[0, 1] == -1
    with pytest.raises(apsp.NegativeCycleError):
        apsp.solve(g, directed=False, device=device)


# ---- overwrite=True --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_overwrite_writes_in_place(device, dtype):
    g = random_graph(np.random.default_rng(4), 130, dtype, density=0.05)
    expected = apsp.solve(g, device=device)
    dist = apsp.solve(g, overwrite=True, device=device)
    assert dist is g
    np.testing.assert_array_equal(g, expected)
    g2 = random_graph(np.random.default_rng(4), 130, dtype, density=0.05)
    original = g2.copy()
    dist, pred = apsp.solve(g2, overwrite=True, return_predecessors=True, device=device)
    assert dist is g2
    np.testing.assert_array_equal(g2, expected)
    assert_paths_consistent(original, g2, pred)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_overwrite_into_a_view_with_padding(device, dtype):
    # Rows contiguous but a leading dimension larger than n: written in place, padding untouched.
    g = random_graph(np.random.default_rng(6), 67, dtype)
    expected = apsp.solve(g, device=device)
    big = np.full((70, 80), 77, dtype=dtype)
    view = big[2:69, 5:72]
    view[...] = g
    out = apsp.solve(view, overwrite=True, device=device)
    assert np.shares_memory(out, big) and out.base is not None
    np.testing.assert_array_equal(big[2:69, 5:72], expected)
    outside = np.ones(big.shape, dtype=bool)
    outside[2:69, 5:72] = False
    assert np.all(big[outside] == 77)


def test_overwrite_false_never_aliases(device):
    g = random_graph(np.random.default_rng(8), 30, np.float64)
    before = g.copy()
    dist = apsp.solve(g, device=device)
    assert not np.shares_memory(dist, g)
    np.testing.assert_array_equal(g, before)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_big_endian_arrays_are_the_same_numbers(device, dtype):
    g = random_graph(np.random.default_rng(9), 70, dtype)
    swapped = g.astype(g.dtype.newbyteorder(">"))
    before = swapped.copy()
    dist, pred = apsp.solve(swapped, return_predecessors=True, device=device)
    assert dist.dtype == np.dtype(dtype)  # native byte order out
    np.testing.assert_array_equal(dist, apsp.solve(g, device=device))
    assert_paths_consistent(g, dist, pred)
    np.testing.assert_array_equal(swapped, before)
    with pytest.raises(ValueError, match="not in this machine's byte order"):
        apsp.solve(swapped, overwrite=True, device=device)


def test_rows_that_overlap_are_read_not_written(device):
    # A writable strided view whose rows share memory: solved from a copy, never in place (writing
    # one row would change another, and the engines assume rows at least n apart).
    base = np.full(20, 9.0)
    base[:5] = [0.0, 1.0, 2.0, 3.0, 4.0]
    view = np.lib.stride_tricks.as_strided(base[:5], (3, 3), (8, 8))
    before = base.copy()
    np.testing.assert_array_equal(apsp.solve(view, device=device),
                                  apsp.solve(np.array(view), device=device))
    with pytest.raises(ValueError, match="its rows overlap"):
        apsp.solve(view, overwrite=True, device=device)
    np.testing.assert_array_equal(base, before)
    from apsp import _core  # the binding refuses them too, whatever called it
    with pytest.raises(ValueError, match="rows overlap"):
        _core.solve_host(view, None, "cpu", 0, True, False, True, True, None, None)
    np.testing.assert_array_equal(base, before)


def test_overwrite_refuses_an_array_made_anew_for_the_call():
    class Temporary:  # __array__ builds a new array each time: writing it would reach nobody
        def __array__(self, dtype=None, copy=None):
            return np.array([[0.0, 1.0], [1.0, 0.0]]).reshape(2, 2)

    class Shared:  # __array__ gives a view of memory the object keeps: written in place
        def __init__(self):
            self.data = np.array([[0.0, 1.0, 9.0], [np.inf, 0.0, 1.0], [np.inf, np.inf, 0.0]])

        def __array__(self, dtype=None, copy=None):
            return self.data[:, :]

    with pytest.raises(ValueError, match="cannot write into a Temporary"):
        apsp.solve(Temporary(), overwrite=True, device="cpu")
    shared = Shared()
    apsp.solve(shared, overwrite=True, device="cpu")
    assert shared.data[0, 2] == 2.0


# ---- progress, GIL, interrupt ----------------------------------------------------------------
def test_progress_with_tqdm(capsys):
    pytest.importorskip("tqdm", reason="tqdm is in the [test] extra; the fallback is tested below")
    g = random_graph(np.random.default_rng(2), 300, np.float32)
    dist = apsp.solve(g, progress=True, device="cpu")
    err = capsys.readouterr().err
    assert "apsp n=300 cpu" in err and "5/5" in err  # 300 = 5 tiles of 64: five rounds
    np.testing.assert_array_equal(dist, apsp.solve(g, device="cpu"))


def test_progress_without_tqdm_prints_a_stderr_line():
    # A real interpreter in which tqdm cannot be imported: the plain stderr line is used.
    code = ("import sys; sys.modules['tqdm'] = None; sys.modules['tqdm.auto'] = None\n"
            "import numpy as np, apsp\n"
            "d = apsp.solve(np.ones((200, 200)), progress=True, device='cpu')\n"
            "assert (d == np.where(np.eye(200) > 0, 0, 1)).all()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "apsp n=200 cpu: round 4/4 (100.0%)" in proc.stderr


@pytest.mark.parametrize("stream", ["none", "closed"])
def test_progress_survives_an_unusable_stderr(monkeypatch, stream):
    # pythonw and some services run with sys.stderr None; a bar nobody can see stops nothing
    import io

    if stream == "none":
        monkeypatch.setattr(sys, "stderr", None)
    else:
        closed = io.StringIO()
        closed.close()
        monkeypatch.setattr(sys, "stderr", closed)
    g = random_graph(np.random.default_rng(2), 200, np.float32)
    dist = apsp.solve(g, progress=True, device="cpu")
    np.testing.assert_array_equal(dist, apsp.solve(g, device="cpu"))
    unusable = "None" if stream == "none" else "io.StringIO(); sys.stderr.close()"
    code = ("import io, sys; sys.modules['tqdm'] = None; sys.modules['tqdm.auto'] = None\n"
            "import numpy as np, apsp\n"
            f"sys.stderr = {unusable}\n"
            "d = apsp.solve(np.ones((200, 200)), progress=True, device='cpu')\n"
            "assert (d == np.where(np.eye(200) > 0, 0, 1)).all()\n"
            "print('solved')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == "solved\n", proc.stderr  # the plain line's path


def _solve_in_a_forked_child(g, **kwargs):
    """("ok", apsp.solve(g, **kwargs)) or ("error", its text), from a child forked from this
    process (multiprocessing's "fork", as PyTorch's DataLoader workers are)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send(("ok", apsp.solve(g, **kwargs)))
        except Exception as exc:  # noqa: BLE001 - the parent asserts on the text
            send.send(("error", f"{type(exc).__name__}: {exc}"))

    proc = ctx.Process(target=child)
    proc.start()
    try:
        if not receive.poll(120):
            pytest.fail("the forked child did not answer within 120 s (hung)")
        return receive.recv()
    finally:
        proc.join(30)
        if proc.is_alive():
            proc.kill()


FORK_WARNING = "ignore:This process .* is multi-threaded:DeprecationWarning"  # Python >= 3.12


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork()")
@pytest.mark.filterwarnings(FORK_WARNING)
def test_a_forked_child_solves_on_the_cpu_engine():
    # GNU OpenMP's thread pool does not survive fork(): a child of a parent that ran the CPU
    # engine's parallel rounds (n >= 256) used to wait forever for pool threads it lacked.
    g = random_graph(np.random.default_rng(7), 300, np.float64)
    expected = apsp.solve(g, device="cpu")
    kind, got = _solve_in_a_forked_child(g, device="cpu")
    assert kind == "ok", got
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(apsp.solve(g, device="cpu"), expected)  # and the parent goes on


@pytest.mark.gpu
@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork()")
@pytest.mark.filterwarnings(FORK_WARNING)
def test_a_child_forked_after_cuda_takes_the_cpu_engine_and_says_why_not_the_gpu():
    g = random_graph(np.random.default_rng(8), 300, np.float32)
    expected = apsp.solve(g, device="cuda")  # CUDA is initialised in this process
    kind, got = _solve_in_a_forked_child(g)  # a host array, no device asked: the CPU engine
    assert kind == "ok", got
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    kind, text = _solve_in_a_forked_child(g, device="cuda")
    assert kind == "error" and text.startswith("RuntimeError") and "'spawn'" in text, text
    np.testing.assert_array_equal(apsp.solve(g, device="cuda"), expected)


def test_gil_is_released_while_computing():
    # While one thread solves, this thread keeps running Python. If the solve held the GIL,
    # the longest gap between two iterations here would be the whole solve.
    g = random_graph(np.random.default_rng(3), 3000, np.float32, density=0.5)
    box = {}

    def work():
        t0 = time.perf_counter()
        box["dist"] = apsp.solve(g, device="cpu")
        box["seconds"] = time.perf_counter() - t0

    worker = threading.Thread(target=work)
    worker.start()
    gaps, last = [], time.perf_counter()
    while worker.is_alive():
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
        time.sleep(0.001)
    worker.join()
    assert box["seconds"] > 0.05, "solve too fast to tell; raise n"
    assert len(gaps) > 10
    assert max(gaps) < box["seconds"] / 2, (max(gaps), box["seconds"])


def _dense_graph(n: int, dtype, kind: str):
    """A complete graph with weights in [1, 100) and a zero diagonal, as a NumPy array or (kind
    "torch") a CUDA tensor, or 8n random edges as a SciPy sparse matrix: a solve's cost does not
    depend on its edges, and these are cheap at any n."""
    if kind == "torch":
        torch = pytest.importorskip("torch")
        g = torch.randint(1, 100, (n, n), dtype=getattr(torch, np.dtype(dtype).name), device="cuda")
        g.fill_diagonal_(0)
        return g
    if kind == "sparse":  # a SciPy sparse input: its edges are scattered on the GPU
        rng = np.random.default_rng(n)
        rows, cols = rng.integers(0, n, 8 * n), rng.integers(0, n, 8 * n)
        return scipy.sparse.csr_matrix((rng.integers(1, 100, 8 * n).astype(dtype), (rows, cols)),
                                       shape=(n, n))
    g = np.random.default_rng(n).integers(1, 100, size=(n, n), dtype=np.int32).astype(dtype)
    np.fill_diagonal(g, 0)
    return g


@pytest.mark.parametrize("device, dtype, kind, n0, least", [
    ("cpu", np.float32, "numpy", 1500, 0.3),
    # the CUDA engine past the sizes replayed as one CUDA graph: a host input uploaded first
    # (floats) or solved while it arrives (integers), and a device array with the checks on
    pytest.param("cuda", np.float32, "numpy", 6144, 0.8, marks=pytest.mark.gpu),
    pytest.param("cuda", np.int32, "numpy", 6144, 0.8, marks=pytest.mark.gpu),
    pytest.param("cuda", np.int32, "torch", 6144, 0.8, marks=pytest.mark.gpu),
    pytest.param("cuda", np.float32, "sparse", 6144, 0.8, marks=pytest.mark.gpu),
], ids=["cpu", "cuda-float32", "cuda-int32", "cuda-torch-int32", "cuda-sparse-float32"])
def test_keyboard_interrupt_stops_a_solve_and_the_next_call_works(device, dtype, kind, n0, least,
                                                                  monkeypatch):
    """A Ctrl-C that arrives while an engine computes (the GIL released, no progress callable)
    stops it long before the solve would end, and the input is as it was. The graph grows until
    an uninterrupted solve takes at least `least` seconds on this machine, so the interrupt, sent
    a tenth of the way in, always lands mid-solve; an engine that ignored it would run to the end.
    The CUDA engine checks between rounds and between a host input's upload chunks (the float32
    graph's 2.4 GB upload took 1 s beside eleven other test workers, when it was not checked);
    the download is not interrupted, so its solves are made long enough that it is a small part."""
    # The solves of the matrix's own dtype: these weights (1..99) would run on 16-bit lengths (the
    # hub bound), which at these n is too fast to time without growing the graph past memory.
    monkeypatch.setenv("APSP_CPU_NARROW", "0")
    monkeypatch.setenv("APSP_CUDA_NARROW", "0")

    n = n0
    while True:
        g = _dense_graph(n, dtype, kind)
        before = g.clone() if kind == "torch" else g.copy()  # a sparse matrix's copy is deep
        t0 = time.perf_counter()
        apsp.solve(g, device=device)  # returns after the negative-cycle check's readout
        full = time.perf_counter() - t0
        if full >= least or n >= 8 * n0:
            break
        n *= 2
    assert full >= least, f"n = {n} solved in {full:.3f} s: too fast to tell"
    assert_interrupt_stops_early(lambda: apsp.solve(g, device=device), full, "solve")
    if kind == "torch":
        assert bool((g == before).all())
    elif kind == "sparse":
        assert (g != before).nnz == 0
    else:
        np.testing.assert_array_equal(g, before)
    small = random_graph(np.random.default_rng(3), 65, dtype)
    assert_matches_scipy(apsp.solve(small, device=device), small)
