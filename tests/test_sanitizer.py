"""The GPU tier's compute-sanitizer pass: memcheck and racecheck over every CUDA kernel on small n
(benchmarks/sanitize_driver.py --quick checks each solve against the CPU engine and its
predecessors as well). benchmarks/gpu_check.sh runs the longer pass over more sizes and plans."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DRIVER = Path(__file__).resolve().parent.parent / "benchmarks" / "sanitize_driver.py"


def sanitizer() -> str:
    """compute-sanitizer from PATH or the CUDA toolkit the engine was built with."""
    places = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    found = shutil.which("compute-sanitizer") or next(
        (str(Path(p) / "bin" / "compute-sanitizer") for p in places
         if p and (Path(p) / "bin" / "compute-sanitizer").is_file()), None)
    if found is None:
        pytest.skip("compute-sanitizer is not on PATH nor in CUDA_HOME/bin (the CUDA toolkit has it)")
    return found


@pytest.mark.gpu
@pytest.mark.parametrize(("tool", "args", "clean"), [
    ("memcheck", ["auto"], "ERROR SUMMARY: 0 errors"),
    # racecheck: the round loop's kernels (the driver's docstring says why not the cluster's)
    ("racecheck", ["--no-cluster", "auto", "k64d"], "RACECHECK SUMMARY: 0 hazards displayed"),
])
def test_compute_sanitizer_reports_nothing(tool, args, clean):
    proc = subprocess.run([sanitizer(), "--tool", tool, "--error-exitcode", "9", sys.executable,
                           str(DRIVER), "--quick", *args],
                          capture_output=True, text=True, timeout=900)
    tail = (proc.stdout + proc.stderr)[-3000:]
    assert proc.returncode == 0, tail
    assert clean in proc.stdout + proc.stderr, tail
    assert "solves match the CPU engine" in proc.stdout, tail
