"""Where a solve runs: parse the ``device`` argument and know which GPUs are usable."""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

from . import _core


class Target(NamedTuple):
    engine: str  # "cpu" or "cuda"
    index: int  # CUDA device ordinal, -1 for the CPU


CPU = Target("cpu", -1)


@functools.lru_cache(maxsize=1)
def cuda_devices() -> tuple[tuple[dict, ...], str | None]:
    """(usable devices, why none) as the compiled core reports them; asked once per process."""
    facts = _core.info()
    return tuple(facts["devices"]), facts["why_no_devices"]


def parse_device(device: Any) -> Target | None:
    """None stays None (the caller decides); 'cpu', 'cuda', 'cuda:N', an int N, or torch.device."""
    if device is None:
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        text = f"cuda:{device}"
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
