"""Drive the engine's :class:`~workbench.engine.host.KeyHost` for a distributed keyed runtime (Flink).

A distributed stream processor partitions the stream by key, keeps one state object per key in its
own state backend, and calls back per event and per timer. :class:`KeyedDriver` is the thin layer
between such a runtime and the one per-key host that the local engine uses too: per key it keeps
a :class:`KeyRecord` (the host's :class:`~workbench.engine.host.KeyState`, the key's buffered
events and its queued matcher timers: a runtime's timer service holds one timer per key and time,
and no payload), and hands them to the host in the engine's order -- by event time, events before
timers at equal time, events in arrival order, timers in the order they were scheduled.

The driver never asks for the time itself: the runtime passes the watermark it guarantees (no event
of this key at or below it will still arrive) and the driver processes what that admits. Outputs
are :class:`HostOutput` tuples with an ``order`` key that restores the local engine's global output
order after the runtime has interleaved keys arbitrarily.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from workbench.backends.replay import Bound
from workbench.engine.clock import is_late
from workbench.engine.detection import Detection, Reaction, TraceRecord
from workbench.engine.events import Event
from workbench.engine.host import KeyHost, KeyState, late_record
from workbench.engine.matcher import Matcher
from workbench.engine.runtime import RunResult

__all__ = ["END_OF_TIME", "HostOutput", "KeyRecord", "KeyedDriver", "OutputKind", "collect_results"]

Time = int | float

#: An item's position in the local engine's processing order: ``(time, 0, pos, 0, 0, pos)`` for an
#: event at arrival position ``pos``, ``(time, 1, parent time, parent kind, parent pos or -1, root
#: event pos)`` for a timer.
Order = tuple[Time, ...]

_EVENT, _TIMER = 0, 1

#: The order key of start-up work (scheduled before any event, as the engine does when it adds
#: a matcher with ``initial_timers``).
_STARTUP: Order = (-math.inf, _EVENT, -1, 0, 0, -1)

#: The horizon of a run that flushes everything.
END_OF_TIME = Bound(math.inf, True)


class OutputKind:
    """The kinds of :class:`HostOutput` records."""

    DETECTION = "detection"
    REACTION = "reaction"
    TRACE = "trace"
    LATE = "late"


class HostOutput(NamedTuple):
    """One record out of the driver: ``order`` sorts records of all keys into the local order."""

    order: Order
    kind: str
    payload: Detection | Reaction | TraceRecord | Event


@dataclass(slots=True)
class KeyRecord:
    """Everything a runtime keeps for one key (plain data, for its state backend).

    Attributes:
        host: the matchers' per-key state (the engine keeps the same object per key).
        events: heap of buffered events ``(time, arrival position, event)``.
        timers: heap of queued matcher timers ``(time, n, pattern index, token, cause)``; ``cause``
            is the order key of the item that scheduled it.
        next_timer: the next ``n`` (keeps equal-time timers in scheduling order).
        next_out: the next output number (keeps outputs of one item in emission order).
        wake: the runtime's earliest pending wake-up for this key, in its own time unit (the
            runtime keeps one wake-up per key at the next due item, not one per item).
        key: the partition key as first seen (a runtime that keys by an encoding of it, such as
            Flink, gets the key itself back from here; ``1``, ``1.0`` and ``True`` are one key).
    """

    host: KeyState = field(default_factory=KeyState)
    events: list[tuple[Time, int, Event]] = field(default_factory=list)
    timers: list[tuple[Time, int, int, Hashable, Order]] = field(default_factory=list)
    next_timer: int = 0
    next_out: int = 0
    wake: int | None = None
    key: Hashable = None

    def is_empty(self) -> bool:
        """True when nothing is left worth keeping (the runtime may clear the key's state)."""
        return self.host.is_empty() and not self.events and not self.timers


class KeyedDriver:
    """Run a fixed list of matchers, through one :class:`KeyHost`, for whichever key the runtime is at.

    Args:
        matchers: compiled matchers (their order is the pattern index, as in the engine).
        horizon: the last watermark of the run: items beyond it are never processed.
        final_after: items beyond this watermark are handled as the final flush (``ctx.final``);
            ``None``: never.
        tracing: produce trace records.
        forget: the engine's ``forget_idle_keys``: a key whose instances all ended keeps nothing.
    """

    def __init__(
        self,
        matchers: Sequence[Matcher],
        *,
        horizon: Bound = END_OF_TIME,
        final_after: Bound | None = None,
        tracing: bool = False,
        forget: bool = False,
    ) -> None:
        self.host = KeyHost(matchers, self, tracing=tracing, forget=forget)
        self.horizon = horizon
        self.final_after = final_after
        self._initial = self.host.initial_timers()
        # What the item being processed writes to (set before each call into the host).
        self._current = KeyRecord()
        self._item: Order = _STARTUP
        self._out: list[HostOutput] = []
        self._wakes: list[Time] = []

    # ------------------------------------------------------------------ runtime calls
    def wants(self, event: Event) -> bool:
        """Whether any matcher uses events of this type (others need no buffering at all)."""
        return bool(self.host.targets(event.type))

    def accept(self, record: KeyRecord, event: Event, position: int) -> None:
        """Buffer an on-time event; the runtime must wake the key once the watermark passes it.

        ``position`` is the event's arrival position in the input (equal-time events keep it).
        """
        heapq.heappush(record.events, (event.time, position, event))

    def initial_timers(self, record: KeyRecord, key: Hashable) -> list[Time]:
        """Schedule the start-up timers of ``key`` (a matcher's optional ``initial_timers()`` hook).

        Returns their times; the runtime wakes the key at each. Call once per key, before its events.
        """
        self._current, self._item, self._wakes = record, _STARTUP, []
        for pindex, time, k, token in self._initial:
            if k == key:
                self.host.schedule_initial(record.host, key, pindex, time, token)
        return self._wakes

    def startup_keys(self) -> list[Hashable]:
        """The keys that have start-up timers, in the order the matchers name them."""
        return list(dict.fromkeys(k for _, _, k, _ in self._initial))

    def next_due(self, record: KeyRecord) -> Time | None:
        """When the key next has work: its earliest buffered event or queued timer that the run's
        horizon admits (``None``: nothing will ever be processed for it)."""
        horizon = self.horizon
        times = []
        if record.events and horizon.admits_event(record.events[0][0]):
            times.append(record.events[0][0])
        if record.timers and horizon.admits_timer(record.timers[0][0]):
            times.append(record.timers[0][0])
        return min(times) if times else None

    def late(self, event: Event, position: int) -> list[HostOutput]:
        """The outputs for a late event: the event itself and, when tracing, a trace record."""
        order = (event.time, _EVENT, position, 0, 0, position, 0)
        out = [HostOutput(order, OutputKind.LATE, event)]
        if self.host.context.tracing:
            out.append(HostOutput(order, OutputKind.TRACE, late_record(event)))
        return out

    def advance(
        self, record: KeyRecord, key: Hashable, below: Time, *, through: bool = False
    ) -> tuple[list[HostOutput], list[Time]]:
        """Process every buffered event and due timer with time ``< below`` (and within the horizon).

        ``below`` is exclusive: a runtime whose watermark ``W`` counts whole milliseconds passes
        ``W + 1``. ``through``: events *at* ``below`` are due too (timers at it are not: they come
        after every event of their time), for a runtime that knows no earlier event of the key can
        still come. Returns the outputs and the times at which matcher timers were newly scheduled
        (the runtime registers a wake-up at each).
        """
        self._current, self._out, self._wakes = record, [], []
        events, timers, horizon, host = record.events, record.timers, self.horizon, self.host
        below_wm = (below, False)  # exclusive: what is strictly below it is due
        events_wm = (below, through)
        while True:
            ev_due = bool(events) and is_late(events_wm, events[0][0]) and horizon.admits_event(events[0][0])
            tm_due = bool(timers) and is_late(below_wm, timers[0][0]) and horizon.admits_timer(timers[0][0])
            # Why events first at equal time: the engine's (Prova's) "event first" tie rule
            if ev_due and (not tm_due or events[0][0] <= timers[0][0]):
                time, position, event = heapq.heappop(events)
                self._at((time, _EVENT, position, 0, 0, position), timer=False)
                host.process(record.host, key, event, host.targets(event.type))
            elif tm_due:
                time, _, pindex, token, cause = heapq.heappop(timers)
                self._at((time, _TIMER, *_parent(cause)), timer=True)
                host.fire(record.host, key, time, pindex, token)
            else:
                break
        return self._out, self._wakes

    def advance_in_order(
        self, record: KeyRecord, key: Hashable, events: Sequence[tuple[Event, int]]
    ) -> list[HostOutput]:
        """:meth:`accept` each of ``events`` (``(event, position)``, on time), then ``advance`` through
        the last one's time (``through=True``), with the same outputs and state.

        Why: a runtime that knows a key's events come in order (a batch of them at once) needs no
        trip through the event heap; the events are merged with the queued timers directly (a
        timer fires before an event only at an earlier time: the engine's "event first" tie rule).
        Anything else (events buffered already, out of time order, beyond the horizon) takes the
        general path.
        """
        if not events:
            return []
        last = events[-1][0].time
        if record.events or not self.horizon.admits_event(last) or not _in_order(events):
            for event, position in events:
                self.accept(record, event, position)
            return self.advance(record, key, last, through=True)[0]
        self._current, self._out, self._wakes = record, [], []
        timers, host, ks = record.timers, self.host, record.host
        # why: when the final flush admits the last event, it admits them all: none runs as final
        plain = self.final_after is None or self.final_after.admits_event(last)
        host.context.final = False
        for event, position in events:
            time = event.time
            if timers and timers[0][0] < time:  # why: timers strictly before the event fire first
                self._fire_below(record, key, time)
            if plain:
                self._item = (time, _EVENT, position, 0, 0, position)
            else:
                self._at((time, _EVENT, position, 0, 0, position), timer=False)
            host.process(ks, key, event, host.targets(event.type))
        if timers and timers[0][0] < last:
            self._fire_below(record, key, last)
        return self._out

    def _fire_below(self, record: KeyRecord, key: Hashable, below: Time) -> None:
        """Fire the queued timers before ``below`` that the horizon admits, in order."""
        timers, horizon, host = record.timers, self.horizon, self.host
        while timers and timers[0][0] < below and horizon.admits_timer(timers[0][0]):
            time, _, pindex, token, cause = heapq.heappop(timers)
            self._at((time, _TIMER, *_parent(cause)), timer=True)
            host.fire(record.host, key, time, pindex, token)

    # ------------------------------------------------------------------ the host's sink
    def emit(self, detection: Detection) -> None:
        self._put(OutputKind.DETECTION, detection)

    def react(self, reaction: Reaction) -> None:
        self._put(OutputKind.REACTION, reaction)

    def record(self, record: TraceRecord) -> None:
        self._put(OutputKind.TRACE, record)

    def release_time(self, key: Hashable, now: Time) -> Time:
        # Flink's own operator gives the watermark; this driver keeps the timer's time (see README)
        return now

    def schedule(self, time: Time, key: Hashable, pindex: int, token: Hashable) -> None:
        current = self._current
        heapq.heappush(current.timers, (time, current.next_timer, pindex, token, self._item))
        current.next_timer += 1
        self._wakes.append(time)

    # ------------------------------------------------------------------ internals
    def _at(self, item: Order, *, timer: bool) -> None:
        """Make ``item`` the one being processed; past ``final_after`` it runs as the final flush."""
        self._item = item
        fa, t = self.final_after, item[0]
        self.host.context.final = fa is not None and not (fa.admits_timer(t) if timer else fa.admits_event(t))

    def _put(self, kind: str, payload: Detection | Reaction | TraceRecord) -> None:
        current = self._current
        self._out.append(HostOutput((*self._item, current.next_out), kind, payload))
        current.next_out += 1


def _parent(cause: Order) -> Order:
    """The part of a timer's order key that comes from the item that scheduled it.

    The engine fires equal-time timers in scheduling order, that is in the processing order of the
    items that scheduled them: their time and kind, and for events the arrival position. When two
    parents are timers at one time, the first events of their scheduling chains decide, then the
    per-key output counter. Within one key that is the engine's order exactly; across keys, two
    chains of timers that tie at every step back to different root events can come out swapped.
    """
    time, kind, seq, root = cause[0], cause[1], cause[2], cause[5]
    return (time, kind, seq if kind == _EVENT else -1, root)


def _in_order(events: Sequence[tuple[Event, int]]) -> bool:
    """Whether ``events`` are in the heap's order: by time, then arrival position."""
    prev = (-math.inf, -1)
    for event, position in events:
        here = (event.time, position)
        if here < prev:
            return False
        prev = here
    return True


def collect_results(outputs: Iterable[HostOutput]) -> RunResult:
    """Sort one run's outputs (of all keys, in any order) into the engine's :class:`RunResult`.

    Detections, reactions and trace records come out in the local engine's order; late events in
    arrival order.
    """
    ordered = sorted(outputs, key=lambda o: o.order)
    detections: list[Detection] = []
    result = RunResult(detections, [], [], [])
    for out in ordered:
        payload = out.payload
        if isinstance(payload, Detection):
            detections.append(payload)
        elif isinstance(payload, Reaction):
            result.reactions.append(payload)
        elif isinstance(payload, TraceRecord):
            result.trace.append(payload)
    # The engine lists late events in arrival order (the third part of their order key).
    late = sorted((o for o in ordered if o.kind == OutputKind.LATE), key=lambda o: o.order[2])
    result.late.extend(o.payload for o in late if isinstance(o.payload, Event))
    return result
