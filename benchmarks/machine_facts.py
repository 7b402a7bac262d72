"""The machine description every benchmark writes into its JSON (the `machine` field of the
schema in report.py): CPU model, cores, and for GPU runs the GPU name, driver and CUDA version;
and the digest of the source tree that was built (the `source` field), which names the code a
result came from where the checkout has no usable git history (the device machine's copy); the
header of a results file (results_doc), the file and its summary (save_results), and the GPU's
min-plus ceilings (gpu_ceilings).
`python benchmarks/machine_facts.py` prints the working tree's digest, to match a result to it."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import subprocess
import sys
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


def results_doc(benchmark: str, facts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A results file's header (report.py's schema: benchmark, command, date, machine, source)
    followed by `fields`."""
    return {"benchmark": benchmark, "command": " ".join(["python", *sys.argv]),
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": facts, "source": source_digest(), **fields}


def save_results(out_dir: str, stem: str, doc: dict[str, Any], title: str, text: str,
                 table: list[str]) -> None:
    """`stem`.json (doc) and `stem`_summary.md: `# title`, the command, source and date, `text`,
    then the markdown `table` (its lines)."""
    with open(os.path.join(out_dir, f"{stem}.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out_dir, f"{stem}_summary.md"), "w") as f:
        f.write(f"# {title}\n\n`{doc['command']}`, source {doc['source']}, {doc['date']}. {text}\n\n"
                + "".join(line + "\n" for line in table))


def gpu_ceilings(bin_dir: str) -> tuple[list, dict[str, float]]:
    """The GPU's measured min-plus peaks (benchmarks/ceiling.cu, compiled in `bin_dir`): the
    ceilings as the schema lists them, and updates/s by dtype."""
    out = subprocess.run([os.path.join(bin_dir, "ceiling")], capture_output=True, text=True,
                         check=True).stdout
    ceilings = json.loads(out)["ceilings"]
    return ceilings, {c["dtype"]: c["updates_per_s"] for c in ceilings}


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
