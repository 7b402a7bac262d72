"""Device arrays for apsp.solve: PyTorch, CuPy, and any DLPack / __cuda_array_interface__ producer.

Zero-copy and asynchronous. The array is taken in by the compiled intake (cpp/intake.cpp: DLPack
capsules, versioned or legacy, and the CUDA array interface v2/v3), the solve is enqueued on the
caller's stream of the array's own device, and the result is the same kind of array on the same
device. Nothing here copies to the host, and the host waits for the device only for the checks
that ``check=True`` asks for (see :func:`apsp.solve`).

Which stream: torch -> ``torch.cuda.current_stream(tensor.device)``; CuPy -> its current stream
on the array's device; ``__cuda_array_interface__`` v3 -> its ``stream`` entry; any other
producer -> the legacy default stream (which waits for, and is waited for by, every blocking
stream).

Which memory: ``overwrite=True`` solves in the caller's memory (rows must be contiguous; the row
stride becomes the leading dimension). ``overwrite=False`` makes one n x n working copy on the
device, allocated by the caller's framework (torch, CuPy) on the caller's stream, or by apsp
(``apsp._core.DeviceBuffer``) for other producers; torch and CuPy inputs of any layout are
copied, other producers' need contiguous rows. Predecessors go to a new int32 array of the same
kind on the same device. A DeviceBuffer's exports wait for an event recorded after the solve (its
CUDA array interface names a stream of apsp's own that waits for it, or none once it is done), so
the producer may destroy its stream first.

Which GPUs: the array's own; a list of devices that starts with it (``device=[0, 1]``) splits the
rounds over the others too (engine.cu: enqueue_split), whose work is ordered after what the
caller's stream held and before what it gets next.
"""
from __future__ import annotations

from typing import Any, Optional

from . import _core
from ._devices import Target, parse_device
from ._intake import InPlaceWrite, as_torch_kind, check_torch_layout, is_torch
from ._progress import make_progress
from ._solve import check_square

_DLPACK_CUDA = 2
_DLPACK_CUDA_MANAGED = 13
# Producer types whose __dlpack__ predates DLPack 1.0 and rejects max_version.
_LEGACY_DLPACK: set = set()


def solve_device_array(
    graph: Any,
    *,
    directed: bool,
    unweighted: bool,
    return_predecessors: bool,
    overwrite: bool,
    device: Any,
    progress: bool,
    check: bool = True,
) -> Any:
    """apsp.solve for an array that lives on a GPU; see the module docstring."""
    # Positional from here on: this is the per-call path whose host cost issue 4 bounds.
    module = type(graph).__module__
    if is_torch(graph):
        solve = _solve_torch
    elif module == "cupy" or module.startswith("cupy."):
        solve = _solve_cupy
    else:
        solve = _solve_other
    return solve(graph, bool(directed), bool(unweighted), return_predecessors, overwrite, device,
                 progress, bool(check))


def _helpers_for(device: Any, actual: int) -> tuple[int, ...]:
    """Device arrays are solved where they live; `device` may only confirm that, or name a list
    of GPUs that starts there: the others share the rounds (returned)."""
    if device is None or str(device) == "cuda":
        return ()
    target = parse_device(device)
    if target.helpers and target.index != actual:
        raise ValueError(f"graph lives on cuda:{actual} but device={device!r} was asked; a list of "
                         "devices for a device array starts with the GPU it lives on, which holds "
                         f"the result (e.g. device=['cuda:{actual}', ...]), or move it first")
    if target.engine == "cpu":
        raise ValueError(f"graph lives on cuda:{actual} but device={device!r} was asked; apsp does "
                         "not copy device arrays to the host: move it yourself (tensor.cpu(), "
                         "cupy.asnumpy) or leave device=None")
    if target.index != actual:
        raise ValueError(f"graph lives on cuda:{actual} but device={device!r} was asked; apsp solves "
                         f"device arrays where they are: move it first (e.g. tensor.to('cuda:"
                         f"{target.index}')) or leave device=None")
    return target.helpers


def _capsule(obj: Any, stream: Optional[int]) -> Any:
    """obj.__dlpack__ for a consumer working on `stream` (a cudaStream_t as an int, 0 = legacy
    default), versioned where the producer supports DLPack 1.x."""
    # DLPack spells the legacy default stream 1 (0 is ambiguous there and disallowed).
    dl_stream = None if stream is None else (stream or 1)
    cls = type(obj)
    if cls not in _LEGACY_DLPACK:
        try:
            return obj.__dlpack__(stream=dl_stream, max_version=(1, 1))
        except TypeError:
            _LEGACY_DLPACK.add(cls)
    return obj.__dlpack__(stream=dl_stream)


