"""Probe: would registering the caller's NumPy array (cudaHostRegister, chunk by chunk) beat the
pinned staging path end to end at n = 10000 int32? Calls taken in turn, medians of 9:
  staged     apsp.solve(numpy, overwrite=True): the engine's path (staging, upload overlapped)
  solve      apsp.solve(numpy): the public call with a new output
  registered each page-aligned chunk registered then copied on a stream, the device solve on the
             same stream, the chunks copied back and unregistered as each one lands
  device     the device solve alone (CuPy array in place), for the ratios
and the registration's own costs (whole array, one thread; chunks from 8 threads).
Usage: python benchmarks/probes/host_register.py [N] [CHUNK_MB]"""
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import cupy as cp
import numpy as np

import apsp

rt = cp.cuda.runtime
n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
chunk = (int(sys.argv[2]) if len(sys.argv) > 2 else 32) << 20
page = 4096
rng = np.random.default_rng(1)
host = rng.integers(1, 100, (n, n), dtype=np.int32)
host[rng.random((n, n)) < 0.7] = apsp.INT32_INF
np.fill_diagonal(host, 0)
work = np.empty_like(host)
dev = cp.empty((n, n), cp.int32)
stream = cp.cuda.Stream(non_blocking=True)


def ranges(arr):
    """Page-aligned pieces of about `chunk` bytes covering arr's buffer, none sharing a page."""
    a, end = arr.ctypes.data, arr.ctypes.data + arr.nbytes
    out = []
    while a < end:
        b = min(end, (a + chunk) // page * page if (a + chunk) < end else end)
        b = max(b, min(end, (a // page + 1) * page))
        out.append((a, b))
        a = b
    return out


def registered(arr):
    base, dptr = arr.ctypes.data, dev.data.ptr
    pieces = ranges(arr)
    for a, b in pieces:
        rt.hostRegister(a, b - a, 0)
        rt.memcpyAsync(dptr + (a - base), a, b - a, rt.memcpyHostToDevice, stream.ptr)
    with stream:
        apsp.solve(dev, overwrite=True)
    events = []
    for a, b in pieces:
        rt.memcpyAsync(a, dptr + (a - base), b - a, rt.memcpyDeviceToHost, stream.ptr)
        ev = cp.cuda.Event(disable_timing=True)
        ev.record(stream)
        events.append(ev)
    for (a, _), ev in zip(pieces, events):
        ev.synchronize()
        rt.hostUnregister(a)


def staged(arr):
    apsp.solve(arr, overwrite=True, device="cuda")


def solve(arr):
    apsp.solve(arr, device="cuda")


def device(_):
    dev.set(host)
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    with stream:
        apsp.solve(dev, overwrite=True)
    stream.synchronize()
    return time.perf_counter() - t0


expected = apsp.solve(host, device="cuda")
ways = {"staged": staged, "solve": solve, "registered": registered, "device": device}
times = {k: [] for k in ways}
for rep in range(10):
    for name, fn in ways.items():
        np.copyto(work, host)
        t0 = time.perf_counter()
        t = fn(work)
        t = time.perf_counter() - t0 if t is None else t
        if rep:
            times[name].append(t * 1e3)
        if name in ("staged", "registered") and not np.array_equal(work, expected):
            raise SystemExit(f"{name}: wrong result")
d = np.median(times["device"])
for name, v in times.items():
    print(f"{name:10s} median {np.median(v):7.1f} ms ({np.median(v) / d:.2f}x device)  "
          f"min {min(v):7.1f}  max {max(v):7.1f}  {' '.join(f'{x:.0f}' for x in v)}")

for rep in range(3):
    t0 = time.perf_counter()
    rt.hostRegister(work.ctypes.data, work.nbytes, 0)
    t1 = time.perf_counter()
    rt.hostUnregister(work.ctypes.data)
    t2 = time.perf_counter()
    pieces = ranges(work)
    with ThreadPoolExecutor(8) as ex:
        t3 = time.perf_counter()
        list(ex.map(lambda p: rt.hostRegister(p[0], p[1] - p[0], 0), pieces))
        t4 = time.perf_counter()
        list(ex.map(lambda p: rt.hostUnregister(p[0]), pieces))
        t5 = time.perf_counter()
    print(f"whole array: register {1e3 * (t1 - t0):.1f} ms, unregister {1e3 * (t2 - t1):.1f} ms; "
          f"{len(pieces)} chunks from 8 threads: register {1e3 * (t4 - t3):.1f} ms, "
          f"unregister {1e3 * (t5 - t4):.1f} ms")
