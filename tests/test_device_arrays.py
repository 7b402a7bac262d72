"""Device arrays in and out (issue 4): DLPack capsules (versioned and legacy), the CUDA array
interface, torch and CuPy inputs on the caller's stream, output kind, in place, errors.

CPU tier: capsule consumption rules with NumPy's producer, host DLPack producers, the CUDA array
interface's layout and dtype checks (they run before any pointer is touched), torch CPU tensors
when torch is installed. GPU tier (`-m gpu`): everything else, against SciPy's reference.
Weights are small integers, so every float sum is exact and results are compared for equality.
"""
from __future__ import annotations

import ctypes
import sys
import time

import numpy as np
import pytest
from scipy.sparse.csgraph import floyd_warshall

import apsp
from apsp import _core
from apsp._intake import classify
from graphs import CAIOnly, assert_chains_lead_back

DTYPES = ["float32", "float64", "int32", "int64"]
INF = {"int32": apsp.INT32_INF, "int64": apsp.INT64_INF}


# ---- graphs and the reference ------------------------------------------------------------------

def random_weights(rng: np.random.Generator, n: int, density: float = 0.3) -> np.ndarray:
    """float64 weights 1..9 with +inf for no edge (no zeros: SciPy's dense input reads 0 as none)."""
    w = rng.integers(1, 10, size=(n, n)).astype(np.float64)
    w[rng.random((n, n)) >= density] = np.inf
    return w


def as_dtype(w: np.ndarray, dtype: str) -> np.ndarray:
    if dtype in INF:
        return np.where(np.isinf(w), INF[dtype], w).astype(dtype)
    return w.astype(dtype)


def expected(w: np.ndarray, dtype: str) -> np.ndarray:
    return as_dtype(floyd_warshall(w, directed=True), dtype)


def check_predecessors(w: np.ndarray, dist: np.ndarray, pred: np.ndarray) -> None:
    """pred[i, j] is a vertex k with dist[i, k] + w[k, j] == dist[i, j], -9999 where none."""
    n = w.shape[0]
    d = floyd_warshall(w, directed=True)
    reach = np.isfinite(d) & ~np.eye(n, dtype=bool)
    assert np.all(pred[~reach] == -9999)
    i, j = np.nonzero(reach)
    k = pred[i, j]
    assert np.all((k >= 0) & (k < n))
    np.testing.assert_array_equal(d[i, k] + w[k, j], d[i, j])


# ---- CPU tier: DLPack capsules with NumPy's producer ------------------------------------------

def intake_directly(cap) -> None:
    _core.DeviceArray(cap, False)


def intake_by_solve_array(cap) -> None:
    _core.solve_array(cap, None, 0, True, False, False, False, None)


@pytest.mark.parametrize("intake", [intake_directly, intake_by_solve_array])
@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
def test_capsule_consumed_once_when_refused(versioned: bool, intake) -> None:
    """A refused capsule is still consumed: renamed to its used_ name and its deleter called once
    (NumPy's deleter drops the reference the capsule held on the array)."""
    a = np.zeros((4, 4))
    cap = a.__dlpack__(max_version=(1, 0)) if versioned else a.__dlpack__()
    name = "dltensor_versioned" if versioned else "dltensor"
    assert f'"{name}"' in repr(cap)
    held = sys.getrefcount(a)
    with pytest.raises(ValueError, match="lives on CPU"):
        intake(cap)
    assert f'"used_{name}"' in repr(cap)
    assert sys.getrefcount(a) == held - 1  # the deleter ran
    with pytest.raises(ValueError, match="already consumed"):
        intake(cap)
    del cap  # a used capsule's destructor must not run the deleter again
    assert sys.getrefcount(a) == held - 1


def test_not_a_capsule() -> None:
    with pytest.raises(TypeError, match="DLPack capsule or a __cuda_array_interface__ dict"):
        _core.DeviceArray(np.zeros((2, 2)), False)


def test_device_dtypes_come_from_the_core() -> None:
    assert _core.DEVICE_DTYPES == tuple(DTYPES)
    with pytest.raises(TypeError, match="float16.*float32, float64, int32, int64"):
        _core.check_device_dtype("float16")


# ---- CPU tier: the CUDA array interface's checks (all before the pointer is looked up) ---------

def cai(shape=(4, 4), typestr="<f4", strides=None, version=3, **extra) -> dict:
    d = {"shape": shape, "typestr": typestr, "data": (4096, False), "strides": strides,
         "version": version}
    d.update(extra)
    return d


@pytest.mark.parametrize("shape", [(4, 5), (4,), (2, 2, 2)])
def test_cai_shape_refused(shape: tuple) -> None:
    with pytest.raises(ValueError, match=r"square 2-D \(n, n\) array, got shape"):
        _core.DeviceArray(cai(shape=shape), False)


@pytest.mark.parametrize("typestr,name", [("<f2", "float16"), ("|b1", "bool"), ("|u1", "uint8"),
                                          ("<c8", "complex64"), (">f4", "'>f4'")])
def test_cai_dtype_refused(typestr: str, name: str) -> None:
    with pytest.raises(TypeError, match=f"dtype {name}.*accepted: float32"):
        _core.DeviceArray(cai(typestr=typestr), False)


