"""Host wall-clock timing shared by the benchmarks: what a user of a host API waits."""
from __future__ import annotations

import time
from typing import Any, Callable, List, Tuple


def wall_times(call: Callable[[], Any], reps: int) -> Tuple[List[float], Any]:
    """Seconds of each of `reps` calls, and the last call's result."""
    times, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - t0)
    return times, result
