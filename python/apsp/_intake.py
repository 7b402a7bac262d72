"""Classify what was passed to apsp.solve, and bring host inputs to NumPy and back.

Kinds: "sparse" (scipy.sparse), "device" (an array that lives on a GPU: PyTorch, CuPy, or any
DLPack / __cuda_array_interface__ producer), "host" (NumPy and anything NumPy can read).
"""
from __future__ import annotations

from typing import Any

import numpy as np

_DLPACK_CPU = 1


def classify(graph: Any) -> str:
    if type(graph).__module__.startswith("scipy.sparse"):
        import scipy.sparse

        if scipy.sparse.issparse(graph):
            return "sparse"
    if isinstance(graph, np.ndarray):
        return "host"
    if hasattr(graph, "__cuda_array_interface__"):
        return "device"
    dlpack_device = getattr(graph, "__dlpack_device__", None)
    if dlpack_device is not None:
        try:
            device_type = int(dlpack_device()[0])
        except Exception:  # a producer that cannot say where it lives is treated as host
            return "host"
        if device_type != _DLPACK_CPU:
            return "device"
    return "host"


def _is_torch(graph: Any) -> bool:
    return type(graph).__module__.startswith("torch") and hasattr(graph, "detach")


def as_host_array(graph: Any) -> np.ndarray:
    """A NumPy view of a host input (no copy where possible); torch CPU tensors are detached
    (tensors with requires_grad are treated as data)."""
    if isinstance(graph, np.ndarray):
        return graph
    if _is_torch(graph):
        return graph.detach().numpy()
    if isinstance(graph, np.ma.MaskedArray):
        raise TypeError("masked arrays are not accepted by apsp.solve (use apsp.floyd_warshall, "
                        "whose SciPy semantics treat masked entries as non-edges, or fill with inf)")
    if hasattr(graph, "__dlpack__"):
        try:
            return np.from_dlpack(graph)
        except (TypeError, BufferError, RuntimeError):
            pass
    return np.asarray(graph)


def wrap_host_result(graph: Any, result: Any) -> Any:
    """Output kind follows input kind: host torch tensors in, host torch tensors out."""
    if not _is_torch(graph):
        return result
    import torch

    if isinstance(result, tuple):
        return tuple(torch.from_numpy(r) for r in result)
    return torch.from_numpy(result)
