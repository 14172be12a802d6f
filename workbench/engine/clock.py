"""Event time in one place: the lateness rule, the watermark and arrival positions (``seq``).

A watermark is ``(time, closed)``: events at or below ``time`` are due; an open watermark still
admits an event exactly at ``time`` (timers at ``time`` wait), a closed one (``advance_time``, the
final flush) does not. With bounded out-of-orderness ``d``, the watermark follows the newest event
seen: ``(max_seen - d, open)``. Every host (the engine, the key splitter of the sharded engine, the
replay planner of the backends) asks :func:`is_late` and numbers events with :func:`stamp`.

>>> clock = EventClock(out_of_orderness=10)
>>> [clock.accept(t) for t in (100, 95, 80, 89, 90)]
[True, True, False, False, True]
>>> clock.watermark
(90, False)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from workbench.engine.events import Event, _fast_check, make_event
from workbench.errors import CepError

__all__ = ["START", "EventClock", "Watermark", "is_late", "stamp"]

Watermark = tuple[float, bool]
"""``(time, closed)``; tuples order as watermarks do (closed is later than open at one time)."""

START: Watermark = (-math.inf, False)


def is_late(watermark: Watermark, t: float) -> bool:
    """Whether an event at ``t`` arriving now is late: below the watermark, or at a closed one.

    >>> is_late((5, False), 5), is_late((5, True), 5), is_late((5, False), 4)
    (False, True, True)
    """
    wm, closed = watermark
    return t < wm or (closed and t == wm)


def stamp(raw: Event | Mapping[str, Any], position: int) -> Event:
    """Validate ``raw`` and number it with its input ``position`` (an event with a ``seq`` keeps it).

    Raises :class:`~workbench.errors.EventError` naming the position and the field at fault.
    """
    # Why the class test first: replays hand over built events, and this runs once per event
    event = _fast_check(raw, position) if raw.__class__ is Event else make_event(raw, position)
    return event if event.seq >= 0 else event.with_seq(position)


class EventClock:
    """The watermark of one event-time stream with bounded out-of-orderness."""

    __slots__ = ("max_seen", "out_of_orderness", "watermark")

    def __init__(self, out_of_orderness: int | float = 0) -> None:
        if out_of_orderness < 0:
            msg = f"out_of_orderness must be >= 0, got {out_of_orderness!r}"
            raise CepError(msg)
        self.out_of_orderness = out_of_orderness
        self.watermark: Watermark = START
        self.max_seen = -math.inf

    def accept(self, t: float) -> bool:
        """False for a late event; otherwise advance the clock by it."""
        if is_late(self.watermark, t):
            return False
        if t > self.max_seen:
            self.max_seen = t
        candidate = (self.max_seen - self.out_of_orderness, False)
        if candidate > self.watermark:
            self.watermark = candidate
        return True

    def close(self, watermark: float) -> None:
        """No event at or below ``watermark`` will come any more (``advance_time``)."""
        candidate = (watermark, True)
        if candidate > self.watermark:
            self.watermark = candidate
