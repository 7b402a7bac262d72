"""Host wall-clock timing shared by the benchmarks (what a user of a host API waits), and the
environment switches their rows are timed under."""
from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Callable, Iterator, List, Tuple


@contextlib.contextmanager
def env_set(**env: str) -> Iterator[None]:
    """Environment variables set inside the block (the engines read them per solve: a forced plan,
    APSP_CUDA_MIN3=0, APSP_CPU_NARROW=0), restored afterwards."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def wall_times(call: Callable[[], Any], reps: int) -> Tuple[List[float], Any]:
    """Seconds of each of `reps` calls, and the last call's result."""
    times, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - t0)
    return times, result
