"""Probe (forty-ninth session): how soon Ctrl-C stops a float32 host solve whose SIGINT lands
during the upload (uploaded whole before the first round), against the upload's own time
(APSP_CUDA_TRACE's "upload" stage, read from one traced solve). Usage: upload_interrupt.py [N ...]"""
import _thread
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np

import apsp


class Interrupted(Exception):
    pass


def handler(signum, frame):
    raise Interrupted()


def stop_after(solve, at):
    timer = threading.Timer(at, _thread.interrupt_main)
    old = signal.signal(signal.SIGINT, handler)
    outcome = "ran to the end"
    try:
        timer.start()
        t0 = time.perf_counter()
        try:
            solve()
        except Interrupted:
            outcome = "interrupted"
        elapsed = time.perf_counter() - t0
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    return outcome, elapsed


if len(sys.argv) > 1 and sys.argv[1] == "--traced":  # one traced solve, in a child process
    n = int(sys.argv[2])
    apsp.solve(np.ones((n, n), np.float32))
    sys.exit(0)

for n in [int(a) for a in sys.argv[1:]] or [16384, 24576]:
    child = subprocess.run([sys.executable, __file__, "--traced", str(n)], capture_output=True,
                           text=True, env=dict(os.environ, APSP_CUDA_TRACE="1"))
    print(f"n={n} trace:", " | ".join(l for l in child.stderr.splitlines() if "upload" in l))
    g = np.random.default_rng(n).integers(1, 100, (n, n), dtype=np.int32).astype(np.float32)
    np.fill_diagonal(g, 0)
    before = g.copy()
    t0 = time.perf_counter()
    apsp.solve(g)
    full = time.perf_counter() - t0
    for at in (0.01, 0.05, 0.1, full / 10):
        outcome, elapsed = stop_after(lambda: apsp.solve(g), at)
        assert np.array_equal(g, before)
        print(f"host float32 n={n}: full {full * 1e3:7.1f} ms; SIGINT at {at * 1e3:6.1f} ms; "
              f"{outcome} after {elapsed * 1e3:7.1f} ms")