@pytest.mark.parametrize("strides", [(4, 16), (16, 8), (8, 4)], ids=["transposed", "gapped", "overlapping"])
def test_cai_rows_must_be_contiguous(strides: tuple) -> None:
    with pytest.raises(ValueError, match="rows are not contiguous.*stride"):
        _core.DeviceArray(cai(strides=strides), False)


def test_cai_mask_and_version_refused() -> None:
    with pytest.raises(ValueError, match="mask"):
        _core.DeviceArray(cai(mask=object()), False)
    with pytest.raises(ValueError, match="version 4"):
        _core.DeviceArray(cai(version=4), False)
    with pytest.raises(ValueError, match="no 'typestr'"):
        _core.DeviceArray({"shape": (2, 2), "version": 2, "data": (4096, False)}, False)


@pytest.mark.parametrize("entry,fragment", [
    ({"version": None}, r"'version' is None; the interface asks for an int"),
    ({"data": (None, False)}, r"'data' is \(None, False\); the interface asks for \(pointer, "),
    ({"data": (-8, False)}, r"'data' is \(-8, False\)"),
    ({"typestr": 5}, r"'typestr' is 5; the interface asks for a string"),
    ({"shape": [4, 4]}, r"'shape' is \[4, 4\]; the interface asks for a tuple of ints"),
    ({"strides": (17, 4)}, r"strides \(17, 4\) \(bytes\) are not multiples of its 4-byte items"),
    ({"stream": -1}, r"stream -1, which names no CUDA stream"),
    ({"stream": "s"}, r"'stream' is 's'; the interface asks for None or an int"),
], ids=["version", "data", "negative_pointer", "typestr", "shape", "strides", "stream", "stream_str"])
def test_cai_malformed_entries_are_named(entry: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        _core.DeviceArray(cai(**entry), False)


def test_capsule_without_a_name_is_refused() -> None:
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    cap = new_capsule(ctypes.c_void_p(4096), None, None)
    with pytest.raises(TypeError, match="a capsule with no name"):
        _core.DeviceArray(cap, False)


# ---- CPU tier: classification and host DLPack producers ---------------------------------------

class HostDLPack:
    """A host array known only through DLPack (no buffer protocol, no __array__)."""

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class FakeCAI:
    """Carries a __cuda_array_interface__ (never read by classify: a property on the class)."""

    @property
    def __cuda_array_interface__(self):  # pragma: no cover - reading it would be the bug
        raise AssertionError("classify evaluated the interface")


def test_classify() -> None:
    assert classify(np.zeros((2, 2))) == "host"
    assert classify(HostDLPack(np.zeros((2, 2)))) == "host"
    assert classify(FakeCAI()) == "device"
    assert classify([[0.0, 1.0], [1.0, 0.0]]) == "host"


def test_host_dlpack_producer(rng: np.random.Generator) -> None:
    w = random_weights(rng, 37)
    before = w.copy()
    out = apsp.solve(HostDLPack(w), device="cpu")
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, expected(w, "float64"))
    np.testing.assert_array_equal(w, before)


def test_validate_takes_a_host_dlpack_producer(rng: np.random.Generator) -> None:
    w = random_weights(rng, 37)
    assert apsp.validate(HostDLPack(w), device="cpu") < 1e-9
    w[3, 5], w[5, 3] = -50.0, 1.0
    with pytest.raises(apsp.NegativeCycleError) as info:  # a cycle, named from the producer
        apsp.validate(HostDLPack(w), device="cpu")
    assert info.value.cycle in ([3, 5], [5, 3])


def test_check_keyword_accepted_for_host_input(rng: np.random.Generator) -> None:
    w = random_weights(rng, 9)
    np.testing.assert_array_equal(apsp.solve(w, device="cpu", check=False), expected(w, "float64"))


# ---- CPU tier: torch CPU tensors ----------------------------------------------------------------

def torch_or_skip():
    return pytest.importorskip("torch", reason="torch is not installed (pip install torch to run "
                                               "the torch tests)")


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_cpu_tensor(rng: np.random.Generator, dtype: str) -> None:
    torch = torch_or_skip()
    w = random_weights(rng, 33)
    t = torch.from_numpy(as_dtype(w, dtype))
    before = t.clone()
    out = apsp.solve(t, device="cpu")
    assert isinstance(out, torch.Tensor) and out.device.type == "cpu"
    assert str(out.dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(out.numpy(), expected(w, dtype))
    assert torch.equal(t, before)


def test_torch_cpu_in_place_and_requires_grad(rng: np.random.Generator) -> None:
    torch = torch_or_skip()
    w = random_weights(rng, 20)
    t = torch.tensor(w, requires_grad=True)
    out = apsp.solve(t, device="cpu")
    assert not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), expected(w, "float64"))
    u = torch.from_numpy(w.copy())
    assert apsp.solve(u, device="cpu", overwrite=True) is u
    np.testing.assert_array_equal(u.numpy(), expected(w, "float64"))


def subtensor_class(torch):
    """A torch.Tensor subclass defined outside torch's modules (torch's own ops keep it)."""
    return type("SubTensor", (torch.Tensor,), {"__module__": __name__})


