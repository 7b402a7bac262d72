"""Classify what was passed to apsp.solve, and bring host inputs to NumPy and back.

Kinds: "sparse" (scipy.sparse), "device" (an array that lives on a GPU: PyTorch, CuPy, or any
DLPack / __cuda_array_interface__ producer), "host" (NumPy and anything NumPy can read).
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

# DLPack device types whose memory the host can read (CPU, CUDA pinned, ROCm pinned).
_DLPACK_HOST_TYPES = (1, 3, 11)


def classify(graph: Any) -> str:
    cls = type(graph)
    module = cls.__module__
    sparse = sys.modules.get("scipy.sparse")  # no scipy.sparse object exists before its import
    if sparse is not None and sparse.issparse(graph):  # subclasses too
        return "sparse"
    if isinstance(graph, np.ndarray):
        return "host"
    if is_torch(graph):  # checked first: cheap, and its CAI property raises under requires_grad
        return "host" if graph.is_cpu else "device"
    if module == "cupy" or module.startswith("cupy."):
        return "device"
    dlpack_device = getattr(graph, "__dlpack_device__", None)
    if dlpack_device is not None:
        try:
            device_type = int(dlpack_device()[0])
        except Exception:  # a producer that cannot say where it lives is treated as host
            return "host"
        return "host" if device_type in _DLPACK_HOST_TYPES else "device"
    # Look on the class first so that a property is not evaluated just to classify.
    if getattr(cls, "__cuda_array_interface__", None) is not None:
        return "device"
    try:
        return "device" if hasattr(graph, "__cuda_array_interface__") else "host"
    except Exception:  # a producer whose interface cannot be read here is not a device array
        return "host"


def is_torch(graph: Any) -> bool:
    """A torch.Tensor, subclasses defined anywhere included (torch is imported once one exists)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(graph, torch.Tensor)


def check_torch_layout(tensor: Any) -> None:
    """TypeError for a sparse or otherwise non-strided tensor, which has no dense memory to read."""
    torch = sys.modules["torch"]
    if tensor.layout != torch.strided:
        raise TypeError(f"graph is a torch tensor with layout {tensor.layout}; apsp takes dense "
                        "tensors: call tensor.to_dense(), or pass a scipy.sparse matrix")


def as_torch_kind(graph: Any, tensor: Any) -> Any:
    """`tensor` as the type torch's own operations return for `graph`: a subclass stays one, unless
    it turns torch functions off (as nn.Parameter does, whose results are plain tensors)."""
    cls = type(graph)
    torch = sys.modules["torch"]
    if cls is torch.Tensor or type(tensor) is cls:
        return tensor
    if getattr(cls, "__torch_function__", None) is torch._C._disabled_torch_function_impl:
        return tensor
    return tensor.as_subclass(cls)


class InPlaceWrite:
    """``with InPlaceWrite(tensor):`` around a solve that writes `tensor` behind autograd's back
    (None: nothing to tell). Its version is bumped after the block, so that a graph that saved it
    for backward raises instead of using stale values; after an error too where the solve may
    have written: after its rounds (a negative cycle) or during them (Ctrl-C, a CUDA error), not
    on the input checks' errors (NaN, overflow, dtype, device, memory), which come first."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        if self.tensor is not None:
            from ._errors import NegativeCycleError

            wrote = (NegativeCycleError, KeyboardInterrupt, RuntimeError)
            if exc is None or isinstance(exc, wrote):
                bump_version(self.tensor)
        return False


def bump_version(tensor: Any) -> None:
    """Tell autograd the tensor changed in place (apsp wrote it behind torch's back), so a graph
    that saved it for backward raises instead of using stale values."""
    bump = _torch_increment_version()
    if bump is not None:
        bump(tensor)


_INCREMENT_VERSION: list = []


def _torch_increment_version() -> Any:
    if not _INCREMENT_VERSION:
        import torch.autograd

        graph = getattr(torch.autograd, "graph", None)
        _INCREMENT_VERSION.append(getattr(graph, "increment_version", None))
    return _INCREMENT_VERSION[0]


def as_host_array(graph: Any) -> np.ndarray:
    """A NumPy view of a host input (no copy where possible); torch CPU tensors are detached
    (tensors with requires_grad are treated as data)."""
    if isinstance(graph, np.ndarray):
        return graph
    if is_torch(graph):
        check_torch_layout(graph)
        tensor = graph.detach()
        if tensor.is_neg() or tensor.is_conj():  # lazy views: .numpy() refuses them
            tensor = tensor.resolve_conj().resolve_neg()
        try:
            return tensor.numpy()
        except TypeError:  # a dtype NumPy lacks (bfloat16, float8): apsp's own message
            from ._solve import ACCEPTED

            raise TypeError(f"graph has dtype {str(tensor.dtype).replace('torch.', '')}, which "
                            f"apsp does not compute in; accepted: {ACCEPTED}") from None
    if hasattr(graph, "__dlpack__"):
        try:
            return np.from_dlpack(graph)
        except (TypeError, BufferError, RuntimeError):
            pass
    arr = np.asarray(graph)
    if arr.ndim == 0 and arr.dtype.kind in "OUSV":  # None, a string, some other object
        raise TypeError(f"expected a square 2-D array (NumPy, nested lists, scipy.sparse, or a "
                        f"PyTorch / CuPy / DLPack device array), got {type(graph).__name__}")
    return arr


def to_host(x: Any) -> np.ndarray:
    """NumPy data of any array apsp accepts: host inputs as as_host_array gives them, CuPy and
    torch device arrays copied back (validate's reference and the negative-cycle search)."""
    if classify(x) != "device":
        return as_host_array(x)
    if hasattr(x, "get"):  # CuPy
        return x.get()
    if hasattr(x, "detach"):  # torch
        return x.detach().cpu().numpy()
    return np.asarray(x)


def writes_reach(graph: Any, arr: np.ndarray) -> bool:
    """Whether writing `arr` (from as_host_array(graph)) writes `graph`'s own memory: `arr` is
    `graph`, or a view that converting `graph` again gives back (a fresh array each time, as a
    list or an `__array__` that builds a temporary gives, is not the caller's memory)."""
    if arr is graph:
        return True
    if arr.flags.owndata:
        return False
    again = as_host_array(graph)
    return (again.__array_interface__["data"][0] == arr.__array_interface__["data"][0]
            and again.strides == arr.strides)


def wrap_host_result(graph: Any, result: Any) -> Any:
    """Output kind follows input kind: host torch tensors in, host torch tensors out (the input
    tensor itself when the result was written into its memory, overwrite=True)."""
    if not is_torch(graph):
        return result
    import torch

    def as_torch(r: np.ndarray) -> Any:
        if r.__array_interface__["data"][0] == graph.data_ptr() and r.shape == tuple(graph.shape):
            return graph
        return as_torch_kind(graph, torch.from_numpy(r))

    if isinstance(result, tuple):
        return tuple(as_torch(r) for r in result)
    return as_torch(result)
