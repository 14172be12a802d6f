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

import heapq
import math
from collections.abc import Callable, Iterable, Sequence

from workbench.engine.events import Event, EventLike, check_built, error_text, make_event
from workbench.errors import CepError

__all__ = [
    "START",
    "EventClock",
    "OrderBy",
    "Rank",
    "Watermark",
    "is_late",
    "pop_ties",
    "release_time",
    "releases",
    "stamp",
    "tie_order",
]

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


def release_time(
    watermark: Watermark, buffer: Sequence[tuple[float, int, Event]], key: object, now: float
) -> float:
    """The time of a match that a key's timer at ``now`` releases (Flink's ``advanceTime`` timestamp).

    Flink's operator, when the watermark passes, advances each key's time to every buffered
    timestamp in turn and then to the watermark: a match released by time passing carries the
    key's next buffered event time, else the watermark. That is a closed watermark here
    (``advance_time``, ``finish(until)``); a watermark derived from the events themselves (in-order
    input, out-of-orderness) and the infinite one of the final flush give ``now``, the deadline
    that released it -- the first watermark that could -- so that events no pattern reads, which
    move a derived watermark, never change a detection (pruned replays, shards).

    >>> release_time((50, True), [(30, 0, Event("a", 30, "k")), (20, 1, Event("a", 20, "j"))], "k", 10)
    30
    """
    horizon = watermark[0] if watermark[1] else now
    for t, _, event in buffer:
        if t < horizon and event.key == key:  # why: the key's own events come first (t >= now)
            horizon = t
    return now if horizon == math.inf else max(horizon, now)


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
            or raw.fields.__class__ is not dict
        ):
            raw = check_built(raw, position)  # (a NaN key comes back as the key None)
        return raw if raw.seq != -1 else raw.with_seq(position)  # why != -1: derived events are < -1
    return make_event(raw, position).with_seq(position)


class EventClock:
    """The watermark of one event-time stream with bounded out-of-orderness."""

    __slots__ = ("max_seen", "next_seq", "out_of_orderness", "watermark")

    def __init__(self, out_of_orderness: int | float = 0) -> None:
        bad = isinstance(out_of_orderness, bool) or not isinstance(out_of_orderness, int | float)
        if bad or not out_of_orderness >= 0:  # why "not >=": NaN compares false both ways
            msg = f"out_of_orderness must be a number of milliseconds >= 0, got {out_of_orderness!r}"
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

    def close(self, watermark: object, call: str = "advance_time") -> None:
        """No event at or below ``watermark`` will come any more (``advance_time``).

        >>> EventClock().close(float("nan"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        workbench.errors.CepError: advance_time(): the watermark must be a number ... got float nan
        """
        if isinstance(watermark, int | float) and not isinstance(watermark, bool) and watermark == watermark:
            self.advance((watermark, True))
            return
        msg = (
            f"{call}(): the watermark must be a number of milliseconds (not NaN), "
            f"got {type(watermark).__name__} {watermark!r}"
        )
        raise CepError(msg)


# ---------------------------------------------------------------------- order of equal-time events
OrderBy = str | Sequence[str] | Callable[[Event], object]
"""How equal-time events are ordered (Flink's ``EventComparator``): a field, fields, or a key function."""

_NOT_FIELDS = frozenset({"time", "t", "seq"})


class Rank:
    """A sort key over values ordered by ``<``, missing values (absent, ``None``, NaN) last.

    >>> sorted([Rank((2,)), Rank((None,)), Rank((1,))], key=lambda r: r)[0].values
    (1,)
    """

    __slots__ = ("names", "values")

    def __init__(self, values: tuple[object, ...], names: tuple[str, ...] = ("order_by key",)) -> None:
        self.values = values
        self.names = names

    def __lt__(self, other: Rank) -> bool:
        for i, (a, b) in enumerate(zip(self.values, other.values, strict=True)):
            a_missing, b_missing = _missing(a), _missing(b)
            if a_missing or b_missing:
                if a_missing != b_missing:
                    return b_missing  # why: missing values sort last
                continue
            try:
                if a < b:  # type: ignore[operator]
                    return True
                if b < a:  # type: ignore[operator]
                    return False
            except TypeError:
                name = self.names[min(i, len(self.names) - 1)]
                msg = f"order_by: {name!r} values {a!r} and {b!r} of equal-time events cannot be ordered"
                raise CepError(msg) from None
        return False


def _missing(value: object) -> bool:
    return value is None or (value.__class__ is float and value != value)


def tie_order(order_by: OrderBy | None) -> Callable[[Event], Rank] | None:
    """The sort key of equal-time events that ``order_by`` names (``None``: arrival order).

    A field name reads ``event[name]`` (``type`` and ``key`` read the event's own); an event without
    it sorts after those with it. A callable gets the event and returns a value ordered by ``<``.

    >>> key = tie_order(["price", "type"])
    >>> key(Event("a", 1, fields={"price": 3})).values
    (3, 'a')
    """
    if order_by is None:
        return None
    if callable(order_by):
        return _called(order_by)
    given: object = order_by  # why object: the annotation is what a caller should pass, not checked
    if not isinstance(given, str | Iterable):
        msg = f"order_by names fields (a name or a list of names) or is a function, got {given!r}"
        raise CepError(msg)
    names: tuple[object, ...] = (order_by,) if isinstance(order_by, str) else tuple(order_by)
    if not names:
        msg = "order_by names no field"
        raise CepError(msg)
    for name in names:
        if not isinstance(name, str) or not name.strip() or name in _NOT_FIELDS:
            msg = f"order_by: {name!r} is not a field that can order equal-time events"
            raise CepError(msg)
    fields = tuple(str(name) for name in names)
    getters = tuple(_getter(name) for name in fields)
    return lambda e: Rank(tuple(g(e) for g in getters), fields)


def _called(fn: Callable[[Event], object]) -> Callable[[Event], Rank]:
    def rank(e: Event) -> Rank:
        try:
            return Rank((fn(e),))
        except Exception as err:  # why: a user's key function must not crash the engine unnamed
            problem = f"{type(err).__name__}: {error_text(err)}"
            msg = f"order_by key function failed on event #{e.seq} ({e.type!r}, time {e.time}): {problem}"
            raise CepError(msg) from err

    return rank


def _getter(name: str) -> Callable[[Event], object]:
    if name in ("type", "key"):
        return lambda e: getattr(e, name)
    return lambda e: e.fields.get(name)


def pop_ties(buffer: list[tuple[float, int, Event]], rank: Callable[[Event], Rank]) -> list[Event]:
    """Pop every buffered event at the earliest time, in ``rank`` order (arrival order among equals)."""
    t = buffer[0][0]
    group = [heapq.heappop(buffer)[2]]
    while buffer and buffer[0][0] == t:
        group.append(heapq.heappop(buffer)[2])
    if len(group) > 1:
        group.sort(key=rank)  # why: stable, so equal ranks keep arrival order
    return group
