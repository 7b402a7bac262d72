"""How much host memory this process could still get, so that a too-large n is refused with the
bytes it needs instead of being killed by the kernel's OOM killer part-way (Linux overcommits:
a large np.empty succeeds and fails only when its pages are touched). An estimate: memory that
others take meanwhile, and temporaries not counted, can still run out."""
from __future__ import annotations

import os
from typing import Optional


# Below this, no check: reading /proc costs ~20 us, as much as a whole small solve.
_CHECK_FROM = 1 << 30


def available_memory() -> Optional[int]:
    """Bytes of memory this process could still get, or None: Linux's MemAvailable (swap not
    counted), and no more than its cgroup v2 limit leaves (containers, batch schedulers)."""
    found = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if found is None:
        try:
            found = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        with open("/sys/fs/cgroup/memory.current") as f:
            current = int(f.read().strip())
        if limit != "max":
            found = min(found, max(0, int(limit) - current))
    except (OSError, ValueError):
        pass
    return found


def check_host_memory(need: int, what: str, hint: str) -> None:
    """MemoryError naming `need` bytes for `what` and what is available, when they do not fit."""
    if need < _CHECK_FROM:
        return
    available = available_memory()
    if available is not None and need > available:
        raise MemoryError(f"{what} needs {need / 2**30:.1f} GiB of host memory ({need} bytes) but "
                          f"this machine has {available / 2**30:.1f} GiB available; {hint}")


def new_arrays(n: int, result: "Optional[str]", predecessors: bool) -> tuple[int, str]:
    """(bytes, words) of the host arrays a solve is about to make: a new `result` dtype's n x n
    (None: it computes in place) and int32 predecessors."""
    import numpy as np

    parts = [(np.dtype(result).itemsize, f"a new {result} result")] if result else []
    if predecessors:
        parts.append((4, "int32 predecessors"))
    return n * n * sum(b for b, _ in parts), f"n={n} with " + " and ".join(w for _, w in parts)
