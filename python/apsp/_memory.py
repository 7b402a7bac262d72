"""How much host memory this process could still get, so that a too-large n is refused with the
bytes it needs instead of being killed by the kernel's OOM killer part-way (Linux overcommits:
a large np.empty succeeds and fails only when its pages are touched)."""
from __future__ import annotations

import os
from typing import Optional


def available_memory() -> Optional[int]:
    """Bytes of memory this process could still get (MemAvailable on Linux), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_host_memory(need: int, what: str, hint: str) -> None:
    """MemoryError naming `need` bytes for `what` and what is available, when they do not fit."""
    available = available_memory()
    if available is not None and need > available:
        raise MemoryError(f"{what} needs {need / 2**30:.1f} GiB of host memory ({need} bytes) but "
                          f"this machine has {available / 2**30:.1f} GiB available; {hint}")
