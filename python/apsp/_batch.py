"""apsp.solve_batch: many graphs of one size in one call, a (count, n, n) array in and out.

Each graph gets exactly what apsp.solve gives it (edge rules, checks, unreachable pairs, negative
cycles); the engines run them side by side: the CUDA engine solves graphs of n <= 256 in one
launch, one thread block (n <= 64) or one thread-block cluster each, the CPU engine graphs below
256 vertices one thread each (engine.cu: solve_cuda_batch; fw_cpu.cpp: solve_cpu_batch). Host
arrays (NumPy, torch CPU tensors, nested lists) go to the first usable GPU, else the CPU engine;
torch and CuPy device arrays are solved where they live, on the caller's current stream, and
never leave the GPU. With predecessors the CPU engine's batch runs as without (solve_pred on
each graph); on a GPU the graphs go one by one through apsp.solve, whose predecessor plans the
batch kernels lack.
"""
from __future__ import annotations

import contextlib
from typing import Any, NamedTuple

import numpy as np

from . import _core
from ._devices import Target, default_host_target, parse_device
from ._errors import NegativeCycleError
from ._intake import (InPlaceWrite, as_host_array, as_torch_kind, check_torch_layout, classify,
                      is_torch, wrap_host_result, writes_reach)
from ._memory import check_host_memory
from ._solve import _layout_problems as solve_layout_problems
from ._solve import computed_dtype


def solve_batch(graphs: Any, *, directed: bool = True, unweighted: bool = False,
                return_predecessors: bool = False, overwrite: bool = False, device: Any = None,
                check: bool = True) -> Any:
    """All-pairs shortest paths of a batch of graphs of one size: ``graphs[b]`` is graph b's
    n x n weight matrix, with :func:`apsp.solve`'s conventions, and ``result[b]`` is what
    ``apsp.solve(graphs[b], ...)`` returns for it.

    Graphs of different sizes go in padded to the largest n with "no edge" (``+inf``, or the
    integer INF): a padding vertex has no edges, so it changes no other distance, and its own
    rows and columns come out unreachable (0 on the diagonal). This is how graph-transformer
    batches (Graphormer's shortest-path features) are laid out already.

    Parameters
    ----------
    graphs : array-like (count, n, n)
        NumPy arrays (nested lists, torch CPU tensors), or torch / CuPy arrays on a GPU, which
        are solved there on the caller's current stream. The dtypes of :func:`apsp.solve`.
    directed, unweighted : bool
        As for :func:`apsp.solve`, for every graph.
    return_predecessors : bool
        Also return ``pred`` (count, n, n) int32, of the input's kind: ``pred[b]`` is what
        ``apsp.solve(graphs[b], return_predecessors=True)`` gives (-9999 where there is no path
        and on the diagonal; :func:`apsp.path` reads ``pred[b]``). The CPU engine solves them
        side by side, as without predecessors. The GPU's batch kernels have no predecessor
        plans, so on a GPU the graphs go one by one through :func:`apsp.solve`, each paying its
        per-call cost (a host graph's upload and download, the checks' waits), about 0.15 ms a
        graph on an H200. For many graphs of n <= 64 with paths, ``device="cpu"`` is the faster
        choice (2.5-16x on that machine's 16 cores); from n = 128 the GPU is
        (benchmarks/bench_batch.py).
    overwrite : bool
        Write the distances into ``graphs`` itself and return it (rows contiguous, a natively
        computed dtype; otherwise ``ValueError``). After an error, graphs other than the one
        named may already hold their distances.
    device : None, "cpu", "cuda", "cuda:N"
        As for :func:`apsp.solve`; one device (a batch is not split over several GPUs).
    check : bool
        Device arrays only, as for :func:`apsp.solve`: False skips the input checks and the
        negative-cycle check, and the call returns once the work is enqueued.

    Returns
    -------
    An array of the input's kind, (count, n, n), in the computed dtype; with
    ``return_predecessors=True`` a tuple ``(dist, pred)``.

    Raises
    ------
    The errors of :func:`apsp.solve`, for the first graph that has one, its message led by
    ``graph b of the batch:``; a :class:`apsp.NegativeCycleError` also has ``.graph = b``.
    ``ValueError`` for an array that is not (count, n, n).
    """
    try:
        return _dispatch(graphs, bool(directed), bool(unweighted), bool(return_predecessors),
                         bool(overwrite), device, bool(check))
    except NegativeCycleError as exc:
        if exc.graph is not None and not exc.cycle:  # name one cycle of it in its untouched input
            lead = f"graph {exc.graph} of the batch: "
            exc.args = (str(exc).removeprefix(lead),)
            try:
                if not overwrite:
                    from ._cycles import name_cycle

                    whole = graphs if classify(graphs) == "device" else as_host_array(graphs)
                    name_cycle(exc, whole[exc.graph], directed)
            finally:
                exc.args = (lead + str(exc),)
        raise