def _run(work: Any, pred: Any, stream: int, n: int, device: int, helpers: tuple[int, ...],
         directed: bool, unweighted: bool, progress: bool, check: bool) -> None:
    """The compiled solve; `work` and `pred` are capsules (consumed there), DeviceArrays or
    DeviceBuffers; `helpers` are more GPUs that share the rounds."""
    if not progress:
        if helpers:
            _core.solve_array(work, pred, stream, directed, unweighted, check, check, None,
                              list(helpers))
        else:
            _core.solve_array(work, pred, stream, directed, unweighted, check, check, None)
        return
    bar = make_progress(progress, f"apsp n={n} " + Target("cuda", device, helpers).label)
    try:
        _core.solve_array(work, pred, stream, directed, unweighted, check, check, bar,
                          list(helpers))
    finally:
        bar.close()


def _out_of_memory(exc: BaseException, n: int, itemsize: int, pred: bool, device: int,
                   free: int) -> MemoryError:
    """The framework's out-of-memory error for the result arrays, as apsp's MemoryError: the bytes
    needed and free, and what to try."""
    need = n * n * itemsize + (n * n * 4 if pred else 0)
    what = "the distances and predecessors" if pred else "the distances"
    return MemoryError(f"not enough memory on cuda:{device} for {what}: needs {need} bytes, "
                       f"{free} bytes free ({type(exc).__name__}: {exc}); free device memory "
                       "(your framework's cached blocks too), solve in place with overwrite=True, "
                       "or pass a smaller graph")


def _result(dist: Any, pred: Any, return_predecessors: bool) -> Any:
    return (dist, pred) if return_predecessors else dist


# ---- PyTorch -----------------------------------------------------------------------------------

def _solve_torch(graph: Any, directed: bool, unweighted: bool, return_predecessors: bool,
                 overwrite: bool, device: Any, progress: bool, check: bool) -> Any:
    torch, to_dlpack = _torch_modules()
    if not graph.is_cuda:
        raise ValueError(f"graph is a torch tensor on {graph.device}; apsp computes on CUDA "
                         "devices and the CPU: move it with tensor.to('cuda') or tensor.cpu()")
    check_torch_layout(graph)
    # Tensors that require grad are data here: the solve is not recorded by autograd.
    tensor = graph.detach() if graph.requires_grad else graph
    index = graph.get_device()
    helpers = () if device is None else _helpers_for(device, index)
    n = check_square(tensor.shape)
    # The current stream of the tensor's own device (cuda:1 stays on cuda:1 whatever is current):
    # torch's allocator, its copy and apsp's solve are all ordered on it.
    stream = _torch_current_stream(torch, index)
    _core.check_device_dtype(str(tensor.dtype)[len("torch."):])
    if overwrite and (tensor.is_neg() or tensor.is_conj()):  # DLPack exports the raw memory
        raise ValueError("overwrite=True cannot write into this tensor: it is a lazily negated "
                         "view (its negative bit is set), whose memory holds other values; call "
                         "tensor.resolve_neg() first, or pass overwrite=False")
    try:
        work = tensor if overwrite else torch.empty((n, n), dtype=tensor.dtype, device=tensor.device)
        pred = (torch.empty((n, n), dtype=torch.int32, device=tensor.device)
                if return_predecessors else None)
    except torch.cuda.OutOfMemoryError as e:
        raise _out_of_memory(e, n, 0 if overwrite else tensor.element_size(), return_predecessors,
                             index, torch.cuda.mem_get_info(index)[0]) from None
    if not overwrite:
        work.copy_(tensor)
    if n:
        # The consumer's stream is the tensor's current stream, for which __dlpack__(stream=...)
        # orders nothing (it only waits when the streams differ); to_dlpack exports the same
        # tensor without that Python-level bookkeeping (14 us of a 40 us call, measured).
        with InPlaceWrite(graph if overwrite else None):
            _run(to_dlpack(work), None if pred is None else to_dlpack(pred), stream, n, index,
                 helpers, directed, unweighted, progress, check)
    if pred is not None:
        pred = as_torch_kind(graph, pred)
    return _result(graph if overwrite else as_torch_kind(graph, work), pred, return_predecessors)


_TORCH: list = []


def _torch_modules() -> tuple:
    """(torch, torch.utils.dlpack.to_dlpack), imported on the first torch call and kept: a
    repeated import statement costs part of the small-call budget."""
    if not _TORCH:
        import torch
        import torch.utils.dlpack

        _TORCH.append((torch, torch.utils.dlpack.to_dlpack))
    return _TORCH[0]


