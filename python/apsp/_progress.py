"""The progress bar behind ``progress=True``: tqdm when installed, else one stderr line."""
from __future__ import annotations

import sys
import time
from typing import Callable, Optional


class RoundProgress:
    """Callable(done, total) that the engines call between Floyd-Warshall rounds."""

    def __init__(self, desc: str) -> None:
        self._desc = desc
        self._bar = None
        self._last = 0.0
        self._done = 0
        self._broken = False
        try:
            from tqdm.auto import tqdm  # noqa: F401

            self._tqdm = tqdm
        except ImportError:
            self._tqdm = None

    def __call__(self, done: int, total: int) -> None:
        if self._broken:
            return
        try:
            self._report(done, total)
        except (OSError, ValueError, AttributeError):  # stderr closed or None (pythonw, daemons)
            self._broken = True  # a bar nobody can see must not stop the solve
        self._done = done

    def _report(self, done: int, total: int) -> None:
        if self._tqdm is not None:
            if self._bar is None:
                self._bar = self._tqdm(total=total, desc=self._desc, unit="round", leave=True)
            self._bar.update(done - self._done)
        else:
            now = time.monotonic()
            if done == total or now - self._last > 0.2:
                self._last = now
                sys.stderr.write(f"\r{self._desc}: round {done}/{total} ({100.0 * done / total:5.1f}%)")
                if done == total:
                    sys.stderr.write("\n")
                sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            try:
                self._bar.close()
            except (OSError, ValueError, AttributeError):
                pass


def make_progress(progress: bool, desc: str) -> Optional[Callable[[int, int], None]]:
    return RoundProgress(desc) if progress else None
