"""apsp.info(): what was built and what this machine offers."""
from __future__ import annotations

from typing import Any

from . import _core


def info() -> dict[str, Any]:
    """Build and device facts: CUDA compiled in (or why not), OpenMP threads, usable GPUs (or why none)."""
    from . import __version__

    facts = dict(_core.info())
    facts["version"] = __version__
    return facts


def format_info(facts: dict[str, Any]) -> str:
    lines = [f"apsp {facts['version']}",
             f"CUDA engine: {'compiled' if facts['cuda_compiled'] else 'not compiled'} ({facts['cuda_build']})",
             f"CPU engine: {facts['cpu_threads']} OpenMP threads"]
    if facts["devices"]:
        for d in facts["devices"]:
            cc = ".".join(str(v) for v in d["compute_capability"])
            total = d["total_memory"] / 2**30
            memory = (f"{total:.1f} GiB, free memory unknown" if d["free_memory"] is None
                      else f"{d['free_memory'] / 2**30:.1f} of {total:.1f} GiB free")
            lines.append(f"GPU cuda:{d['index']}: {d['name']} (sm_{cc.replace('.', '')}, "
                         f"{d['multiprocessors']} SMs, {memory})")
    else:
        lines.append(f"GPUs: none usable ({facts['why_no_devices']})")
    return "\n".join(lines)
