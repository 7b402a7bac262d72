"""The public surface besides solve: apsp.info, apsp.validate, apsp.path, the exported names,
their docstrings, and the py.typed marker."""
from __future__ import annotations

import importlib.resources
import inspect

import numpy as np
import pytest
import scipy.sparse

import apsp
from apsp._validate import compare_with_scipy
from graphs import random_graph


def test_public_names_have_docstrings():
    assert sorted(apsp.__all__) == sorted(["INT32_INF", "INT64_INF", "NegativeCycleError",
                                           "VALIDATE_MAX_N", "floyd_warshall", "info", "io", "path",
                                           "solve", "solve_batch", "validate"])
    for name in apsp.__all__:
        obj = getattr(apsp, name)
        if callable(obj) or inspect.ismodule(obj):
            assert inspect.getdoc(obj), f"apsp.{name} has no docstring"
    for name in ("read_graph", "write_distances", "write_graph"):
        assert inspect.getdoc(getattr(apsp.io, name))
    assert isinstance(apsp.__version__, str)


def test_solve_signature_is_keyword_only():
    params = inspect.signature(apsp.solve).parameters
    assert list(params) == ["graph", "directed", "unweighted", "return_predecessors", "overwrite",
                            "device", "progress", "check"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for name, p in params.items() if name != "graph")
    fw = inspect.signature(apsp.floyd_warshall).parameters
    assert list(fw) == ["csgraph", "directed", "return_predecessors", "unweighted", "overwrite"]


def test_py_typed_marker_is_installed():
    assert importlib.resources.files("apsp").joinpath("py.typed").is_file()


def test_info_keys_and_types():
    facts = apsp.info()
    assert {"version", "cuda_compiled", "cuda_build", "cpu_threads", "devices",
            "why_no_devices"} <= set(facts)
    assert facts["version"] == apsp.__version__
    assert isinstance(facts["cuda_compiled"], bool) and isinstance(facts["cuda_build"], str)
    assert isinstance(facts["cpu_threads"], int) and facts["cpu_threads"] >= 1
    assert isinstance(facts["devices"], list)
    if facts["devices"]:
        assert facts["why_no_devices"] is None
        for i, d in enumerate(facts["devices"]):
            assert d["index"] == i and d["name"] and d["total_memory"] > 0
            assert d["free_memory"] is None or d["total_memory"] >= d["free_memory"] > 0
            assert len(d["compute_capability"]) == 2 and d["multiprocessors"] > 0
    else:
        assert isinstance(facts["why_no_devices"], str) and facts["why_no_devices"]
    facts["devices"].append("scribble")  # a fresh dict each call: callers cannot corrupt it
    assert "scribble" not in apsp.info()["devices"]



def test_info_text_names_free_memory_or_says_it_is_unknown():
    from apsp._info import format_info

    gpu = {"index": 0, "name": "Some GPU", "compute_capability": (9, 0), "multiprocessors": 132,
           "total_memory": 80 * 2**30}
    facts = {"version": "0", "cuda_compiled": True, "cuda_build": "nvcc", "cpu_threads": 2,
             "devices": [dict(gpu, free_memory=60 * 2**30), dict(gpu, index=1, free_memory=None)],
             "why_no_devices": None}
    text = format_info(facts)
    assert "GPU cuda:0: Some GPU (sm_90, 132 SMs, 60.0 of 80.0 GiB free)" in text
    assert "GPU cuda:1: Some GPU (sm_90, 132 SMs, 80.0 GiB, free memory unknown)" in text

LISTING_CHILD = """
import ctypes, json
import numpy as np
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0

def has_context(ordinal):
    dev, flags, active = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
    assert cuda.cuDeviceGet(ctypes.byref(dev), ordinal) == 0
    assert cuda.cuDevicePrimaryCtxGetState(dev, ctypes.byref(flags), ctypes.byref(active)) == 0
    return bool(active.value)

import apsp
facts = apsp.info()
apsp._devices.default_host_target()  # the choice for a host array
listed = [has_context(i) for i in range(len(facts["devices"]))]
apsp.solve(np.zeros((3, 3), np.float32), device="cuda:0")
print(json.dumps({"listed": listed, "solved": has_context(0),
                  "free": [d["free_memory"] for d in facts["devices"]]}))
"""


@pytest.mark.gpu
def test_listing_devices_makes_no_cuda_context():
    """apsp.info() and the device choice for a host array make no CUDA context (each holds about
    500 MB of a GPU for the process's life); a solve makes one on its own GPU. Free memory comes
    from NVML, which is there wherever its library loads."""
    import ctypes
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", LISTING_CHILD], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["listed"] and not any(got["listed"]), got
    assert got["solved"], got
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return
    assert all(isinstance(f, int) and f > 0 for f in got["free"]), got


# ---- validate ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.int32, np.int64, np.int8))
def test_validate_agrees(device, dtype):
    g = random_graph(np.random.default_rng(1), 90, dtype if dtype is not np.int8 else np.int32,
                     zero_frac=0.2)
    if dtype is np.int8:
        g = np.where(g == apsp.INT32_INF, 100, g).astype(np.int8)  # int8 has no INF: all edges
    assert apsp.validate(g, device=device) == 0.0
    assert apsp.validate(g, directed=False, device=device) == 0.0
    assert apsp.validate(g, unweighted=True, device=device) == 0.0


def test_validate_sparse_and_lists(device):
    sp = scipy.sparse.random(50, 50, density=0.1, format="csr", random_state=0)
    assert apsp.validate(sp, device=device) == 0.0
    assert apsp.validate([[0, 1.5], [np.inf, 0]], device=device) == 0.0
    with pytest.raises(TypeError, match="NoneType"):
        apsp.validate(None, device=device)


