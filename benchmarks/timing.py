"""Host wall-clock timing shared by the benchmarks (what a user of a host API waits), the
environment switches their rows are timed under (env_set, the tests' own helper: the benchmarks
run from a checkout, with tests/graphs.py and its imports, SciPy among them), and the CUDA
engine's trace lines of a call (engine_trace)."""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from graphs import env_set  # noqa: E402,F401  (re-exported: the benchmarks import it from here)


def engine_trace(call: Callable[[], Any], *prefixes: str) -> Tuple[Any, List[str]]:
    """Run `call` with APSP_CUDA_TRACE=1 and the process's stderr (fd 2, where the C++ engine
    writes) into a temporary file: (its result, the stderr lines starting with one of
    `prefixes`)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try:
            with env_set(APSP_CUDA_TRACE="1"):
                out = call()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        lines = f.read().decode(errors="replace").splitlines()
    return out, [line for line in lines if line.startswith(prefixes)]


def wall_times(call: Callable[[], Any], reps: int) -> Tuple[List[float], Any]:
    """Seconds of each of `reps` calls, and the last call's result."""
    times, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - t0)
    return times, result
