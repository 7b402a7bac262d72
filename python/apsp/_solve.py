"""apsp.solve: intake of every supported input kind, dispatch to an engine, output of the same kind.

Host arrays are handled here; device arrays (torch, CuPy, DLPack, CUDA array interface) and
scipy.sparse matrices go through their own intake modules. The engines enforce the numeric
contract (edge rules, NaN, overflow, negative cycles) in C++.
"""
from __future__ import annotations

from typing import Any, Literal, Tuple, Union, overload

import numpy as np

from . import _core
from ._devices import Target, default_host_target, parse_device
from ._errors import NegativeCycleError
from ._memory import check_host_memory, new_arrays
from ._progress import make_progress

NATIVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64))
# Host dtypes converted without loss before solving, as NumPy would promote them.
WIDENED_DTYPES = {
    np.dtype(np.bool_): np.dtype(np.int32),
    np.dtype(np.int8): np.dtype(np.int32),
    np.dtype(np.int16): np.dtype(np.int32),
    np.dtype(np.uint8): np.dtype(np.int32),
    np.dtype(np.uint16): np.dtype(np.int32),
    np.dtype(np.uint32): np.dtype(np.int64),
    np.dtype(np.float16): np.dtype(np.float32),
}
ACCEPTED = "float32, float64, int32 and int64 (bool, int8/16, uint8/16/32 and float16 are widened on the host)"

Result = Union[Any, Tuple[Any, Any]]


def computed_dtype(dtype: Any) -> np.dtype:
    """The dtype apsp computes `dtype` in (itself in native byte order, or its lossless widening);
    TypeError otherwise."""
    dtype = np.dtype(dtype)
    if dtype.byteorder not in "=|":  # big-endian (or explicit little) data: the same numbers
        dtype = dtype.newbyteorder("=")
    if dtype in NATIVE_DTYPES:
        return dtype
    if dtype in WIDENED_DTYPES:
        return WIDENED_DTYPES[dtype]
    raise TypeError(f"graph has dtype {dtype}, which apsp does not compute in; accepted: {ACCEPTED}")


@overload
def solve(graph: Any, *, directed: bool = ..., unweighted: bool = ...,
          return_predecessors: Literal[False] = ..., overwrite: bool = ..., device: Any = ...,
          progress: bool = ..., check: bool = ...) -> Any: ...
@overload
def solve(graph: Any, *, directed: bool = ..., unweighted: bool = ...,
          return_predecessors: Literal[True], overwrite: bool = ..., device: Any = ...,
          progress: bool = ..., check: bool = ...) -> Tuple[Any, Any]: ...
@overload
def solve(graph: Any, *, directed: bool = ..., unweighted: bool = ...,
          return_predecessors: bool = ..., overwrite: bool = ..., device: Any = ...,
          progress: bool = ..., check: bool = ...) -> Result: ...


