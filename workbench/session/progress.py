"""Progress of long replays as text on a stream (the notebook's widget bar is in ``workbench.jupyter``).

No tqdm. A progress callback is ``progress(done, total)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Progress", "TextProgress"]

Progress = Callable[[int, int], None]
"""``progress(done, total)``: called about every 1% of a replay, and at its end."""


class TextProgress:
    """``[#####.....] 52% 52,000/100,000 events`` rewritten in place on a text stream."""

    def __init__(self, stream: TextIO | None = None, width: int = 30, label: str = "events") -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.label = label
        self._last = -1.0
        self._start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        """Report ``done`` of ``total`` (redraws at most ~10 times a second, and at the end)."""
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        frac = done / total if total else 1.0
        filled = int(frac * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        rate = done / max(now - self._start, 1e-9)
        end = "\n" if done >= total else ""
        self.stream.write(f"\r[{bar}] {frac:4.0%} {done:,}/{total:,} {self.label} ({rate:,.0f}/s){end}")
        self.stream.flush()
