"""The machine description every benchmark writes into its JSON (the `machine` field of the
schema in report.py): CPU model, cores, and for GPU runs the GPU name, driver and CUDA version;
and the digest of the source tree that was built (the `source` field), which names the code a
result came from where the checkout has no usable git history (the device machine's copy).
`python benchmarks/machine_facts.py` prints the working tree's digest, to match a result to it."""
from __future__ import annotations

import hashlib
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


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_PARTS = ("CMakeLists.txt", "pyproject.toml", "src", "cpp", "python/apsp")


def source_digest(root: str = ROOT) -> str:
    """sha256 (first 16 hex digits) of the build's sources: each file's path and bytes, in path
    order (compiled files and caches left out)."""
    h = hashlib.sha256()
    paths = []
    for part in SOURCE_PARTS:
        top = os.path.join(root, part)
        if os.path.isfile(top):
            paths.append(part)
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            paths += [os.path.relpath(os.path.join(folder, f), root) for f in files
                      if not f.endswith((".so", ".pyc"))]
    for rel in sorted(paths):
        h.update(rel.encode() + b"\0")
        with open(os.path.join(root, rel), "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()[:16]


def machine(gpu: bool = True) -> dict[str, Any]:
    """{"cpu", "cores", "gpu", "driver", "cuda"}; the GPU fields through torch (device 0)."""
    facts: dict[str, Any] = {"cpu": cpu_model(), "cores": os.cpu_count(), "gpu": None,
                             "driver": None, "cuda": None}
    if gpu:
        import torch

        facts.update(gpu=torch.cuda.get_device_name(0), driver=gpu_driver(), cuda=torch.version.cuda)
    return facts


if __name__ == "__main__":
    print(source_digest())