def _dispatch(graphs: Any, directed: bool, unweighted: bool, predecessors: bool,
              overwrite: bool, device: Any, check: bool) -> Any:
    kind = classify(graphs)
    if kind == "sparse":
        raise TypeError("apsp.solve_batch takes a (count, n, n) array; a scipy.sparse matrix is "
                        "one graph: solve it with apsp.solve")
    if kind == "device":
        module = type(graphs).__module__
        if not is_torch(graphs) and module != "cupy" and not module.startswith("cupy."):
            raise TypeError(f"apsp.solve_batch takes NumPy arrays and torch or CuPy arrays; a "
                            f"{type(graphs).__name__} on a GPU can go through torch.from_dlpack "
                            "or cupy.from_dlpack first (no copy), or each graph through "
                            "apsp.solve")
        batch = _device_batch(graphs, device)
        if predecessors:
            return _device_graph_by_graph(graphs, batch, directed, unweighted, overwrite, device,
                                          check)
        if is_torch(graphs):
            return _solve_torch(graphs, batch, directed, unweighted, overwrite, check)
        return _solve_cupy(graphs, batch, directed, unweighted, overwrite, check)
    if isinstance(graphs, (list, tuple)) and len({np.shape(g) for g in graphs}) > 1:
        raise ValueError(f"graphs of different shapes ({sorted({np.shape(g) for g in graphs})}): "
                         "pad each to the largest n with no-edge entries (+inf, or apsp.INT32_INF "
                         "/ INT64_INF for integers), which change no distance, and stack them")
    arr = as_host_array(graphs)
    if overwrite and not writes_reach(graphs, arr):
        raise ValueError(f"overwrite=True cannot write into a {type(graphs).__name__}: it had to "
                         "be converted to a new array. Pass a NumPy array, or overwrite=False.")
    with InPlaceWrite(graphs if overwrite and is_torch(graphs) else None):
        if predecessors:
            result = _host_predecessors(arr, directed, unweighted, overwrite, device)
        else:
            result = _solve_host(arr, directed, unweighted, overwrite, device)
    return wrap_host_result(graphs, result)


def batch_shape(shape: tuple) -> tuple[int, int]:
    """(count, n) of a (count, n, n) shape; ValueError naming the shape otherwise."""
    if len(shape) != 3 or shape[1] != shape[2]:
        hint = " (one graph: use apsp.solve)" if len(shape) == 2 else ""
        raise ValueError(f"graphs must be a (count, n, n) array of square graphs, got shape "
                         f"{tuple(shape)}{hint}")
    return int(shape[0]), int(shape[1])


def _graphs_apart(strides: tuple, count: int, n: int, itemsize: int) -> list[str]:
    """Why graphs with these byte strides (rows checked already) cannot be solved where they are:
    each must lie past the last, a whole number of items on."""
    s0, s1 = strides[0], strides[1]
    if count > 1 and (s0 < n * (s1 if n > 1 else itemsize) or s0 % itemsize):
        return [f"its graphs do not lie one after another, each past the last, a whole number of "
                f"items apart (stride {s0} bytes)"]
    return []