def test_validate_float_difference_is_within_the_stated_tolerance(device):
    g = np.random.default_rng(2).uniform(0.1, 1.0, size=(80, 80)).astype(np.float32)
    diff = apsp.validate(g, device=device)
    assert 0.0 <= diff <= 2 * 80 * np.finfo(np.float32).eps * 79 * 1.0


def test_validate_refuses_large_n_before_computing():
    n = apsp.VALIDATE_MAX_N + 1
    big = np.broadcast_to(np.float32(1.0), (n, n))  # no n^2 memory: it must refuse first
    with pytest.raises(ValueError, match=f"n={n}"):
        apsp.validate(big)
    sp = scipy.sparse.csr_matrix((n, n))
    with pytest.raises(ValueError, match=str(apsp.VALIDATE_MAX_N)):
        apsp.validate(sp)


def test_validate_refuses_kwargs_it_cannot_honour():
    g = np.zeros((3, 3))
    for kw, error in (({"return_predecessors": True}, ValueError), ({"overwrite": True}, ValueError),
                      ({"bogus": 1}, TypeError)):
        with pytest.raises(error, match=next(iter(kw))):
            apsp.validate(g, **kw)


def test_validate_negative_cycles(device):
    g = np.array([[0, 1.0, np.inf], [np.inf, 0, 1.0], [-3.0, np.inf, 0]])
    with pytest.raises(apsp.NegativeCycleError):  # both agree there is one: nothing to compare
        apsp.validate(g, device=device)
    with pytest.raises(apsp.NegativeCycleError):  # a negative self-loop counts as one
        apsp.validate(np.array([[-1.0, 1.0], [1.0, 0.0]]), device=device)


def test_compare_reports_the_first_mismatch():
    # validate() = compare_with_scipy(graph, solve(graph)). Feed the comparison a result that is
    # wrong in one place, as a broken engine would produce, and it must name that place.
    g = random_graph(np.random.default_rng(3), 40, np.int32)
    good = apsp.solve(g, device="cpu")
    assert compare_with_scipy(g, good) == 0.0
    bad = good.copy()
    bad[7, 11] += 1
    with pytest.raises(AssertionError, match=r"differ at \(7, 11\): apsp %d, SciPy %r" % (bad[7, 11], float(good[7, 11]))):
        compare_with_scipy(g, bad)
    unreachable = g.copy()
    unreachable[:, 5] = apsp.INT32_INF
    dist = apsp.solve(unreachable, device="cpu")
    wrong = dist.copy()
    wrong[0, 5] = 3  # claims a path where there is none
    with pytest.raises(AssertionError, match=r"\(0, 5\)"):
        compare_with_scipy(unreachable, wrong)
    fg = g.astype(np.float64)
    fg[fg == apsp.INT32_INF] = np.inf
    fdist = apsp.solve(fg, device="cpu")
    i, j = np.argwhere(np.isfinite(fdist) & (fdist > 0))[0]
    fdist[i, j] += 1e-3  # far beyond 2 n eps scale (~7e-11 here) for float64
    with pytest.raises(AssertionError, match=rf"\({i}, {j}\)"):
        compare_with_scipy(fg, fdist)


def test_compare_reports_a_disagreement_about_negative_cycles():
    g = np.array([[0, 1.0], [-2.0, 0]])
    with pytest.raises(AssertionError, match="SciPy finds a negative cycle"):
        compare_with_scipy(g, np.zeros((2, 2)))
    fine = np.array([[0, 1.0], [2.0, 0]])
    with pytest.raises(AssertionError, match="SciPy finds none"):
        compare_with_scipy(fine, apsp.NegativeCycleError("made up", [0]))


# ---- path -------------------------------------------------------------------------------------
def test_path_cases():
    g = np.array([[0, 1, np.inf], [np.inf, 0, 2], [np.inf, np.inf, 0]])
    _, pred = apsp.solve(g, return_predecessors=True, device="cpu")
    assert apsp.path(pred, 0, 2) == [0, 1, 2]
    assert apsp.path(pred, 0, 1) == [0, 1]
    assert apsp.path(pred, 2, 0) == []  # unreachable
    assert apsp.path(pred, 1, 1) == [1]  # i == j
    assert apsp.path(pred, np.int64(0), np.int32(2)) == [0, 1, 2]
    assert apsp.path(pred.tolist(), 0, 2) == [0, 1, 2]  # nested lists, as apsp.solve takes them
    for i, j in ((3, 0), (0, -1), (0, 1.0), ("0", 1), (True, 2), (0, np.True_)):
        with pytest.raises(IndexError, match="is not a vertex of this 3-vertex graph"):
            apsp.path(pred, i, j)
    with pytest.raises(ValueError, match=r"\(3, 2\)"):
        apsp.path(pred[:, :2], 0, 1)


def test_path_detects_an_inconsistent_pred():
    pred = np.array([[-9999, 2, 1], [-9999, -9999, -9999], [-9999, -9999, -9999]], dtype=np.int32)
    with pytest.raises(ValueError, match="inconsistent at row 0"):
        apsp.path(pred, 0, 1)  # 1 <- 2 <- 1 <- ... never reaches 0
    pred[0, 1] = 7  # not a vertex at all
    with pytest.raises(ValueError, match="inconsistent at row 0"):
        apsp.path(pred, 0, 1)


def test_compare_leaves_the_diagonal_out_of_its_tolerance():
    # a huge diagonal weight is ignored by both solvers; it must not widen the tolerance so far
    # that a wrong off-diagonal result passes
    g = np.array([[1e300, 1.0], [1.0, 0.0]])
    with pytest.raises(AssertionError, match=r"differ at \(0, 1\)"):
        compare_with_scipy(g, np.array([[0.0, 12345.0], [1.0, 0.0]]))
