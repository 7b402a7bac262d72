"""Host wall-clock timing shared by the benchmarks (what a user of a host API waits), and the
environment switches their rows are timed under (env_set, the tests' own helper: the benchmarks
run from a checkout, with tests/graphs.py and its imports, SciPy among them)."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from graphs import env_set  # noqa: E402,F401  (re-exported: the benchmarks import it from here)


def wall_times(call: Callable[[], Any], reps: int) -> Tuple[List[float], Any]:
    """Seconds of each of `reps` calls, and the last call's result."""
    times, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - t0)
    return times, result
