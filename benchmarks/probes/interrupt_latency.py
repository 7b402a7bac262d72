"""Probe (forty-fifth session): how soon Ctrl-C stops a CUDA solve that the host waits for (a
host array, a torch tensor with the checks on), against the solve's full time; and that
listing devices made no CUDA context. SIGINT is sent from a timer thread a tenth of the way
into a solve whose full time was measured just before. Usage: interrupt_latency.py [N ...]"""
import _thread
import ctypes
import signal
import sys
import threading
import time

import numpy as np

import apsp

cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
flags, active = ctypes.c_uint(), ctypes.c_int()
assert cuda.cuDevicePrimaryCtxGetState(0, ctypes.byref(flags), ctypes.byref(active)) == 0
facts = apsp.info()
print("after import and apsp.info(): primary context on cuda:0 active =", active.value,
      "; free memory", facts["devices"][0]["free_memory"])


class Interrupted(Exception):
    pass


def handler(signum, frame):
    raise Interrupted()


def run(label, solve):
    t0 = time.perf_counter()
    solve()
    full = time.perf_counter() - t0
    timer = threading.Timer(full / 10, _thread.interrupt_main)
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
    print(f"{label}: full {full * 1e3:8.1f} ms; SIGINT at {full * 100:6.1f} ms; {outcome} after "
          f"{elapsed * 1e3:8.1f} ms ({elapsed / full:.0%} of the full solve)")


for n in [int(a) for a in sys.argv[1:]] or [8192, 16384, 32768]:
    g = np.random.default_rng(n).integers(1, 100, (n, n), dtype=np.int32)
    np.fill_diagonal(g, 0)
    run(f"host int32 n={n}", lambda: apsp.solve(g))
    f = g.astype(np.float32)
    run(f"host float32 n={n}", lambda: apsp.solve(f))
    import torch
    t = torch.from_numpy(g).cuda()
    run(f"torch int32 n={n}, checks on", lambda: apsp.solve(t))
    del t, f