def _layout_problems(strides: tuple, count: int, n: int, itemsize: int) -> list[str]:
    """Why a device array (count, n, n) with these strides (bytes) cannot be solved where it is:
    rows must be contiguous, and neither rows nor graphs may overlap. (Host arrays: apsp.solve's
    own checks of one graph, then _graphs_apart.)"""
    s1, s2 = strides[1], strides[2]
    if n > 1 and s2 != itemsize:
        return [f"its rows are not contiguous (strides {tuple(strides)} bytes)"]
    if n > 1 and (s1 < n * itemsize or s1 % itemsize):
        return [f"its rows overlap or are not whole items apart (row stride {s1} bytes)"]
    return _graphs_apart(strides, count, n, itemsize)


def _ld_and_stride(strides: tuple, n: int, itemsize: int) -> tuple[int, int]:
    """(leading dimension, elements between graphs) from byte strides that _layout_problems
    passed."""
    ld = strides[1] // itemsize if n > 1 else n
    return ld, (strides[0] // itemsize if strides[0] >= n * ld * itemsize else n * ld)


def _refuse_overwrite(reasons: list[str], kind: str = "array") -> None:
    """ValueError naming why overwrite=True cannot write into these graphs, if anything does."""
    if reasons:
        raise ValueError("overwrite=True cannot write into these graphs: " + "; ".join(reasons)
                         + f". Pass overwrite=False to get a new {kind}.")


def _one_device(device: Any, what: str) -> None:
    """A list of devices is refused: a batch is not split (its graphs go side by side)."""
    if isinstance(device, (list, tuple)):
        raise ValueError(f"device={device!r}: a batch runs on one {what}; its graphs are solved "
                         "side by side there (pass one device, or leave device=None)")


# ---- host arrays -------------------------------------------------------------------------------

class _HostBatch(NamedTuple):
    count: int
    n: int
    dtype: np.dtype  # the computed dtype
    target: Target
    problems: list[str]  # why the engines cannot take the array as it is (empty: they can)


def _host_batch(arr: np.ndarray, device: Any, overwrite: bool) -> _HostBatch:
    """The intake of a host batch, with or without predecessors: its shape and computed dtype
    (TypeError first, whatever the device), one device, the engine, and apsp.solve's checks of
    one graph (dtype, byte order, alignment, rows) then the graphs'; with overwrite=True any of
    them, or a read-only array, is refused."""
    count, n = batch_shape(arr.shape)
    dtype = computed_dtype(arr.dtype)
    _one_device(device, "device")
    parsed = parse_device(device)
    target: Target = default_host_target() if parsed is None else parsed
    one = arr[0] if count else np.empty((0, 0), arr.dtype)
    problems = solve_layout_problems(one) + _graphs_apart(arr.strides, count, n, arr.itemsize)
    if overwrite:
        _refuse_overwrite(problems + (["it is read-only"] if not arr.flags.writeable else []))
    return _HostBatch(count, n, dtype, target, problems)


def _solve_host(arr: np.ndarray, directed: bool, unweighted: bool, overwrite: bool,
                device: Any) -> np.ndarray:
    count, n, dtype, target, problems = _host_batch(arr, device, overwrite)
    if overwrite:
        source, out = arr, None
    else:
        check_host_memory(arr.size * dtype.itemsize, f"a batch of {count} n={n} {dtype} graphs",
                          "solve it in parts, or pass overwrite=True")
        evenly = count <= 1 or n <= 1 or arr.strides[0] == n * arr.strides[1]  # one copy each way
        if target.engine == "cuda" and evenly and not problems:
            # The CUDA engine reads `arr` without writing it and fills a new array: no host copy.
            source, out = arr, np.empty(arr.shape, dtype)
        else:
            source, out = np.array(arr, dtype=dtype, order="C", copy=True), None
    if count and n:
        _core.solve_batch_host(source, target.engine, max(target.index, 0), directed, unweighted,
                               out)
    return source if out is None else out


# ---- predecessors: graph by graph ----------------------------------------------------------------

def _graph_by_graph(count: int, solve_one: Any, store: Any) -> None:
    """return_predecessors=True: graph b goes through apsp.solve (`solve_one(b)` -> (dist,
    pred)), which has the predecessor plans the batch kernels lack, and `store(b, dist, pred)`
    keeps its results. The first graph's error is the batch's, led by "graph b of the batch: "
    (a NegativeCycleError, its cycle named by apsp.solve, also gets `.graph`)."""
    for b in range(count):
        try:
            dist, pred = solve_one(b)
        except (ValueError, OverflowError, MemoryError, RuntimeError) as exc:
            exc.args = (f"graph {b} of the batch: {exc}",)
            if isinstance(exc, NegativeCycleError):
                exc.graph = b
            raise
        store(b, dist, pred)


def _host_predecessors(arr: np.ndarray, directed: bool, unweighted: bool, overwrite: bool,
                       device: Any) -> tuple[np.ndarray, np.ndarray]:
    """return_predecessors=True on a host batch: the CPU engine's batch (graphs side by side,
    each exactly as apsp.solve gives it); on a GPU, graph by graph through apsp.solve."""
    from ._solve import solve

    count, n, dtype, target, _ = _host_batch(arr, device, overwrite)
    check_host_memory(arr.size * (4 + (0 if overwrite else dtype.itemsize)),
                      f"a batch of {count} n={n} {dtype} graphs and its predecessors",
                      "solve it in parts")
    pred = np.empty(arr.shape, np.int32)
    if target.engine == "cpu":
        dist = arr if overwrite else np.array(arr, dtype=dtype, order="C", copy=True)
        if count and n:
            _core.solve_batch_host(dist, "cpu", 0, directed, unweighted, None, pred)
        return dist, pred
    dist = arr if overwrite else np.empty(arr.shape, dtype)

    def store(b: int, d: np.ndarray, p: np.ndarray) -> None:
        if not overwrite:
            dist[b] = d
        pred[b] = p

    _graph_by_graph(count, lambda b: solve(arr[b], directed=directed, unweighted=unweighted,
                                           return_predecessors=True, overwrite=overwrite,
                                           device=device), store)
    return dist, pred


def _device_graph_by_graph(graphs: Any, batch: _DeviceBatch, directed: bool, unweighted: bool,
                           overwrite: bool, device: Any, check: bool) -> tuple[Any, Any]:
    """A torch or CuPy batch on its GPU, each graph on the caller's current stream."""
    from ._solve import solve

    torch_kind = is_torch(graphs)
    work, count, n = batch.data, batch.count, batch.n
    if overwrite:  # each graph's own refusals: apsp.solve's
        _refuse_overwrite(_graphs_apart(batch.strides, count, n, batch.size))
    if torch_kind:
        import torch

        on_its_gpu: Any = contextlib.nullcontext()  # torch runs each tensor's work on its GPU
        int32 = torch.int32

        def new(dtype: Any) -> Any:
            return torch.empty(work.shape, dtype=dtype, device=work.device)
    else:
        import cupy

        on_its_gpu = cupy.cuda.Device(batch.index)  # CuPy's current device and stream
        int32 = cupy.int32

        def new(dtype: Any) -> Any:
            return cupy.empty(work.shape, dtype)

    def store(b: int, d: Any, p: Any) -> None:  # copies on the current stream, as the solves
        if not overwrite:
            dist[b] = d
        pred[b] = p

    with on_its_gpu, InPlaceWrite(graphs if overwrite and torch_kind else None):
        dist = work if overwrite else new(work.dtype)
        pred = new(int32)
        _graph_by_graph(count, lambda b: solve(work[b], directed=directed, unweighted=unweighted,
                                               return_predecessors=True, overwrite=overwrite,
                                               device=device, check=check), store)
    if not torch_kind:
        return dist, pred
    return (graphs if overwrite else as_torch_kind(graphs, dist)), as_torch_kind(graphs, pred)


# ---- device arrays -----------------------------------------------------------------------------

class _DeviceBatch(NamedTuple):
    """What the paths of a torch or CuPy batch read of it (_device_batch)."""
    data: Any  # the tensor (detached: autograd records nothing) or the CuPy array
    index: int  # its GPU
    count: int
    n: int
    name: str  # its dtype's
    size: int  # bytes an item
    strides: tuple  # bytes


def _device_batch(graphs: Any, device: Any) -> _DeviceBatch:
    """The checks every path of a torch or CuPy batch makes first: on a GPU, dense, `device` one
    that is its own, (count, n, n), a dtype the CUDA engine computes."""
    from ._device_arrays import _helpers_for

    if is_torch(graphs):
        if not graphs.is_cuda:
            raise ValueError(f"graphs is a torch tensor on {graphs.device}; apsp computes on CUDA "
                             "devices and the CPU: move it with tensor.to('cuda') or "
                             "tensor.cpu()")
        check_torch_layout(graphs)
        data = graphs.detach() if graphs.requires_grad else graphs
        index, size = graphs.get_device(), data.element_size()
        name, strides = str(data.dtype)[len("torch."):], tuple(st * size for st in data.stride())
    else:
        data, index, name, size = graphs, int(graphs.device.id), graphs.dtype.name, graphs.itemsize
        strides = tuple(graphs.strides)
    _one_device(device, "GPU")
    _helpers_for(device, index)  # None, "cuda", or this array's own GPU; ValueError otherwise
    count, n = batch_shape(tuple(data.shape))
    _core.check_device_dtype(name, "graphs")
    return _DeviceBatch(data, index, count, n, name, size, strides)


def _solve_torch(graphs: Any, batch: _DeviceBatch, directed: bool, unweighted: bool,
                 overwrite: bool, check: bool) -> Any:
    from ._device_arrays import _out_of_memory, _torch_current_stream, _torch_modules

    torch, _ = _torch_modules()
    tensor, index, count, n, name, size = (batch.data, batch.index, batch.count, batch.n,
                                           batch.name, batch.size)
    if overwrite:
        reasons = _layout_problems(batch.strides, count, n, size)
        if tensor.is_neg() or tensor.is_conj():
            reasons.append("it is a lazily negated view (call tensor.resolve_neg() first)")
        _refuse_overwrite(reasons, "tensor")
        work = tensor
    else:
        try:
            work = torch.empty((count, n, n), dtype=tensor.dtype, device=tensor.device)
        except torch.cuda.OutOfMemoryError as e:
            raise _out_of_memory(e, n, count * size, False, index,
                                 torch.cuda.mem_get_info(index)[0]) from None
        work.copy_(tensor)  # on the current stream, as the solve below
    if count and n:
        ld, stride = _ld_and_stride(tuple(s * size for s in work.stride()), n, size)
        with InPlaceWrite(graphs if overwrite else None):
            _core.solve_batch_device(work.data_ptr(), count, n, ld, stride, name, index,
                                     _torch_current_stream(torch, index), directed, unweighted,
                                     check, check)
    return graphs if overwrite else as_torch_kind(graphs, work)


def _solve_cupy(graphs: Any, batch: _DeviceBatch, directed: bool, unweighted: bool,
                overwrite: bool, check: bool) -> Any:
    import cupy

    from ._device_arrays import _out_of_memory

    index, count, n, name, size = batch.index, batch.count, batch.n, batch.name, batch.size
    if overwrite:
        _refuse_overwrite(_layout_problems(batch.strides, count, n, size))
    with cupy.cuda.Device(index):  # CuPy's current stream and allocations are per device
        stream = int(cupy.cuda.get_current_stream().ptr)
        try:
            work = graphs if overwrite else graphs.copy(order="C")  # on the current stream
        except cupy.cuda.memory.OutOfMemoryError as e:
            raise _out_of_memory(e, n, count * size, False, index,
                                 cupy.cuda.runtime.memGetInfo()[0]) from None
        if count and n:
            ld, stride = _ld_and_stride(tuple(work.strides), n, size)
            _core.solve_batch_device(int(work.data.ptr), count, n, ld, stride, name, index, stream,
                                     directed, unweighted, check, check)
    return work
