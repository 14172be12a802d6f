"""Host compiled matchers for one key at a time, on behalf of a distributed runtime.

A distributed stream processor (Flink) partitions the stream by key, keeps one state object per key
in its own state backend, and calls back per event and per timer. :class:`KeyHost` is everything
between such a runtime and the engine's matchers: it routes events by type, buffers them until the
watermark passes, keeps the matchers' timers (a runtime's timer service holds only one timer per
key and time, and no payload), and replays both in the engine's order -- by event time, events
before timers at equal time, events in arrival order, timers in the order they were scheduled.
Per-key state is one :class:`KeyHostState`, plain picklable data.

The host never asks for the time itself: the runtime passes the watermark it guarantees (no event
of this key at or below it will still arrive) and the host processes what that admits. Outputs are
:class:`HostOutput` tuples with an ``order`` key that restores the local engine's global output
order after the runtime has interleaved keys arbitrarily.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from workbench.backends.replay import Bound
from workbench.engine.detection import Detection, Reaction, TraceKind, TraceRecord
from workbench.engine.events import Event
from workbench.engine.matcher import Matcher
from workbench.engine.runtime import RunResult

__all__ = ["END_OF_TIME", "HostOutput", "KeyHost", "KeyHostState", "OutputKind", "collect_results"]

#: An item's position in the local engine's processing order: ``(time, 0, pos, 0, 0, pos)`` for an
#: event at arrival position ``pos``, ``(time, 1, parent time, parent kind, parent pos or -1, root
#: event pos)`` for a timer.
Order = tuple[Any, ...]

_EVENT, _TIMER = 0, 1

#: The order key of start-up work (scheduled before any event, as the engine does when it adds
#: a matcher with ``initial_timers``).
_STARTUP: tuple[Any, ...] = (-math.inf, _EVENT, -1, 0, 0, -1)

#: The horizon of a run that flushes everything.
END_OF_TIME = Bound(math.inf, True)


class OutputKind:
    """The kinds of :class:`HostOutput` records."""

    DETECTION = "detection"
    REACTION = "reaction"
    TRACE = "trace"
    LATE = "late"


class HostOutput(NamedTuple):
    """One record out of the host: ``order`` sorts records of all keys into the local order."""

    order: Order
    kind: str
    payload: Any


@dataclass(slots=True)
class KeyHostState:
    """Everything kept for one key (plain data, so a runtime's state backend can hold it).

    Attributes:
        states: per pattern index, the matcher's own per-key state.
        instances: per pattern index, the last instance id handed out.
        events: heap of buffered events ``(time, arrival position, event)``.
        timers: heap of pending matcher timers ``(time, n, pattern index, token, cause)``; ``cause``
            is the order key of the item that scheduled it.
        timer_counts: per pattern index, how many of its timers are pending.
        next_timer: the next ``n`` (keeps equal-time timers in scheduling order).
        next_out: the next output number (keeps outputs of one item in emission order).
        wake: the runtime's earliest pending wake-up for this key, in its own time unit (the
            runtime keeps one wake-up per key at the next due item, not one per item).
    """

    states: dict[int, Any] = field(default_factory=dict)
    instances: dict[int, int] = field(default_factory=dict)
    events: list[tuple[int | float, int, Event]] = field(default_factory=list)
    timers: list[tuple[int | float, int, int, Hashable, Order]] = field(default_factory=list)
    timer_counts: dict[int, int] = field(default_factory=dict)
    next_timer: int = 0
    next_out: int = 0
    wake: int | None = None

    def is_empty(self) -> bool:
        """True when nothing is left worth keeping (the runtime may clear the key's state)."""
        return not (self.states or self.instances or self.events or self.timers)


class _HostContext:
    """The :class:`~workbench.engine.matcher.Context` a matcher sees inside :class:`KeyHost`."""

    __slots__ = ("final", "item", "key", "now", "out", "pattern", "pindex", "state", "tracing", "wakes")

    def __init__(self, tracing: bool) -> None:
        self.tracing = tracing
        self.final = False
        self.key: Hashable = None
        self.now: int | float = 0
        self.pindex = 0
        self.pattern = ""
        self.item: Order = ()
        self.state = KeyHostState()
        self.out: list[HostOutput] = []
        self.wakes: list[int | float] = []

    def _put(self, kind: str, payload: Any) -> None:
        st = self.state
        self.out.append(HostOutput((*self.item, st.next_out), kind, payload))
        st.next_out += 1

    def emit(self, detection: Detection) -> None:
        self._put(OutputKind.DETECTION, detection)

    def react(self, reaction: Reaction) -> None:
        self._put(OutputKind.REACTION, reaction)

    def schedule(self, time: int | float, token: Hashable) -> None:
        st = self.state
        heapq.heappush(st.timers, (time, st.next_timer, self.pindex, token, self.item))
        st.next_timer += 1
        st.timer_counts[self.pindex] = st.timer_counts.get(self.pindex, 0) + 1
        self.wakes.append(time)

    def new_instance(self) -> int:
        instances = self.state.instances
        n = instances.get(self.pindex, 0) + 1
        instances[self.pindex] = n
        return n

    def trace(
        self,
        kind: TraceKind,
        instance: int,
        element: str | None = None,
        event_seq: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        if self.tracing:
            record = TraceRecord(
                self.now, self.pattern, self.key, instance, kind, element, event_seq, detail or {}
            )
            self._put(OutputKind.TRACE, record)


class KeyHost:
    """Run a fixed list of matchers for whichever key the runtime is processing.

    Args:
        matchers: compiled matchers (their order is the pattern index, as in the engine).
        horizon: the last watermark of the run: items beyond it are never processed.
        final_after: items beyond this watermark are handled as the final flush (``ctx.final``);
            ``None``: never.
        tracing: produce trace records.
    """

    def __init__(
        self,
        matchers: Sequence[Matcher],
        *,
        horizon: Bound = END_OF_TIME,
        final_after: Bound | None = None,
        tracing: bool = False,
    ) -> None:
        self.matchers = list(matchers)
        self.horizon = horizon
        self.final_after = final_after
        self._ctx = _HostContext(tracing)
        self._by_type: dict[str, list[int]] = {}
        self._any_type: list[int] = []
        for index, matcher in enumerate(self.matchers):
            types = matcher.event_types()
            if types is None:
                self._any_type.append(index)
                for targets in self._by_type.values():
                    targets.append(index)
            else:
                for t in types:
                    self._by_type.setdefault(t, list(self._any_type)).append(index)
        for targets in self._by_type.values():
            targets.sort()
        self._initial: list[tuple[int, int | float, Hashable, Hashable]] = []
        for index, matcher in enumerate(self.matchers):
            initial = getattr(matcher, "initial_timers", None)
            if initial is not None:
                self._initial.extend((index, t, k, token) for t, k, token in initial())

    # ------------------------------------------------------------------ runtime calls
    def wants(self, event: Event) -> bool:
        """Whether any matcher uses events of this type (others need no buffering at all)."""
        return bool(self._by_type.get(event.type, self._any_type))

    def accept(self, state: KeyHostState, event: Event, position: int) -> None:
        """Buffer an on-time event; the runtime must wake the key once the watermark passes it.

        ``position`` is the event's arrival position in the input (equal-time events keep it).
        """
        heapq.heappush(state.events, (event.time, position, event))

    def initial_timers(self, state: KeyHostState, key: Hashable) -> list[int | float]:
        """Schedule the start-up timers of ``key`` (a matcher's optional ``initial_timers()`` hook).

        Returns their times; the runtime wakes the key at each. Call once per key, before its events.
        """
        ctx = self._ctx
        ctx.key, ctx.state, ctx.wakes = key, state, []
        wanted = [(i, t, token) for i, t, k, token in self._initial if k == key]
        for pindex, time, token in wanted:
            ctx.pindex = pindex
            ctx.item = _STARTUP
            ctx.schedule(time, token)
        return ctx.wakes

    def startup_keys(self) -> list[Hashable]:
        """The keys that have start-up timers, in the order the matchers name them."""
        return list(dict.fromkeys(k for _, _, k, _ in self._initial))

    def next_due(self, state: KeyHostState) -> int | float | None:
        """When the key next has work: its earliest buffered event or pending timer that the run's
        horizon admits (``None``: nothing will ever be processed for it)."""
        horizon = self.horizon
        times = []
        if state.events and horizon.admits_event(state.events[0][0]):
            times.append(state.events[0][0])
        if state.timers and horizon.admits_timer(state.timers[0][0]):
            times.append(state.timers[0][0])
        return min(times) if times else None

    def late(self, event: Event, position: int) -> list[HostOutput]:
        """The outputs for a late event: the event itself and, when tracing, a trace record."""
        order: Order = (event.time, _EVENT, position, 0, 0, position, 0)
        out = [HostOutput(order, OutputKind.LATE, event)]
        if self._ctx.tracing:
            record = TraceRecord(event.time, "", event.key, 0, TraceKind.LATE, None, event.seq, {})
            out.append(HostOutput(order, OutputKind.TRACE, record))
        return out

    def advance(
        self, state: KeyHostState, key: Hashable, below: int | float
    ) -> tuple[list[HostOutput], list[int | float]]:
        """Process every buffered event and due timer with time ``< below`` (and within the horizon).

        ``below`` is exclusive: a runtime whose watermark ``W`` counts whole milliseconds passes
        ``W + 1``. Returns the outputs and the times at which matcher timers were newly scheduled
        (the runtime registers a wake-up at each).
        """
        ctx = self._ctx
        ctx.key, ctx.state, ctx.out, ctx.wakes = key, state, [], []
        events, timers, horizon = state.events, state.timers, self.horizon
        while True:
            ev_due = bool(events) and events[0][0] < below and horizon.admits_event(events[0][0])
            tm_due = bool(timers) and timers[0][0] < below and horizon.admits_timer(timers[0][0])
            if ev_due and (not tm_due or events[0][0] <= timers[0][0]):
                time, position, event = heapq.heappop(events)
                self._dispatch(state, event, (time, _EVENT, position, 0, 0, position))
            elif tm_due:
                time, _, pindex, token, cause = heapq.heappop(timers)
                self._fire(state, time, pindex, token, (time, _TIMER, *_parent(cause)))
            else:
                break
        return ctx.out, ctx.wakes

    # ------------------------------------------------------------------ internals
    def _is_final(self, t: int | float, timer: bool) -> bool:
        fa = self.final_after
        if fa is None:
            return False
        return not (fa.admits_timer(t) if timer else fa.admits_event(t))

    def _dispatch(self, state: KeyHostState, event: Event, item: Order) -> None:
        targets = self._by_type.get(event.type, self._any_type)
        ctx = self._ctx
        ctx.now, ctx.item, ctx.final = event.time, item, self._is_final(event.time, False)
        states = state.states
        for pindex in targets:
            matcher = self.matchers[pindex]
            mstate = states.get(pindex)
            if mstate is None:
                mstate = states[pindex] = matcher.new_state(ctx.key)
            ctx.pindex, ctx.pattern = pindex, matcher.name
            matcher.process(mstate, event, ctx)
            if matcher.is_idle(mstate):
                _maybe_release(state, pindex)

    def _fire(
        self, state: KeyHostState, time: int | float, pindex: int, token: Hashable, item: Order
    ) -> None:
        state.timer_counts[pindex] -= 1
        matcher = self.matchers[pindex]
        mstate = state.states.get(pindex)
        if mstate is None:  # a start-up timer reaches a key before any of its events
            mstate = state.states[pindex] = matcher.new_state(self._ctx.key)
        ctx = self._ctx
        ctx.now, ctx.item, ctx.final = time, item, self._is_final(time, True)
        ctx.pindex, ctx.pattern = pindex, matcher.name
        matcher.on_timer(mstate, time, token, ctx)
        if matcher.is_idle(mstate):
            _maybe_release(state, pindex)


def _parent(cause: Order) -> tuple[Any, ...]:
    """The part of a timer's order key that comes from the item that scheduled it.

    The engine fires equal-time timers in scheduling order, that is in the processing order of the
    items that scheduled them: their time and kind, and for events the arrival position. When two
    parents are timers at one time, the first events of their scheduling chains decide, then the
    per-key output counter. Within one key that is the engine's order exactly; across keys, two
    chains of timers that tie at every step back to different root events can come out swapped.
    """
    time, kind, seq, root = cause[0], cause[1], cause[2], cause[5]
    return (time, kind, seq if kind == _EVENT else -1, root)


def _maybe_release(state: KeyHostState, pindex: int) -> None:
    """Drop an idle matcher state once none of its timers is pending (as the engine does)."""
    if state.timer_counts.get(pindex, 0) == 0:
        state.timer_counts.pop(pindex, None)
        del state.states[pindex]


def collect_results(outputs: Iterable[HostOutput]) -> RunResult:
    """Sort one run's outputs (of all keys, in any order) into the engine's :class:`RunResult`.

    Detections, reactions and trace records come out in the local engine's order; late events in
    arrival order.
    """
    ordered = sorted(outputs, key=lambda o: o.order)
    by_kind: dict[str, list[Any]] = {
        OutputKind.DETECTION: [],
        OutputKind.REACTION: [],
        OutputKind.LATE: [],
        OutputKind.TRACE: [],
    }
    for out in ordered:
        by_kind[out.kind].append(out.payload)
    # The engine lists late events in arrival order (the third part of their order key).
    late = [
        o.payload for o in sorted((o for o in ordered if o.kind == OutputKind.LATE), key=lambda o: o.order[2])
    ]
    detections, reactions = by_kind[OutputKind.DETECTION], by_kind[OutputKind.REACTION]
    return RunResult(detections, reactions, late, by_kind[OutputKind.TRACE])
