"""Probe: the SM clock, power and clock-event reasons (NVML, sampled every millisecond) while the
ceiling binaries run and while apsp solves int32 n = 10000, so that a ceiling reading and a solve
time can be compared at the clocks they ran at. GPU_NOTES.md, thirty-seventh session.

Usage: python benchmarks/probes/clocks.py BIN_DIR [ceiling binaries ...]"""
from __future__ import annotations

import ctypes
import json
import subprocess
import sys
import threading
import time

import numpy as np

nv = ctypes.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
handle = ctypes.c_void_p()
assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0


def sample() -> tuple[int, int, int]:
    mhz, mw, why = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_ulonglong()
    nv.nvmlDeviceGetClockInfo(handle, 1, ctypes.byref(mhz))  # NVML_CLOCK_SM
    nv.nvmlDeviceGetPowerUsage(handle, ctypes.byref(mw))
    getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) and nv.nvmlDeviceGetCurrentClocksEventReasons(handle, ctypes.byref(why))
    return mhz.value, mw.value, why.value


class Sampler:
    def __enter__(self):
        self.rows, self.stop = [], False
        self.t = threading.Thread(target=self.run)
        self.t.start()
        return self

    def run(self):
        while not self.stop:
            self.rows.append(sample())
            time.sleep(0.001)

    def __exit__(self, *exc):
        self.stop = True
        self.t.join()

    def summary(self, busy_w: float = 200e3) -> str:
        a = np.array(self.rows)
        busy = a[a[:, 1] > busy_w] if (a[:, 1] > busy_w).any() else a
        reasons = sorted({hex(int(x)) for x in busy[:, 2]})
        return (f"{len(busy)}/{len(a)} busy samples: SM clock min {busy[:, 0].min()} median "
                f"{np.median(busy[:, 0]):.0f} max {busy[:, 0].max()} MHz; power median "
                f"{np.median(busy[:, 1]) / 1e3:.0f} max {busy[:, 1].max() / 1e3:.0f} W; reasons {reasons}")


def ceilings(binary: str) -> None:
    with Sampler() as s:
        out = subprocess.run([binary], capture_output=True, text=True, check=True).stdout
    doc = json.loads(out)
    row = " ".join(f"{c['dtype']} {c['updates_per_s'] / 1e12:.3f}"
                   + (f" ({c['sm_clock_mhz']:.0f} MHz, {c['per_sm_clock']:.2f}/SM/clk, "
                      f"{c['blocks_per_sm']}/SM)" if "sm_clock_mhz" in c else "")
                   for c in doc["ceilings"])
    print(f"{binary}: {row}\n    {s.summary()}", flush=True)


def solves() -> None:
    sys.path.insert(0, "benchmarks")
    from bench_gpu import random_graph, time_device
    n = 10000
    orig = random_graph(n, "int32")
    with Sampler() as smp:
        seconds = time_device(orig, 7, checks=False)
    print(f"int32 n = 10000: median {seconds * 1e3:.2f} ms, {n ** 3 / seconds / 1e12:.3f} T\n"
          f"    {smp.summary()}", flush=True)


if __name__ == "__main__":
    print("idle:", sample())
    for b in sys.argv[1:]:
        if b == "solve":
            solves()
        else:
            ceilings(b)