_RAW_STREAM: list = []


def _torch_current_stream(torch: Any, index: int) -> int:
    """torch.cuda.current_stream(index).cuda_stream, through torch's raw-stream accessor where it
    has one (the one Triton uses: no Stream object is built, 0.2 us instead of 2 us)."""
    if not _RAW_STREAM:
        _RAW_STREAM.append(getattr(torch._C, "_cuda_getCurrentRawStream", None))
    raw = _RAW_STREAM[0]
    if raw is not None:
        return int(raw(index))
    return int(torch.cuda.current_stream(index).cuda_stream)


# ---- CuPy --------------------------------------------------------------------------------------

def _solve_cupy(graph: Any, directed: bool, unweighted: bool, return_predecessors: bool,
                overwrite: bool, device: Any, progress: bool, check: bool) -> Any:
    import cupy

    index = int(graph.device.id)
    helpers = _helpers_for(device, index)
    n = check_square(tuple(graph.shape))
    if not overwrite:
        _core.check_device_dtype(graph.dtype.name)
    with cupy.cuda.Device(index):  # CuPy's current stream and allocations are per device
        stream = int(cupy.cuda.get_current_stream().ptr)
        # graph.copy runs on the current stream; its memory pool is stream-ordered.
        try:
            work = graph if overwrite else graph.copy(order="C")
            pred = cupy.empty((n, n), dtype=cupy.int32) if return_predecessors else None
        except cupy.cuda.memory.OutOfMemoryError as e:
            raise _out_of_memory(e, n, 0 if overwrite else graph.itemsize, return_predecessors,
                                 index, cupy.cuda.runtime.memGetInfo()[0]) from None
        if n:
            _run(_capsule(work, stream), None if pred is None else _capsule(pred, stream), stream,
                 n, index, helpers, directed, unweighted, progress, check)
    return _result(work, pred, return_predecessors)


# ---- any other DLPack or CUDA-array-interface producer -----------------------------------------

def _solve_other(graph: Any, directed: bool, unweighted: bool, return_predecessors: bool,
                 overwrite: bool, device: Any, progress: bool, check: bool) -> Any:
    """Producers apsp cannot allocate through: results are apsp DeviceBuffers, which every
    framework imports with its own from_dlpack (or through __cuda_array_interface__)."""
    source, stream = _source(graph)
    arr = _core.DeviceArray(source, overwrite)
    held = False
    try:
        helpers = _helpers_for(device, arr.device)
        if stream is None:  # the CUDA array interface: its v3 stream, else no ordering is needed
            stream = arr.stream if arr.stream is not None else 0
        n = arr.n
        if overwrite:
            work = arr
            dist = graph
        else:
            dist = work = _core.DeviceBuffer(n, arr.dtype, arr.device, stream)
            work.copy_from(arr)
            if not check and n:  # nothing waits for the copy here: the result keeps the source
                work._hold((arr, graph))  # (capsule unreleased, producer alive) until it is freed
                held = True
        pred = _core.DeviceBuffer(n, "int32", arr.device, stream) if return_predecessors else None
        if n:
            _run(work, pred, stream, n, arr.device, helpers, directed, unweighted, progress, check)
            # Exports wait for the solve itself, not for the producer's stream, which its owner
            # may destroy before reading the result (dist is the input itself with overwrite=True:
            # an apsp result solved again in place is marked too, on this solve's stream).
            for made in (dist, pred):
                if isinstance(made, _core.DeviceBuffer):
                    made._mark_ready(stream)
    finally:
        if not held:  # the checks waited for the device: the producer may have its memory back
            arr.close()
    return _result(dist, pred, return_predecessors)


def _source(graph: Any) -> tuple:
    """(DLPack capsule or CAI dict, stream or None). DLPack first: its capsule carries ownership
    and a read-only flag; the producer orders its pending work before the legacy default stream."""
    if hasattr(graph, "__dlpack__") and hasattr(graph, "__dlpack_device__"):
        device_type, index = graph.__dlpack_device__()
        if int(device_type) in (_DLPACK_CUDA, _DLPACK_CUDA_MANAGED):
            # A stream is named for the array's own device, which a producer may require to be
            # the current one (torch refuses to export otherwise).
            with _core.OnDevice(int(index)):
                return _capsule(graph, 0), 0
        return _capsule(graph, None), 0  # the intake names the device it cannot take
    return graph.__cuda_array_interface__, None