def test_torch_cpu_in_place_tells_autograd(rng: np.random.Generator) -> None:
    """overwrite=True on a host tensor bumps its version, so a graph that saved it raises in
    backward instead of using the overwritten values; also when a negative cycle follows."""
    torch = torch_or_skip()
    w = random_weights(rng, 12)
    a = torch.tensor(w, requires_grad=True)
    t = a * 1
    y = (t * t).sum()
    version = t._version
    assert apsp.solve(t, device="cpu", overwrite=True) is t
    assert t._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    c = torch.tensor([[0.0, 1.0], [-2.0, 0.0]])
    version = c._version
    with pytest.raises(apsp.NegativeCycleError):
        apsp.solve(c, device="cpu", overwrite=True)
    assert c._version > version
    nan = torch.tensor([[0.0, float("nan")], [1.0, 0.0]])  # refused before anything is written
    version = nan._version
    with pytest.raises(ValueError, match="NaN"):
        apsp.solve(nan, device="cpu", overwrite=True)
    assert nan._version == version


def test_torch_cpu_subclasses_sparse_and_negated_views(rng: np.random.Generator) -> None:
    torch = torch_or_skip()
    w = random_weights(rng, 15)
    sub = subtensor_class(torch)
    t = torch.tensor(w).as_subclass(sub)
    dist, pred = apsp.solve(t, device="cpu", return_predecessors=True)
    assert type(dist) is sub and type(pred) is sub
    np.testing.assert_array_equal(dist.numpy(), expected(w, "float64"))
    graded = torch.tensor(w, requires_grad=True).as_subclass(sub)  # data, as for plain tensors
    np.testing.assert_array_equal(apsp.solve(graded, device="cpu").detach().numpy(),
                                  expected(w, "float64"))
    param = torch.nn.Parameter(torch.tensor(w))  # turns torch functions off: plain results
    assert type(apsp.solve(param, device="cpu")) is torch.Tensor
    with pytest.raises(TypeError, match=r"layout torch.sparse_coo.*to_dense\(\)"):
        apsp.solve(torch.tensor(w).to_sparse(), device="cpu")
    with pytest.raises(TypeError, match="dtype bfloat16, which apsp does not compute in; accepted"):
        apsp.solve(torch.tensor(w).to(torch.bfloat16), device="cpu")
    negated = torch._neg_view(torch.tensor(-w))  # reads as w; its memory holds -w
    np.testing.assert_array_equal(apsp.solve(negated, device="cpu").numpy(),
                                  expected(w, "float64"))
    with pytest.raises(ValueError, match="overwrite=True cannot write into a"):
        apsp.solve(negated, device="cpu", overwrite=True)


# ---- GPU tier -----------------------------------------------------------------------------------

gpu = pytest.mark.gpu


def cuda_torch():
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip("torch is installed without CUDA support")
    return torch


def cupy_or_skip():
    return pytest.importorskip("cupy", reason="CuPy is not installed")


SPIN_CYCLES = 400_000_000  # ~0.2 s at ~2 GHz: long enough that a host wait would show


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 65, 300])
def test_torch_on_a_side_stream(rng: np.random.Generator, dtype: str, n: int) -> None:
    torch = cuda_torch()
    w = random_weights(rng, n)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.from_numpy(as_dtype(w, dtype)).cuda()
        dist, pred = apsp.solve(t, return_predecessors=True)
        host, host_pred = dist.cpu(), pred.cpu()  # ordered on s: no user-side synchronize
        unchanged = bool(torch.equal(t.cpu(), torch.from_numpy(as_dtype(w, dtype))))
    assert isinstance(dist, torch.Tensor) and dist.device == t.device and dist.dtype == t.dtype
    assert pred.dtype == torch.int32 and pred.device == t.device
    np.testing.assert_array_equal(host.numpy(), expected(w, dtype))
    check_predecessors(w, host.numpy().astype(np.float64), host_pred.numpy())
    assert unchanged, "the input changed although overwrite=False"


