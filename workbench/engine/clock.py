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

from workbench.engine.events import Event, EventLike, check_built, make_event
from workbench.errors import CepError

__all__ = ["START", "EventClock", "Watermark", "is_late", "releases", "stamp"]

Watermark = tuple[float, bool]
"""``(time, closed)``; tuples order as watermarks do (closed is later than open at one time)."""

START: Watermark = (-math.inf, False)


def is_late(watermark: Watermark, t: float) -> bool:
    """Whether an event at ``t`` arriving now is late: below the watermark, or at a closed one.

    The same rule says when a timer at ``t`` is due: once an event at ``t`` could no longer come.

    >>> is_late((5, False), 5), is_late((5, True), 5), is_late((5, False), 4)
    (False, True, True)
    """
    wm, closed = watermark
    return t < wm or (closed and t == wm)


def releases(watermark: Watermark, t: float) -> bool:
    """Whether the watermark releases a buffered event at ``t`` (open or closed, ``t`` at it is due).

    >>> releases((5, False), 5), releases((5, False), 6)
    (True, False)
    """
    return t <= watermark[0]


def stamp(raw: EventLike, position: int) -> Event:
    """Validate ``raw`` and number it with its input ``position`` (an event with a ``seq`` keeps it).

    The one place where events get their ``seq``. Raises :class:`~workbench.errors.EventError`
    naming the position and the field at fault.

    >>> stamp({"type": "a", "time": 1}, 7).seq, stamp(Event("a", 1, seq=3), 7).seq
    (7, 3)
    """
    if isinstance(raw, Event):
        # Why the type tests: replays hand over built events and this runs once per event; only an
        # unusual one (a bool time, a tuple key, ...) pays for the full check
        t, key = raw.time, raw.key
        if (
            (t.__class__ is not int and t.__class__ is not float)
            or (t.__class__ is float and t - t != 0)  # NaN or infinite: t - t is NaN
            or raw.type.__class__ is not str
            or (key.__class__ is not str and key.__class__ is not int and key is not None)
        ):
            check_built(raw, position)
        return raw if raw.seq >= 0 else raw.with_seq(position)
    return make_event(raw, position).with_seq(position)


class EventClock:
    """The watermark of one event-time stream with bounded out-of-orderness."""

    __slots__ = ("max_seen", "next_seq", "out_of_orderness", "watermark")

    def __init__(self, out_of_orderness: int | float = 0) -> None:
        if out_of_orderness < 0:
            msg = f"out_of_orderness must be >= 0, got {out_of_orderness!r}"
            raise CepError(msg)
        self.out_of_orderness = out_of_orderness
        self.watermark: Watermark = START
        self.max_seen = -math.inf
        #: the arrival position the next event gets (:func:`stamp`)
        self.next_seq = 0

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

    def accept_in_order(self, t: float) -> None:
        """Advance the clock by an event known to be on time and not older than any seen before."""
        self.max_seen = t
        candidate = (t - self.out_of_orderness, False)
        if candidate > self.watermark:
            self.watermark = candidate

    def advance(self, watermark: Watermark) -> None:
        """Move the watermark forward to ``watermark`` (never back)."""
        if watermark > self.watermark:
            self.watermark = watermark

    def close(self, watermark: float) -> None:
        """No event at or below ``watermark`` will come any more (``advance_time``)."""
        self.advance((watermark, True))