def solve(
    graph: Any,
    *,
    directed: bool = True,
    unweighted: bool = False,
    return_predecessors: bool = False,
    overwrite: bool = False,
    device: Any = None,
    progress: bool = False,
    check: bool = True,
) -> Result:
    """All-pairs shortest paths of a dense n x n weight matrix (blocked Floyd-Warshall).

    Parameters
    ----------
    graph : array-like (n, n) or scipy.sparse matrix
        ``graph[i, j]`` is the weight of edge i -> j. No edge: ``+inf`` for floats, any value
        ``>= apsp.INT32_INF`` / ``apsp.INT64_INF`` for integers. Zero is a real zero-weight edge;
        negative weights are allowed. NumPy arrays, scipy.sparse matrices (stored entries are
        edges, explicit zeros too, duplicates take the minimum) and device arrays (PyTorch, CuPy,
        DLPack / ``__cuda_array_interface__`` producers) are accepted; device arrays are solved
        on their own device, on the caller's current stream, and never go to the host (with a
        list of devices, copies go to the other GPUs of the list). Torch tensors
        that require grad are treated as data (the solve is not recorded by autograd). Computed
        natively: float32, float64, int32, int64. On the host, bool, int8, int16, uint8 and
        uint16 are widened to int32, uint32 to int64 and float16 to float32 (so a bool matrix has
        0/1 *weights*: False is a zero-weight edge, not a missing one). Other dtypes raise
        ``TypeError``.
    directed : bool
        False symmetrises the graph: weight(i, j) = min(G[i, j], G[j, i]).
    unweighted : bool
        True gives every edge weight 1 (hop counts).
    return_predecessors : bool
        Also return ``pred`` (int32): ``pred[i, j]`` is the vertex before j on a shortest i -> j
        path, -9999 where there is none and on the diagonal. See :func:`apsp.path`.
    overwrite : bool
        Write the distances into ``graph`` itself (no extra n^2 memory) and return it. Needs a
        writable array of a natively computed dtype whose rows are contiguous; otherwise
        ``ValueError`` saying why (never a silent copy).
    device : None, "cpu", "cuda", "cuda:N", or a list of GPUs such as ["cuda:0", "cuda:1"]
        None: device arrays stay on their device; host arrays use the first usable GPU, else the
        CPU engine. A list splits the rounds of the solve over those GPUs, each taking a share of
        the rows; the first holds the result, and for a device array it must be the GPU the
        array lives on (``ValueError`` otherwise). Each GPU holds a copy of the whole matrix, so
        a list adds speed, not room. Only as many of the list's first GPUs as pay at this n take
        part (each gets at least 3072 rows). Solves that do not split (predecessors, n < 6144,
        graphs of small integer weights on 16-bit lengths) run on the first GPU alone.
    progress : bool
        Show a progress bar (tqdm when installed, a stderr line otherwise).
    check : bool
        Device arrays only (host inputs are always checked). True (default) validates the input
        before solving (NaN, -inf, and for integers the overflow bound) and detects negative
        cycles after it. On a device array each check reads data back to the host, so each costs
        one synchronisation of the caller's stream: the input scan is one pass over the n^2
        entries plus a wait for the stream to reach it; the negative-cycle check reads the
        n-entry diagonal after the solve, so the call returns only when the solve has finished.
        False skips both and the call returns as soon as the work is enqueued (fully
        asynchronous): the caller then guarantees that there are no NaN or -inf weights and, for
        integers, that path lengths fit (|w| * (n - 1) < INF / 2); a negative cycle shows up as
        ``dist.diagonal() < 0``, which the caller can test on the device, and distances that
        can reach such a cycle are then meaningless.

    Returns
    -------
    dist, or (dist, pred) when ``return_predecessors``; the same kind of array as ``graph``
    (NumPy for NumPy and scipy.sparse input), in the computed dtype. Unreachable pairs are
    ``+inf`` (floats) or exactly the dtype's INF constant (integers); ``dist[i, i]`` is 0.

    Raises
    ------
    NegativeCycleError
        The graph has a negative cycle (a negative self-loop is one); ``.cycle`` is one, in
        order, and the message shows it (unless ``overwrite=True`` consumed the input);
        ``.vertices`` are the vertices found on negative closed walks (every vertex of a
        negative simple cycle among them, not always every vertex that has such a walk). It is
        a ``ValueError``.
    ValueError
        ``graph`` is not square 2-D (the message has the shape), holds NaN or -inf (the message
        has the index), ``overwrite=True`` is impossible (the message says why), or ``device``
        is not a device.
    TypeError
        The dtype is not accepted (the message lists what is).
    OverflowError
        A path length could overflow: (n - 1) * max|w| >= INF // 2 for integers, or past the
        largest finite value for floats, with a margin for rounding (where sums could round to
        +-inf). The message says what
        to use instead; nothing is computed and nothing wraps.
    MemoryError, RuntimeError
        Not enough device memory (bytes needed and free), a CUDA failure, or a GPU was asked
        for and none is usable.

    The input is never modified unless ``overwrite=True``; the GIL is released while computing.
    """
    if isinstance(graph, np.ma.MaskedArray):  # an ndarray subclass: np.array() would drop the mask
        raise TypeError("masked arrays are not accepted by apsp.solve (its mask would be ignored); "
                        "use apsp.floyd_warshall, which treats masked entries as non-edges as SciPy "
                        "does, or graph.filled(np.inf)")
    try:
        return _dispatch(graph, directed=directed, unweighted=unweighted,
                         return_predecessors=return_predecessors, overwrite=overwrite,
                         device=device, progress=progress, check=check)
    except NegativeCycleError as exc:
        if not overwrite:  # the input is as the caller gave it: name one cycle, in order
            from ._cycles import name_cycle

            name_cycle(exc, graph, directed)
        raise


def _dispatch(graph: Any, *, directed: bool, unweighted: bool, return_predecessors: bool,
              overwrite: bool, device: Any, progress: bool, check: bool) -> Result:
    """apsp.solve's work, by the kind of input."""
    from . import _intake

    kind = _intake.classify(graph)
    if kind == "sparse":
        from ._sparse import solve_sparse

        return solve_sparse(graph, directed=directed, unweighted=unweighted,
                            return_predecessors=return_predecessors, overwrite=overwrite,
                            device=device, progress=progress)
    if kind == "device":
        from ._device_arrays import solve_device_array

        return solve_device_array(graph, directed=directed, unweighted=unweighted,
                                  return_predecessors=return_predecessors, overwrite=overwrite,
                                  device=device, progress=progress, check=check)
    arr = _intake.as_host_array(graph)
    if overwrite and not _intake.writes_reach(graph, arr):  # a new array: writing it is no use
        raise ValueError(f"overwrite=True cannot write into a {type(graph).__name__}: it had to be "
                         "converted to a new array. Pass a NumPy array, or overwrite=False.")
    with _intake.InPlaceWrite(graph if overwrite and _intake.is_torch(graph) else None):
        result = solve_host(arr, directed=directed, unweighted=unweighted,
                            return_predecessors=return_predecessors, overwrite=overwrite,
                            device=device, progress=progress)
    return _intake.wrap_host_result(graph, result)


