"""The machine description every benchmark writes into its JSON (the `machine` field of the
schema in report.py): CPU model, cores, and for GPU runs the GPU name, driver and CUDA version."""
from __future__ import annotations

import os
import platform
import subprocess
from typing import Any


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_driver() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout.split()
        return out[0] if out else None
    except (OSError, subprocess.CalledProcessError):
        return None


def machine(gpu: bool = True) -> dict[str, Any]:
    """{"cpu", "cores", "gpu", "driver", "cuda"}; the GPU fields through torch (device 0)."""
    facts: dict[str, Any] = {"cpu": cpu_model(), "cores": os.cpu_count(), "gpu": None,
                             "driver": None, "cuda": None}
    if gpu:
        import torch

        facts.update(gpu=torch.cuda.get_device_name(0), driver=gpu_driver(), cuda=torch.version.cuda)
    return facts
