"""A small progress bar for long replays: an ipywidgets bar in a kernel, text elsewhere.

No tqdm. :func:`make_progress` returns ``None`` for short inputs (below ``threshold`` events), so
short runs print nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["TextProgress", "WidgetProgress", "make_progress"]


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


class WidgetProgress:
    """An ``ipywidgets.IntProgress`` with a label, updated in place."""

    def __init__(self, total: int, label: str = "events") -> None:
        import ipywidgets
        from IPython.display import display

        self.bar = ipywidgets.IntProgress(value=0, min=0, max=max(total, 1), description="replay")
        self.text = ipywidgets.Label(value=f"0/{total:,} {label}")
        self.label = label
        self._last = -1.0
        display(ipywidgets.HBox([self.bar, self.text]))

    def __call__(self, done: int, total: int) -> None:
        """Report ``done`` of ``total``."""
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        self.bar.value = done
        self.text.value = f"{done:,}/{total:,} {self.label}"
        if done >= total:
            self.bar.bar_style = "success"


def make_progress(
    total: int, *, threshold: int = 10_000, shell: Any = None
) -> Callable[[int, int], None] | None:
    """A progress callback for ``total`` events, or ``None`` when the input is short."""
    if total < threshold:
        return None
    kernel = getattr(shell, "kernel", None)
    if kernel is not None:
        try:
            return WidgetProgress(total)
        except ImportError:
            pass
    return TextProgress()
