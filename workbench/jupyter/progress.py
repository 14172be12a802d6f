"""A small progress bar for long replays: an ipywidgets bar in a kernel, text elsewhere.

:func:`make_progress` returns ``None`` for short inputs (below ``threshold`` events), so short runs
print nothing; outside a kernel it is :class:`~workbench.session.progress.TextProgress`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from workbench.session.progress import TextProgress

__all__ = ["WidgetProgress", "make_progress"]


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
    total: int, *, threshold: int = 10_000, shell: object = None
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
