"""Where a solve runs: parse the ``device`` argument and know which GPUs are usable."""
from __future__ import annotations

import functools
import os
from typing import Any, NamedTuple

import numpy as np

from . import _core


class Target(NamedTuple):
    engine: str  # "cpu" or "cuda"
    index: int  # CUDA device ordinal, -1 for the CPU
    helpers: tuple[int, ...] = ()  # more CUDA ordinals that share a solve's rounds

    @property
    def label(self) -> str:
        """'cpu', 'cuda:0', or 'cuda:0+1' for a solve split over cuda:0 and cuda:1."""
        if self.engine == "cpu":
            return "cpu"
        return f"cuda:{self.index}" + "".join(f"+{h}" for h in self.helpers)


CPU = Target("cpu", -1)


@functools.lru_cache(maxsize=1)
def cuda_devices() -> tuple[tuple[dict, ...], str | None]:
    """(usable devices, why none) as the compiled core reports them; asked once per process."""
    if _cuda_lost_in_fork:
        return (), ("this process was forked from one that had initialised CUDA, and CUDA cannot "
                    "be used after fork(); start workers with multiprocessing's 'spawn' or "
                    "'forkserver' method to use the GPU there")
    facts = _core.info()
    return tuple(facts["devices"]), facts["why_no_devices"]


_cuda_lost_in_fork = False


def _after_fork_in_child() -> None:
    """A parent that asked CUDA for its devices (cuInit) leaves its forked children without CUDA:
    their host arrays go to the CPU engine and device='cuda' says why, instead of a CUDA
    initialisation error. (A parent whose CUDA another library started shows that error's text.)"""
    global _cuda_lost_in_fork
    if cuda_devices.cache_info().currsize and cuda_devices()[0]:
        _cuda_lost_in_fork = True
        cuda_devices.cache_clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def parse_device(device: Any) -> Target | None:
    """None stays None (the caller decides); 'cpu', 'cuda', 'cuda:N', an int N, or torch.device;
    or a list or tuple of GPUs (any of those but 'cpu'), each named once, which split a solve:
    the first holds the result, the others are its helpers."""
    if device is None:
        return None
    if isinstance(device, (list, tuple)):
        return _parse_device_list(device)
    if isinstance(device, (int, np.integer)) and not isinstance(device, bool):
        text = f"cuda:{int(device)}"
    else:
        text = str(device)
    if text == "cpu":
        return CPU
    if text == "cuda" or text.startswith("cuda:"):
        index = 0
        if text != "cuda":
            try:
                index = int(text[5:])
            except ValueError:
                index = -1
        if index < 0:
            raise ValueError(f"device={device!r} is not a valid device; use 'cpu', 'cuda' or 'cuda:N'")
        return require_cuda(index, device)
    raise ValueError(f"device={device!r} is not a valid device; use 'cpu', 'cuda' or 'cuda:N'")


def _parse_device_list(devices: list | tuple) -> Target:
    if not devices:
        raise ValueError("device=[] names no device; pass a GPU or a list of GPUs, e.g. "
                         "device=['cuda:0', 'cuda:1'], or leave device=None")
    if any(d is None or isinstance(d, (list, tuple)) or str(d) == "cpu" for d in devices):
        raise ValueError(f"device={devices!r}: a list of devices names GPUs only ('cuda:N' or N); "
                         "use device='cpu' alone for the CPU engine")
    indices = [parse_device(d).index for d in devices]
    for i in indices:
        if indices.count(i) > 1:
            raise ValueError(f"device={devices!r} names cuda:{i} more than once; name each GPU once")
    return Target("cuda", indices[0], tuple(indices[1:]))


def require_cuda(index: int, asked: Any) -> Target:
    devices, why = cuda_devices()
    if not devices:
        raise RuntimeError(f"device={asked!r} was requested but no GPU is usable: {why}; use device='cpu'")
    if index >= len(devices):
        raise ValueError(f"device={asked!r}: there are {len(devices)} usable GPU(s) (cuda:0..cuda:{len(devices) - 1})")
    return Target("cuda", index)


def default_host_target() -> Target:
    """Host arrays go to the first usable GPU, else to the CPU engine."""
    devices, _ = cuda_devices()
    return Target("cuda", 0) if devices else CPU
