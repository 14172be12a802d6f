"""Breakpoints for timeline replays: which trace record pauses :meth:`Timeline.replay`.

``stop_when`` is a condition on one trace record, in words or as a predicate:

* a trace kind: ``"paused"``, ``"held back"`` (or ``"held"``), ``"violated"``, ``"timed out"``,
  ``"detected"``, ``"failed"``, ``"started"``, ... (the :class:`~workbench.engine.TraceKind` values,
  spaces or underscores alike);
* ``"counted K/N"`` (or ``"counted K"``): a channel counted its K-th event of N;
* any of these followed by ``on NAME``: only records about channel or stage ``NAME``;
* a callable ``(TraceRecord) -> bool``.

>>> from workbench.engine import TraceKind, TraceRecord
>>> hit = breakpoint_of("counted 2/3 on pay")
>>> hit(TraceRecord(5, "p", "k", 1, TraceKind.COUNTED, "pay", 4, {"count": 2, "of": 3}))
True
>>> hit(TraceRecord(5, "p", "k", 1, TraceKind.COUNTED, "pay", 4, {"count": 1, "of": 3}))
False
>>> describe(TraceRecord(5, "p", "k", 1, TraceKind.HELD))
'held back: p#1 key=k at t=5'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, cast

from workbench.engine.detection import TraceKind, TraceRecord
from workbench.errors import CepError
from workbench.widgets.rows import RowId

if TYPE_CHECKING:
    from bokeh.models.sources import DataDict

__all__ = ["Breakpoint", "StopWhen", "breakpoint_of", "describe", "stop_note", "stop_ring"]

Breakpoint = Callable[[TraceRecord], bool]
StopWhen = str | Breakpoint

_ALIASES = {"held back": TraceKind.HELD, "timed out": TraceKind.TIMED_OUT, "timeout": TraceKind.TIMED_OUT}
_COUNT = re.compile(r"^(\d+)(?:\s*/\s*(\d+))?$")
_WORDS = {TraceKind.HELD: "held back", TraceKind.TIMED_OUT: "timed out"}


def _kind(words: str) -> TraceKind:
    if words in _ALIASES:
        return _ALIASES[words]
    try:
        return TraceKind(words.replace(" ", "_"))
    except ValueError:
        choices = ", ".join(sorted({*(k.value.replace("_", " ") for k in TraceKind), *_ALIASES}))
        msg = (
            f"stop_when={words!r}: not a breakpoint; use one of {choices} "
            "(optionally 'counted K/N', '... on NAME'), or a predicate on a TraceRecord"
        )
        raise CepError(msg) from None


def breakpoint_of(stop_when: object) -> Breakpoint:
    """The predicate ``stop_when`` names (see the module docstring); raises ``CepError`` if none."""
    if callable(stop_when):
        return cast("Breakpoint", stop_when)
    if not isinstance(stop_when, str):
        msg = f"stop_when must be text or a predicate on a TraceRecord, not {type(stop_when).__name__}"
        raise CepError(msg)
    words = stop_when.split()
    element: str | None = None
    if len(words) >= 2 and words[-2].lower() == "on":
        element, words = words[-1], words[:-2]  # the element keeps its own spelling
    text = " ".join(words).lower()
    count: tuple[int, int | None] | None = None
    if text.startswith("counted "):
        m = _COUNT.match(text[len("counted ") :])
        if m is None:
            msg = f"stop_when={stop_when!r}: write 'counted K' or 'counted K/N' with whole numbers"
            raise CepError(msg)
        count = (int(m.group(1)), int(m.group(2)) if m.group(2) else None)
        text = "counted"
    kind = _kind(text)

    def hit(record: TraceRecord) -> bool:
        if record.kind is not kind or (element is not None and record.element != element):
            return False
        if count is None:
            return True
        k, n = count
        return record.detail.get("count") == k and (n is None or record.detail.get("of") == n)

    return hit


def describe(record: TraceRecord, show_time: Callable[[float], str] = str) -> str:
    """One line naming the record a replay stopped at."""
    what = _WORDS.get(record.kind, record.kind.value)
    if record.kind is TraceKind.COUNTED and "count" in record.detail:
        what += f" {record.detail['count']}/{record.detail.get('of', '?')}"
    where = f" on {record.element}" if record.element else ""
    return f"{what}{where}: {record.pattern}#{record.instance} key={record.key} at t={show_time(record.time)}"


def stop_note(record: TraceRecord, show_time: Callable[[float], str] = str) -> str:
    """The timeline's status line while a breakpoint holds the replay."""
    return f"breakpoint: stopped at {describe(record, show_time)} · resume() goes on"


def stop_ring(record: TraceRecord, rows: Collection[str]) -> DataDict:
    """The highlight source's data ringing ``record`` on its row (the element's, else the instance's)."""
    for element in (record.element, None):
        label = RowId(record.pattern, record.key, record.instance, element).label()
        if label in rows:
            return {"row": [label], "time": [record.time]}
    return {"row": [], "time": []}
