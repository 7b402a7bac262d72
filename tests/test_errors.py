"""The whole error contract of DESIGN.md, walked on each engine: every case raises the named
exception with the offending value in its message, leaves the input untouched (values and
flags), and the next call on the same engine works."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
import scipy.sparse

import apsp
from graphs import assert_matches_scipy, random_graph

ACCEPTED = "float32, float64, int32 and int64"


def _g(dtype=np.float64, n=70):
    return random_graph(np.random.default_rng(0), n, dtype)


def _with(value, at, dtype=np.float64, n=70):
    g = _g(dtype, n)
    g[at] = value
    return g


def _fortran():
    return np.asfortranarray(_g())


def _readonly():
    g = _g()
    g.flags.writeable = False
    return g


def _chain_int32(w):
    g = np.full((100, 100), apsp.INT32_INF, dtype=np.int32)
    g[np.arange(99), np.arange(1, 100)] = w
    return g


def _chain_float(w, dtype):
    g = np.full((100, 100), np.inf, dtype=dtype)
    g[np.arange(99), np.arange(1, 100)] = w
    return g


def _unaligned(dtype=np.float64, n=70):
    """A C-ordered, writable array one byte off its elements' alignment (np.frombuffer with an
    odd offset, as memory-mapped records give)."""
    g = _g(dtype, n)
    buf = bytearray(g.nbytes + 1)
    out = np.frombuffer(buf, dtype=g.dtype, count=g.size, offset=1).reshape(g.shape)
    out[...] = g
    assert not out.flags.aligned and out.flags.c_contiguous and out.flags.writeable
    return out


def _negative_cycle():
    g = _g()
    g[10, 40], g[40, 10] = -50.0, 1.0
    return g


def _negative_self_loop():
    g = np.full((3, 3), np.inf)
    np.fill_diagonal(g, 0.0)
    g[1, 1], g[0, 2] = -1.0, 5.0
    return g


def _sparse_nan():
    m = scipy.sparse.coo_matrix(([1.0, np.nan], ([0, 2], [1, 3])), shape=(4, 4))
    return m.tocsr()


# (id, graph factory, solve kwargs, exception, fragments the message must contain)
CASES = [
    ("1d", lambda: np.zeros(5), {}, ValueError, ["(5,)"]),
    ("3d", lambda: np.zeros((2, 3, 3)), {}, ValueError, ["(2, 3, 3)"]),
    ("0d", lambda: np.float64(1.0), {}, ValueError, ["()"]),
    ("non_square", lambda: np.zeros((3, 4)), {}, ValueError, ["(3, 4)"]),
    ("ragged_list", lambda: [[0.0, 1.0], [2.0]], {}, ValueError, ["inhomogeneous"]),
    ("nan_f64", lambda: _with(np.nan, (2, 5)), {}, ValueError, ["graph[2, 5]", "NaN"]),
    ("nan_f32", lambda: _with(np.nan, (69, 0), np.float32), {}, ValueError, ["graph[69, 0]", "NaN"]),
    ("nan_f16", lambda: _with(np.nan, (3, 3), np.float16), {}, ValueError, ["graph[3, 3]", "NaN"]),
    ("nan_undirected", lambda: _with(np.nan, (4, 1)), {"directed": False}, ValueError, ["graph[4, 1]"]),
    ("nan_unweighted", lambda: _with(np.nan, (4, 1)), {"unweighted": True}, ValueError, ["graph[4, 1]"]),
    ("neg_inf", lambda: _with(-np.inf, (1, 3)), {}, ValueError, ["graph[1, 3]", "-inf"]),
    ("uint64", lambda: np.ones((3, 3), dtype=np.uint64), {}, TypeError, ["uint64", ACCEPTED]),
    ("int64_from_uint64_max", lambda: np.array([[0, 2**64 - 1], [1, 0]], dtype=np.uint64), {},
     TypeError, ["uint64"]),
    ("complex", lambda: np.ones((3, 3), dtype=np.complex128), {}, TypeError, ["complex128", ACCEPTED]),
    ("object", lambda: np.array([[0, 1], [1, 0]], dtype=object), {}, TypeError, ["object", ACCEPTED]),
    ("str", lambda: np.array([["a", "b"], ["c", "d"]]), {}, TypeError, ["<U1", ACCEPTED]),
    ("datetime", lambda: np.zeros((2, 2), dtype="datetime64[s]"), {}, TypeError, ["datetime64"]),
    ("masked", lambda: np.ma.masked_invalid(_g()), {}, TypeError, ["masked", "floyd_warshall"]),
    ("overflow_int32", lambda: _chain_int32(2**23), {}, OverflowError,
     ["int32", "99 * 8388608", "int64"]),
    ("overflow_float32", lambda: _chain_float(1e37, np.float32), {}, OverflowError,
     ["float32", "99 * 1e+37", "+inf", "float64"]),
    ("overflow_float64", lambda: _chain_float(-1e307, np.float64), {}, OverflowError,
     ["float64", "99 * 1e+307", "scale the weights down"]),
    ("overwrite_unaligned", _unaligned, {"overwrite": True}, ValueError,
     ["not aligned to its 8-byte elements", "overwrite=False"]),
    ("overflow_int64", lambda: np.array([[0, 2**61], [0, 0]], dtype=np.int64), {}, OverflowError,
     ["int64", str(2**61), "float64"]),
    ("negative_cycle", _negative_cycle, {}, apsp.NegativeCycleError, ["negative cycle", "(70 found)"]),
    ("negative_self_loop", _negative_self_loop, {}, apsp.NegativeCycleError,
     ["vertices found on negative closed walks: 1"]),
    ("none", lambda: None, {}, TypeError, ["square 2-D array", "NoneType"]),
    ("string", lambda: "abc", {}, TypeError, ["square 2-D array", "str"]),
    ("overwrite_float16", lambda: _g(np.float16), {"overwrite": True}, ValueError,
     ["overwrite=True", "float16"]),
    ("overwrite_int16", lambda: np.ones((3, 3), dtype=np.int16), {"overwrite": True}, ValueError,
     ["int16"]),
    ("overwrite_readonly", _readonly, {"overwrite": True}, ValueError, ["read-only"]),
    ("overwrite_fortran", _fortran, {"overwrite": True}, ValueError, ["rows are not contiguous", "(8, 560)"]),
    ("overwrite_transposed", lambda: _g().T, {"overwrite": True}, ValueError, ["not contiguous"]),
    ("overwrite_reversed", lambda: _g()[::-1], {"overwrite": True}, ValueError, ["row stride -560"]),
    ("overwrite_list", lambda: [[0.0, 1.0], [1.0, 0.0]], {"overwrite": True}, ValueError,
     ["overwrite=True", "list"]),
    ("overwrite_sparse", lambda: scipy.sparse.csr_matrix(_g()), {"overwrite": True}, ValueError,
     ["sparse"]),
    ("sparse_nan", _sparse_nan, {}, ValueError, ["graph[2, 3]", "NaN"]),
    ("sparse_non_square", lambda: scipy.sparse.csr_matrix((3, 5)), {}, ValueError, ["(3, 5)"]),
    ("sparse_complex", lambda: scipy.sparse.csr_matrix(np.eye(3, dtype=np.complex64)), {}, TypeError,
     ["complex64", ACCEPTED]),
    ("device_name", _g, {"device": "tpu"}, ValueError, ["'tpu'", "'cpu', 'cuda' or 'cuda:N'"]),
    ("device_index", _g, {"device": "cuda:x"}, ValueError, ["'cuda:x'"]),
    ("device_negative", _g, {"device": -1}, ValueError, ["-1"]),
    ("empty_device_name", lambda: np.zeros((0, 0)), {"device": "tpu"}, ValueError, ["'tpu'"]),
]


def _snapshot(graph):
    if scipy.sparse.issparse(graph):
        return graph.copy(), None
    if isinstance(graph, (np.ndarray, np.generic)):
        return graph.copy(), (graph.flags.writeable, graph.flags.c_contiguous, graph.strides)
    if isinstance(graph, list):
        return [list(r) for r in graph], None
    return graph, None  # None, a string: immutable


def _assert_unchanged(graph, snap):
    saved, flags = snap
    if scipy.sparse.issparse(graph):
        assert graph.format == saved.format and graph.nnz == saved.nnz
        np.testing.assert_array_equal(graph.toarray(), saved.toarray())
    elif isinstance(graph, (np.ndarray, np.generic)):
        np.testing.assert_array_equal(graph, saved)  # NaN == NaN here, so NaN cases compare too
        assert (graph.flags.writeable, graph.flags.c_contiguous, graph.strides) == flags
    elif isinstance(graph, list):
        assert [list(r) for r in graph] == saved
    else:
        assert graph is saved


@pytest.mark.parametrize(("make", "kwargs", "exc", "fragments"),
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_error_contract(device, make, kwargs, exc, fragments):
    graph = make()
    snap = _snapshot(graph)
    kwargs = {"device": device, **kwargs}
    with pytest.raises(exc) as info:
        apsp.solve(graph, **kwargs)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    _assert_unchanged(graph, snap)
    # The process stays usable: the next call on the same engine works.
    g = random_graph(np.random.default_rng(1), 65, np.float32)
    assert_matches_scipy(apsp.solve(g, device=device), g)


def test_fortran_order_overwrite_is_refused_for_its_layout_only(device):
    with pytest.raises(ValueError) as info:
        apsp.solve(_fortran(), overwrite=True, device=device)
    assert "not contiguous" in str(info.value) and "overlap" not in str(info.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_unaligned_input_is_solved_and_left_alone(device, dtype):
    g = _unaligned(dtype)
    before = g.copy()
    assert_matches_scipy(apsp.solve(g, device=device), before)
    np.testing.assert_array_equal(g, before)
    if dtype == np.float64:  # SciPy's drop-in: overwrite=True falls back to a copy, as in SciPy
        import scipy.sparse.csgraph as csgraph

        np.testing.assert_allclose(apsp.floyd_warshall(g, overwrite=True), csgraph.floyd_warshall(before))


def test_negative_cycle_vertices_and_input(device):
    g = _negative_cycle()
    with pytest.raises(apsp.NegativeCycleError) as info:
        apsp.solve(g, device=device, return_predecessors=True)
    assert {10, 40} <= set(info.value.vertices)


def test_overwrite_error_on_negative_cycle_may_write_but_raises(device):
    # With overwrite=True the caller gave the buffer away: the error is still raised, and the
    # next call works.
    g = _negative_cycle()
    with pytest.raises(apsp.NegativeCycleError):
        apsp.solve(g, overwrite=True, device=device)
    g = random_graph(np.random.default_rng(2), 65, np.int32)
    assert_matches_scipy(apsp.solve(g, device=device), g)


def test_cuda_without_a_gpu_is_a_runtime_error_naming_the_reason():
    facts = apsp.info()
    if facts["devices"]:
        pytest.skip("this machine has a usable GPU; the no-GPU path cannot be reached here")
    for g in (_g(), np.zeros((0, 0))):  # an empty graph too: the device is checked first
        for device in ("cuda", "cuda:0", 0):
            with pytest.raises(RuntimeError) as info:
                apsp.solve(g, device=device)
            assert facts["why_no_devices"] in str(info.value) and "device='cpu'" in str(info.value)


def test_no_driver_is_named_as_such():
    # Without libcuda the static CUDA runtime reports "driver version is insufficient", which
    # would send the user to update a driver that is not there.
    facts = apsp.info()
    try:
        ctypes.CDLL("libcuda.so.1")
        driver = True
    except OSError:
        driver = False
    if not facts["cuda_compiled"] or facts["devices"] or driver:
        pytest.skip("needs the CUDA engine built, on a machine without an NVIDIA driver")
    assert facts["why_no_devices"] == "no NVIDIA driver is installed (libcuda.so.1 was not found)"


# A list of devices (a solve split over GPUs) names GPUs only, each once; a device array's list
# starts with its own GPU (tests/test_gpu_engine.py, with the splits themselves).
@pytest.mark.parametrize("device, fragment", [
    ([], "names no device"),
    (["cpu"], "names GPUs only"),
    (("cuda:0", "cpu"), "names GPUs only"),
    (["cuda:0", ["cuda:1"]], "names GPUs only"),
    (["gpu0"], "is not a valid device"),
])
def test_device_lists_that_name_no_gpus_are_refused(device, fragment):
    g = _g()
    before = g.copy()
    with pytest.raises(ValueError, match=fragment):
        apsp.solve(g, device=device)
    np.testing.assert_array_equal(g, before)


def test_a_device_list_without_a_gpu_says_why():
    if apsp.info()["devices"]:
        pytest.skip("this machine has a usable GPU (the GPU tier splits over two)")
    with pytest.raises(RuntimeError, match="no GPU is usable"):
        apsp.solve(_g(), device=["cuda:0", "cuda:1"])


def test_cli_reads_gpus_written_with_commas():
    from apsp.__main__ import _device_arg

    assert _device_arg("cuda:0, cuda:1") == ["cuda:0", "cuda:1"]
    assert _device_arg("cuda:1") == "cuda:1"


@pytest.mark.gpu
def test_cuda_index_out_of_range_names_the_usable_devices():
    count = len(apsp.info()["devices"])
    with pytest.raises(ValueError) as info:
        apsp.solve(_g(), device=f"cuda:{count}")
    assert f"{count} usable GPU" in str(info.value)


def test_host_results_past_the_available_memory_are_refused_with_the_bytes():
    # n = 10^6: a float64 result needs 8 TB. The input is one value broadcast (no memory), so
    # only the refusal can answer, before anything is allocated or the OOM killer steps in.
    n = 10**6
    g = np.broadcast_to(np.float64(1.0), (n, n))
    with pytest.raises(MemoryError, match=r"n=1000000 with a new float64 result needs 7450\.6 GiB"):
        apsp.solve(g, device="cpu")
    with pytest.raises(MemoryError, match="and int32 predecessors needs 11175.9 GiB"):
        apsp.floyd_warshall(g, return_predecessors=True)
    sparse = scipy.sparse.csr_matrix((n, n), dtype=np.float32)
    with pytest.raises(MemoryError, match="with a new float32 result needs 3725.3 GiB"):
        apsp.solve(sparse, device="cpu")
    with pytest.raises(MemoryError, match=r"n=1000000 with int32 predecessors needs 3725\.3 GiB"):
        apsp.solve(g, overwrite=True, return_predecessors=True, device="cpu")  # in place: pred only
    assert apsp.solve(np.ones((3, 3)), device="cpu").tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
