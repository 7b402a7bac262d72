"""Probe (forty-fourth session): apsp's round-loop graph capture (n <= 4096, one per new size)
against a device-wide sync in another thread. Modes:
  sync   another thread loops torch.cuda.synchronize() (a user's sync: the CUDA 13.0 driver can
         crash inside cudaEventRecord in that race, with or without apsp)
  drop   another thread solves an interface-only device array and drops the result (apsp's own
         DeviceBuffer free, which used cudaDeviceSynchronize before this session)
  none   no other thread
Prints the solves done and the other thread's successes and failures; a crash shows as a
nonzero exit (run it under `timeout`, several times). Usage: capture_race.py MODE"""
import faulthandler
import sys
import threading

import numpy as np
import torch

import apsp

faulthandler.enable(all_threads=True)
mode = sys.argv[1]
rng = np.random.default_rng(0)
stop = threading.Event()
counts = {"ok": 0, "err": 0}
messages = []


class InterfaceOnly:
    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


small = torch.from_numpy(rng.integers(1, 9, (64, 64)).astype(np.int32)).cuda()


def other():
    while not stop.is_set():
        try:
            if mode == "sync":
                torch.cuda.synchronize()
            else:
                r = apsp.solve(InterfaceOnly(small))
                del r
            counts["ok"] += 1
        except RuntimeError as e:
            counts["err"] += 1
            messages.append(str(e)[:100])


thread = threading.Thread(target=other) if mode != "none" else None
if thread:
    thread.start()
done = 0
try:
    for n in range(1800, 2600, 8):
        apsp.solve(rng.integers(1, 100, (n, n)).astype(np.int32))
        done += 1
finally:
    stop.set()
    if thread:
        thread.join()
print(f"{mode}: {done} solves; other thread {counts}; {messages[:2]}", flush=True)