def check_square(shape: tuple, what: str = "graph") -> int:
    if len(shape) != 2 or shape[0] != shape[1]:
        batch = len(shape) == 3 and shape[1] == shape[2]
        raise ValueError(f"{what} must be a square 2-D (n, n) array, got shape {tuple(shape)}"
                         + ("; for a batch of graphs use apsp.solve_batch" if batch else ""))
    return int(shape[0])


def host_work_array(arr: np.ndarray, overwrite: bool) -> np.ndarray:
    """The array the engine writes: `arr` itself (overwrite=True) or a fresh C-ordered copy."""
    dtype = arr.dtype
    target = computed_dtype(dtype)
    if not overwrite:
        return np.array(arr, dtype=target, order="C", copy=True)
    reasons = _layout_problems(arr)
    if not arr.flags.writeable:
        reasons.append("it is read-only")
    if reasons:
        raise ValueError("overwrite=True cannot write into this graph: " + "; ".join(reasons) +
                         ". Pass overwrite=False to get a new array.")
    return arr


def host_target(device: Any) -> Target:
    target = parse_device(device)
    return default_host_target() if target is None else target


def solve_host(
    arr: np.ndarray,
    *,
    directed: bool,
    unweighted: bool,
    return_predecessors: bool,
    overwrite: bool,
    device: Any,
    progress: bool,
    _check_input: bool = True,
) -> Result:
    """Solve a host NumPy array on the chosen engine; NumPy results."""
    n = check_square(arr.shape)
    dtype = computed_dtype(arr.dtype)  # TypeError first, whatever the device
    need, what = new_arrays(n, None if overwrite else dtype.name, return_predecessors)
    check_host_memory(need, what, "use a machine with more memory" if overwrite else
                      "overwrite=True writes the distances into the input instead")
    pred = np.empty((n, n), dtype=np.int32) if return_predecessors else None
    target = host_target(device)  # a bad or unusable device raises even for an empty graph
    if n == 0:
        work = host_work_array(arr, overwrite)
        return (work, pred) if return_predecessors else work
    if target.engine == "cuda" and not overwrite and not _layout_problems(arr):
        # The CUDA engine reads `arr` without writing it and fills a new array: no host copy.
        source, out = arr, np.empty((n, n), dtype=arr.dtype)
    else:
        source, out = host_work_array(arr, overwrite), None
    bar = make_progress(progress, f"apsp n={n} {target.label}")
    try:
        _core.solve_host(source, pred, target.engine, max(target.index, 0), bool(directed),
                         bool(unweighted), _check_input, True, bar, out, list(target.helpers))
    finally:
        if bar is not None:
            bar.close()
    work = source if out is None else out
    return (work, pred) if return_predecessors else work


def _layout_problems(arr: np.ndarray) -> list[str]:
    """Why the engines cannot take `arr` as it is (a native dtype in this machine's byte order,
    aligned, rows contiguous, a positive row stride in whole elements, rows that do not overlap);
    empty when they can."""
    reasons = []
    if arr.dtype.byteorder not in "=|":
        reasons.append(f"its dtype {arr.dtype.str} is not in this machine's byte order")
    elif arr.dtype not in NATIVE_DTYPES:
        reasons.append(f"its dtype {arr.dtype} is not computed natively (float32, float64, int32, int64)")
    if not arr.flags.aligned:
        reasons.append(f"its data is not aligned to its {arr.itemsize}-byte elements (address "
                       f"{arr.ctypes.data:#x})")
    if arr.shape[0] > 1 and arr.strides[1] != arr.itemsize:
        reasons.append(f"its rows are not contiguous (strides {arr.strides})")
    elif arr.shape[0] > 1 and (arr.strides[0] <= 0 or arr.strides[0] % arr.itemsize):
        reasons.append(f"its row stride {arr.strides[0]} is not a positive multiple of the itemsize")
    elif arr.shape[0] > 1 and arr.strides[0] < arr.shape[1] * arr.itemsize:
        reasons.append(f"its rows overlap (row stride {arr.strides[0]} bytes, rows of "
                       f"{arr.shape[1] * arr.itemsize})")
    return reasons