@gpu
def test_torch_work_is_ordered_on_the_callers_stream(rng: np.random.Generator) -> None:
    """The graph is written on a busy side stream right before the call; apsp must read it after
    that write (same stream), and with check=False must return before the stream gets there."""
    torch = cuda_torch()
    n = 200
    w = random_weights(rng, n)
    src = torch.from_numpy(w.astype(np.float32)).cuda()
    apsp.solve(src.clone(), check=False)  # first use loads the kernels, which may wait on the GPU
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.zeros((n, n), device="cuda")  # an early read would solve all-zero weights
        torch.cuda._sleep(SPIN_CYCLES)
        t.copy_(src)
        start = time.perf_counter()
        out = apsp.solve(t, check=False)
        returned = time.perf_counter() - start
        spinning = not s.query()
        host = out.cpu()
    assert spinning and returned < 0.05, f"apsp.solve(check=False) waited {returned:.3f} s"
    np.testing.assert_array_equal(host.numpy(), expected(w, "float32"))


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_cupy_on_a_side_stream(rng: np.random.Generator, dtype: str) -> None:
    cupy = cupy_or_skip()
    torch = cuda_torch()  # torch.cuda._sleep keeps CuPy's stream busy without compiling a kernel
    w = random_weights(rng, 130)
    src = cupy.asarray(as_dtype(w, dtype))
    cupy.cuda.Device().synchronize()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        a = cupy.zeros_like(src)
        with torch.cuda.stream(torch.cuda.ExternalStream(s.ptr)):
            torch.cuda._sleep(SPIN_CYCLES // 4)  # a solve on another stream would read the zeros
        a[...] = src
        dist, pred = apsp.solve(a, return_predecessors=True)
        host, host_pred = cupy.asnumpy(dist), cupy.asnumpy(pred)  # ordered on the stream
        before = cupy.asnumpy(a)
    assert isinstance(dist, cupy.ndarray) and dist.dtype == a.dtype and dist.device == a.device
    assert isinstance(pred, cupy.ndarray) and pred.dtype == cupy.int32
    np.testing.assert_array_equal(host, expected(w, dtype))
    check_predecessors(w, host.astype(np.float64), host_pred)
    np.testing.assert_array_equal(before, as_dtype(w, dtype))


@gpu
def test_cupy_work_is_ordered_on_the_callers_stream(rng: np.random.Generator) -> None:
    cupy = cupy_or_skip()
    torch = cuda_torch()  # torch.cuda._sleep keeps CuPy's stream busy without compiling a kernel
    n = 200
    w = random_weights(rng, n)
    src = cupy.asarray(w.astype(np.float32))
    apsp.solve(src.copy(), check=False)  # first use loads the kernels, which may wait on the GPU
    cupy.cuda.Device().synchronize()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        a = cupy.zeros((n, n), dtype=cupy.float32)
        with torch.cuda.stream(torch.cuda.ExternalStream(s.ptr)):
            torch.cuda._sleep(SPIN_CYCLES)
        a[...] = src
        start = time.perf_counter()
        out = apsp.solve(a, check=False)
        returned = time.perf_counter() - start
        spinning = not s.done
        host = cupy.asnumpy(out)
    assert spinning and returned < 0.05, f"apsp.solve(check=False) waited {returned:.3f} s"
    np.testing.assert_array_equal(host, expected(w, "float32"))


@gpu
@pytest.mark.parametrize("overwrite", [False, True])
def test_torch_sub_view_leading_dimension(rng: np.random.Generator, overwrite: bool) -> None:
    torch = cuda_torch()
    n, pad = 70, 9
    w = random_weights(rng, n)
    big = torch.full((n, n + pad), -7.0, device="cuda")
    big[:, :n] = torch.from_numpy(w.astype(np.float32))
    view = big[:, :n]
    assert view.stride() == (n + pad, 1)
    out = apsp.solve(view, overwrite=overwrite)
    assert (out is view) == overwrite
    np.testing.assert_array_equal(out.cpu().numpy(), expected(w, "float32"))
    assert bool((big[:, n:] == -7.0).all()), "apsp wrote outside the view"
    if not overwrite:
        np.testing.assert_array_equal(view.cpu().numpy(), w.astype(np.float32))


@gpu
def test_non_contiguous_inputs(rng: np.random.Generator) -> None:
    torch = cuda_torch()
    w = random_weights(rng, 50)
    t = torch.from_numpy(w.astype(np.float32)).cuda().T  # strides (1, n)
    out = apsp.solve(t)  # copied to a contiguous tensor (documented)
    np.testing.assert_array_equal(out.cpu().numpy(), expected(w.T.copy(), "float32"))
    with pytest.raises(ValueError, match="rows are not contiguous.*overwrite=False"):
        apsp.solve(t, overwrite=True)
    every_other = torch.from_numpy(w.astype(np.float32)).cuda()[::2, ::2]
    np.testing.assert_array_equal(apsp.solve(every_other).cpu().numpy(),
                                  expected(w[::2, ::2].copy(), "float32"))


@gpu
def test_cupy_non_contiguous_and_sub_view(rng: np.random.Generator) -> None:
    cupy = cupy_or_skip()
    w = random_weights(rng, 40)
    a = cupy.asarray(w)
    np.testing.assert_array_equal(cupy.asnumpy(apsp.solve(a.T)), expected(w.T.copy(), "float64"))
    with pytest.raises(ValueError, match="rows are not contiguous"):
        apsp.solve(a.T, overwrite=True)
    big = cupy.full((40, 47), -7.0)
    big[:, :40] = a
    out = apsp.solve(big[:, :40], overwrite=True)
    np.testing.assert_array_equal(cupy.asnumpy(big[:, :40]), expected(w, "float64"))
    assert bool((big[:, 40:] == -7.0).all())
    assert out.data.ptr == big.data.ptr


class StreamOrderedHighWater:
    """The most bytes in use at once from the device's default memory pool (the one the engine's
    stream-ordered scratch, cudaMallocAsync, comes from) since reset(): the driver's own count,
    read through libcuda, so no allocation of apsp's can hide from it."""
    USED_MEM_HIGH = 8  # CU_MEMPOOL_ATTR_USED_MEM_HIGH (cuda.h), a cuuint64_t

    def __init__(self, device: int = 0) -> None:
        import ctypes

        self._ct = ctypes
        self._cuda = ctypes.CDLL("libcuda.so.1")
        dev, self._pool = ctypes.c_int(), ctypes.c_void_p()
        assert self._cuda.cuDeviceGet(ctypes.byref(dev), device) == 0
        assert self._cuda.cuDeviceGetDefaultMemPool(ctypes.byref(self._pool), dev) == 0

    def counts(self) -> bool:
        """Whether a 1 MiB stream-ordered allocation of our own shows in the count (the control)."""
        self.reset()
        ptr, size = self._ct.c_uint64(), 1 << 20
        assert self._cuda.cuMemAllocAsync(self._ct.byref(ptr), self._ct.c_size_t(size), None) == 0
        assert self._cuda.cuMemFreeAsync(ptr, None) == 0
        assert self._cuda.cuStreamSynchronize(None) == 0
        return self.bytes() >= size

    def reset(self) -> None:
        zero = self._ct.c_uint64(0)
        assert self._cuda.cuMemPoolSetAttribute(self._pool, self.USED_MEM_HIGH, self._ct.byref(zero)) == 0

    def bytes(self) -> int:
        value = self._ct.c_uint64()
        assert self._cuda.cuMemPoolGetAttribute(self._pool, self.USED_MEM_HIGH, self._ct.byref(value)) == 0
        return value.value


def torch_peak_growth(torch, call):
    """(call(), the most bytes torch's allocator held during it beyond what it held before)."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    out = call()
    torch.cuda.synchronize()
    return out, torch.cuda.max_memory_allocated() - base


@gpu
def test_torch_in_place_allocates_no_n_squared(rng: np.random.Generator) -> None:
    torch = cuda_torch()
    n = 2048
    w = random_weights(rng, n, density=0.01)
    t = torch.from_numpy(w.astype(np.float32)).cuda()
    pool = StreamOrderedHighWater(t.device.index)
    assert pool.counts(), "the driver's high-water count did not see a 1 MiB allocation"
    pool.reset()
    out, grown = torch_peak_growth(torch, lambda: apsp.solve(t, overwrite=True))
    assert out is t
    assert grown < n * n * 4 // 16, f"overwrite=True allocated {grown} bytes through torch"
    scratch = pool.bytes()
    assert scratch < n * n * 4 // 16, f"overwrite=True took {scratch} bytes of stream-ordered scratch"
    np.testing.assert_array_equal(t.cpu().numpy(), expected(w, "float32"))
    # Predecessors: exactly one new n x n int32 tensor.
    t.copy_(torch.from_numpy(w.astype(np.float32)))
    _, grown = torch_peak_growth(torch, lambda: apsp.solve(t, overwrite=True, return_predecessors=True))
    assert grown <= n * n * 4 + 512, f"predecessors took {grown} bytes through torch"


@gpu
def test_torch_out_of_memory_is_memory_error_and_next_call_works(rng: np.random.Generator) -> None:
    # torch's own limit for this process (no memory is taken from other tests on the GPU): room
    # for the input and 1 MiB more, so the 64 MiB result cannot be allocated.
    torch = cuda_torch()
    n = 4096
    w = random_weights(rng, n, density=0.001)
    t = torch.from_numpy(w.astype(np.float32)).cuda()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()  # no cached block left that could hold the result
    total = torch.cuda.get_device_properties(t.device).total_memory
    torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_reserved() + (1 << 20)) / total)
    try:
        with pytest.raises(MemoryError) as info:
            apsp.solve(t)
        text = str(info.value)
        assert f"needs {n * n * 4} bytes" in text and "bytes free" in text
        assert "overwrite=True" in text
        with pytest.raises(MemoryError, match=f"needs {n * n * 8} bytes"):  # distances + predecessors
            apsp.solve(t, return_predecessors=True)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    ws = random_weights(rng, 40)
    np.testing.assert_array_equal(apsp.solve(torch.from_numpy(ws.astype(np.float32)).cuda()).cpu().numpy(),
                                  expected(ws, "float32"))


@gpu
def test_cupy_out_of_memory_is_memory_error_and_next_call_works(rng: np.random.Generator) -> None:
    cupy = cupy_or_skip()
    n = 2048
    w = random_weights(rng, n, density=0.001)
    a = cupy.asarray(w.astype(np.float32))
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()  # no cached block left that could hold the result
    old_limit = pool.get_limit()
    pool.set_limit(size=pool.used_bytes() + (1 << 20))  # CuPy's own limit, for this process only
    try:
        with pytest.raises(MemoryError) as info:
            apsp.solve(a)
        assert f"needs {n * n * 4} bytes" in str(info.value) and "overwrite=True" in str(info.value)
    finally:
        pool.set_limit(size=old_limit)
    ws = random_weights(rng, 40)
    np.testing.assert_array_equal(cupy.asnumpy(apsp.solve(cupy.asarray(ws.astype(np.float32)))),
                                  expected(ws, "float32"))


@gpu
def test_torch_requires_grad_is_data(rng: np.random.Generator) -> None:
    torch = cuda_torch()
    w = random_weights(rng, 30)
    t = torch.tensor(w, device="cuda", requires_grad=True)
    out = apsp.solve(t)
    assert not out.requires_grad
    np.testing.assert_array_equal(out.detach().cpu().numpy(), expected(w, "float64"))
    version = t._version
    assert apsp.solve(t, overwrite=True) is t
    assert t._version > version, "autograd was not told about the in-place write"
    np.testing.assert_array_equal(t.detach().cpu().numpy(), expected(w, "float64"))


@gpu
def test_torch_subclasses_sparse_negated_views_and_errors_after_writing(
        rng: np.random.Generator) -> None:
    torch = cuda_torch()
    w = random_weights(rng, 40)
    sub = subtensor_class(torch)
    t = torch.tensor(w, device="cuda").as_subclass(sub)
    dist, pred = apsp.solve(t, return_predecessors=True)
    assert type(dist) is sub and type(pred) is sub and dist.is_cuda and pred.is_cuda
    np.testing.assert_array_equal(dist.cpu().numpy(), expected(w, "float64"))
    graded = torch.tensor(w, device="cuda", requires_grad=True).as_subclass(sub)
    np.testing.assert_array_equal(apsp.solve(graded).detach().cpu().numpy(),
                                  expected(w, "float64"))
    with pytest.raises(TypeError, match=r"layout torch.sparse_coo.*to_dense\(\)"):
        apsp.solve(torch.tensor(w, device="cuda").to_sparse())
    negated = torch._neg_view(torch.tensor(-w, device="cuda"))  # reads as w; memory holds -w
    np.testing.assert_array_equal(apsp.solve(negated).cpu().numpy(), expected(w, "float64"))
    with pytest.raises(ValueError, match=r"resolve_neg\(\)"):
        apsp.solve(negated, overwrite=True)
    np.testing.assert_array_equal(negated.cpu().numpy(), w)  # untouched
    with pytest.raises(TypeError, match="complex64"):  # 0 x 0: checked all the same
        apsp.solve(torch.zeros((0, 0), dtype=torch.complex64, device="cuda"), overwrite=True)
    c = torch.tensor([[0.0, 1.0], [-2.0, 0.0]], device="cuda")
    version = c._version
    with pytest.raises(apsp.NegativeCycleError):
        apsp.solve(c, overwrite=True)
    assert c._version > version, "autograd was not told about the write before the error"
    nan = torch.tensor([[0.0, float("nan")], [1.0, 0.0]], device="cuda")
    version = nan._version
    with pytest.raises(ValueError, match="NaN"):  # refused before anything is written
        apsp.solve(nan, overwrite=True)
    assert nan._version == version


@gpu
def test_torch_on_another_device_than_the_current_one(rng: np.random.Generator) -> None:
    torch = cuda_torch()
    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs 2 GPUs, this machine has {torch.cuda.device_count()}")
    w = random_weights(rng, 64)
    torch.cuda.set_device(0)
    t = torch.from_numpy(w.astype(np.float32)).to("cuda:1")
    dist, pred = apsp.solve(t, return_predecessors=True)
    assert dist.device == torch.device("cuda:1") and pred.device == torch.device("cuda:1")
    assert torch.cuda.current_device() == 0
    np.testing.assert_array_equal(dist.cpu().numpy(), expected(w, "float32"))
    assert apsp.solve(t, overwrite=True) is t
    np.testing.assert_array_equal(t.cpu().numpy(), expected(w, "float32"))
    assert torch.cuda.current_device() == 0


@gpu
def test_cupy_on_another_device_than_the_current_one(rng: np.random.Generator) -> None:
    cupy = cupy_or_skip()
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip(f"needs 2 GPUs, this machine has {cupy.cuda.runtime.getDeviceCount()}")
    w = random_weights(rng, 64)
    with cupy.cuda.Device(1):
        a = cupy.asarray(w)
    with cupy.cuda.Device(0):
        out = apsp.solve(a)
        assert out.device.id == 1 and cupy.cuda.runtime.getDevice() == 0
    np.testing.assert_array_equal(cupy.asnumpy(out), expected(w, "float64"))


@gpu
def test_errors_leave_the_process_usable(rng: np.random.Generator) -> None:
    torch = cuda_torch()
    w = random_weights(rng, 8)
    for dtype in (torch.float16, torch.bool, torch.uint8, torch.bfloat16):
        for overwrite in (False, True):
            with pytest.raises(TypeError, match="float32, float64, int32, int64"):
                apsp.solve(torch.ones((4, 4), dtype=dtype, device="cuda"), overwrite=overwrite)
    with pytest.raises(ValueError, match=r"got shape \(4, 5\)"):
        apsp.solve(torch.ones((4, 5), device="cuda"))
    with pytest.raises(ValueError, match="does not copy device arrays to the host"):
        apsp.solve(torch.ones((4, 4), device="cuda"), device="cpu")
    with pytest.raises(ValueError, match="cuda:7"):
        apsp.solve(torch.ones((4, 4), device="cuda"), device="cuda:7")
    bad = torch.from_numpy(w).cuda()
    bad[1, 2] = float("nan")
    with pytest.raises(ValueError, match=r"graph\[1, 2\] is NaN"):
        apsp.solve(bad)
    cycle = torch.tensor([[0.0, 1.0], [-3.0, 0.0]], device="cuda")
    with pytest.raises(apsp.NegativeCycleError):
        apsp.solve(cycle)
    assert float(apsp.solve(cycle, check=False).diagonal().min()) < 0  # the caller's own check
    good = torch.from_numpy(w).cuda()
    np.testing.assert_array_equal(apsp.solve(good).cpu().numpy(), expected(w, "float64"))


@gpu
def test_empty_device_graph() -> None:
    torch = cuda_torch()
    out = apsp.solve(torch.empty((0, 0), device="cuda"))
    assert out.shape == (0, 0) and out.is_cuda


# ---- GPU tier: producers that are neither torch nor CuPy ---------------------------------------

class DLPackOnly:
    """A device array known only through DLPack; `legacy` producers reject max_version."""

    def __init__(self, t, legacy: bool = False) -> None:
        self.t = t
        self.legacy = legacy

    def __dlpack__(self, *, stream=None, max_version=None, **kwargs):
        if self.legacy and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        if self.legacy:
            return self.t.__dlpack__(stream=stream)
        return self.t.__dlpack__(stream=stream, max_version=max_version)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


class LegacyDLPackOnly(DLPackOnly):
    def __init__(self, t) -> None:
        super().__init__(t, legacy=True)


@gpu
@pytest.mark.parametrize("wrapper", [DLPackOnly, CAIOnly], ids=["dlpack", "cai"])
def test_an_asynchronous_copy_keeps_its_source_until_the_result_is_freed(
        rng: np.random.Generator, wrapper) -> None:
    """check=False returns before the copy of a producer's array has run: the result holds the
    producer (and its unreleased capsule) until it is freed; with the checks nothing is held."""
    torch = cuda_torch()
    w = random_weights(rng, 50)
    t = torch.from_numpy(w.astype(np.float32)).cuda()
    producer = wrapper(t) if wrapper is DLPackOnly else wrapper(t.__cuda_array_interface__)
    held = sys.getrefcount(producer)
    dist = apsp.solve(producer, check=False)
    assert sys.getrefcount(producer) == held + 1
    np.testing.assert_array_equal(torch.from_dlpack(dist).cpu().numpy(), expected(w, "float32"))
    del dist
    assert sys.getrefcount(producer) == held
    dist = apsp.solve(producer)
    assert sys.getrefcount(producer) == held
    np.testing.assert_array_equal(torch.from_dlpack(dist).cpu().numpy(), expected(w, "float32"))


@gpu
def test_cuda_array_interface_stream_that_names_no_stream(rng: np.random.Generator) -> None:
    torch = cuda_torch()
    w = random_weights(rng, 20)
    t = torch.from_numpy(w.astype(np.float32)).cuda()
    with pytest.raises(ValueError, match="stream -1, which names no CUDA stream"):
        apsp.solve(CAIOnly(dict(t.__cuda_array_interface__, version=3, stream=-1)))
    out = apsp.solve(CAIOnly(dict(t.__cuda_array_interface__, version=3, stream=1)))
    np.testing.assert_array_equal(torch.from_dlpack(out).cpu().numpy(), expected(w, "float32"))


@gpu
@pytest.mark.parametrize("wrapper", [DLPackOnly, LegacyDLPackOnly], ids=["versioned", "legacy"])
def test_other_dlpack_producer(rng: np.random.Generator, wrapper) -> None:
    torch = cuda_torch()
    w = random_weights(rng, 45)
    t = torch.from_numpy(w.astype(np.float32)).cuda()
    g = wrapper(t)
    dist, pred = apsp.solve(g, return_predecessors=True)
    assert type(dist).__name__ == "DeviceBuffer" and dist.shape == (45, 45)
    held = sys.getrefcount(dist)
    d = torch.from_dlpack(dist)  # the consumer's from_dlpack imports it
    assert d.device == t.device and sys.getrefcount(dist) == held + 1
    np.testing.assert_array_equal(d.cpu().numpy(), expected(w, "float32"))
    check_predecessors(w, d.cpu().numpy().astype(np.float64), torch.from_dlpack(pred).cpu().numpy())
    del d
    assert sys.getrefcount(dist) == held, "the exported capsule's deleter did not run exactly once"
    np.testing.assert_array_equal(t.cpu().numpy(), w.astype(np.float32))  # input untouched
    assert apsp.solve(g, overwrite=True) is g
    np.testing.assert_array_equal(t.cpu().numpy(), expected(w, "float32"))


@gpu
@pytest.mark.parametrize("wrapper", [DLPackOnly, CAIOnly], ids=["dlpack", "cai"])
def test_other_producer_on_another_device_than_the_current_one(
        rng: np.random.Generator, wrapper) -> None:
    """apsp's own result arrays (DeviceBuffer) on cuda:1 with cuda:0 current: allocated, copied
    into, solved, mended (fractional float32 sums) and marked ready there, and read back right;
    the current device stays cuda:0."""
    torch = cuda_torch()
    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs 2 GPUs, this machine has {torch.cuda.device_count()}")
    w = random_weights(rng, 96) / 7
    torch.cuda.set_device(0)
    t = torch.from_numpy(w.astype(np.float32)).to("cuda:1")
    producer = wrapper(t) if wrapper is DLPackOnly else wrapper(t.__cuda_array_interface__)
    dist, pred = apsp.solve(producer, return_predecessors=True, check=False)
    assert torch.cuda.current_device() == 0
    # Imported through the CUDA array interface (torch.as_tensor) and through DLPack (the waits on
    # the ready event are test_cuda_array_interface_result_outlives_the_producers_stream's).
    d, p = torch.as_tensor(dist, device="cuda:1"), torch.from_dlpack(pred)
    assert d.device == torch.device("cuda:1") and p.device == torch.device("cuda:1")
    got = d.cpu().numpy()
    np.testing.assert_allclose(got, floyd_warshall(w.astype(np.float32).astype(np.float64)),
                               rtol=1e-5)
    assert_chains_lead_back(w, got, p.cpu().numpy())
    assert torch.cuda.current_device() == 0


@gpu
@pytest.mark.parametrize("index", [0, 1], ids=["cuda0", "cuda1"])
def test_cuda_array_interface_result_outlives_the_producers_stream(
        rng: np.random.Generator, index: int) -> None:
    """Results of a CAI v3 producer wait for the solve itself (an event), not for the producer's
    stream: two solves queued behind spins on a raw stream that is then destroyed read right, one
    through the CUDA array interface (CuPy synchronises on the stream it names, apsp's own) and
    one through DLPack (torch's stream waits for the event), both while still pending; cuda:1
    with cuda:0 current too."""
    torch = cuda_torch()
    cupy = cupy_or_skip()
    if index >= torch.cuda.device_count():
        pytest.skip(f"needs 2 GPUs, this machine has {torch.cuda.device_count()}")
    w = random_weights(rng, 40)
    want = expected(w, "float32")
    torch.cuda.set_device(0)
    with cupy.cuda.Device(index):
        a = cupy.asarray(w.astype(np.float32))
        cupy.cuda.runtime.deviceSynchronize()
        raw = cupy.cuda.runtime.streamCreateWithFlags(1)  # cudaStreamNonBlocking
        producer = CAIOnly(dict(a.__cuda_array_interface__, version=3, stream=raw))
        # The same solve once first: loading a kernel on its first launch (CUDA's lazy loading)
        # can wait for the device, which would end the spins before the solves are queued.
        apsp.solve(producer, check=False)
        cupy.cuda.runtime.streamSynchronize(raw)
        spin_on = torch.cuda.ExternalStream(raw, device=f"cuda:{index}")
        done = []
        for _ in range(2):  # check=False without predecessors: no host wait in the call
            with torch.cuda.stream(spin_on):
                torch.cuda._sleep(SPIN_CYCLES)
            done.append(apsp.solve(producer, check=False))
        first, second = done
        # Only the first's interface before CuPy synchronises on the stream it names: apsp's
        # stream would then wait for the second too.
        pending = first.__cuda_array_interface__["stream"]
        cupy.cuda.runtime.streamDestroy(raw)
    assert pending not in (None, 1, raw), "not a stream of apsp's own that waits for the solve"
    assert torch.cuda.current_device() == 0
    with cupy.cuda.Device(index):
        np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(first)), want)
    got = torch.from_dlpack(second)
    assert second.__cuda_array_interface__["stream"] is not None  # still behind the second spin
    np.testing.assert_array_equal(got.cpu().numpy(), want)
    torch.cuda.synchronize(index)
    assert first.__cuda_array_interface__["stream"] is None  # done: nothing to wait for
    assert torch.cuda.current_device() == 0


@gpu
def test_an_apsp_result_solved_again_in_place_is_ready_after_that_solve(
        rng: np.random.Generator) -> None:
    """An apsp result (DeviceBuffer) solved again in place is solved on the legacy default stream
    (its DLPack export): its exports then wait for that solve, queued behind a spin there, not
    for the stream of its first solve."""
    torch = cuda_torch()
    cupy = cupy_or_skip()
    w = random_weights(rng, 40)
    dist = apsp.solve(CAIOnly(cupy.asarray(w.astype(np.float32)).__cuda_array_interface__))
    apsp.solve(dist, overwrite=True, directed=False, check=False)  # kernels loaded, as above
    torch.cuda.synchronize()
    dist = apsp.solve(CAIOnly(cupy.asarray(w.astype(np.float32)).__cuda_array_interface__))
    torch.cuda._sleep(SPIN_CYCLES)  # on torch's default stream: the legacy default stream
    assert apsp.solve(dist, overwrite=True, directed=False, check=False) is dist
    assert dist.__cuda_array_interface__["stream"] is not None  # behind the spin
    want = floyd_warshall(w, directed=False).astype(np.float32)
    np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(dist)), want)


@gpu
def test_cuda_array_interface_producer(rng: np.random.Generator) -> None:
    cupy = cupy_or_skip()
    w = random_weights(rng, 33)
    with cupy.cuda.Stream(non_blocking=True) as s:
        a = cupy.asarray(as_dtype(w, "int32"))
        interface = a.__cuda_array_interface__
        assert interface["version"] == 3 and interface["stream"] == s.ptr
        out = apsp.solve(CAIOnly(interface))
        # The checks waited for the solve: nothing is left for a consumer to wait for.
        assert out.__cuda_array_interface__["stream"] is None
        host = cupy.asnumpy(cupy.asarray(out))  # CuPy imports it through the interface
    np.testing.assert_array_equal(host, expected(w, "int32"))
    readonly = dict(interface, data=(interface["data"][0], True))
    with pytest.raises(ValueError, match="read-only"):
        apsp.solve(CAIOnly(readonly), overwrite=True)
    np.testing.assert_array_equal(cupy.asnumpy(apsp.solve(CAIOnly(readonly))),
                                  expected(w, "int32"))
