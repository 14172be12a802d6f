"""The per-key host: one key's matcher states, its timers and the one :class:`Context` matchers see.

A :class:`KeyHost` holds the compiled matchers of a run and routes by event type; what changes per
key is a :class:`KeyState` (plain picklable data) that the driver keeps and hands in with each
event or timer. Every driver runs matchers through it: the in-process
:class:`~workbench.engine.runtime.Engine` (a clock plus a table of key states), its shards and
worker processes (each an ``Engine``), and the Flink operator (through
:mod:`workbench.backends.keyed`, which stores each key's state in Flink's keyed state).

The host decides nothing about time. The driver's clock says which event or timer is due; the host
processes it for one key and reports outputs and new timers to the driver's :class:`Sink`, which
keeps the timer queue (a global heap in the engine, a per-key heap under Flink) and delivers
detections.

>>> from workbench.engine.runtime import Engine
>>> Engine([]).host.targets("a")
[]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from workbench.engine.budget import Budget
from workbench.engine.detection import Detection, Reaction, TraceKind, TraceRecord
from workbench.engine.events import Event
from workbench.engine.matcher import Matcher

__all__ = ["HostContext", "KeyHost", "KeyState", "Sink", "late_record"]

Time = int | float


@dataclass(slots=True)
class KeyState:
    """Everything kept for one key (plain data, so a checkpoint or Flink's state backend can hold it).

    Attributes:
        states: per pattern index, the matcher's own per-key state.
        instances: per pattern index, the last instance id handed out (ids are 1, 2, 3, ... per key
            and pattern); with ``forget`` (:class:`KeyHost`) released with the pattern's idle state.
        timer_counts: per pattern index, how many of its timers are pending (a state is released
            only when idle and none is).
    """

    states: dict[int, object] = field(default_factory=dict)
    instances: dict[int, int] = field(default_factory=dict)
    timer_counts: dict[int, int] = field(default_factory=dict)

    def is_empty(self) -> bool:
        """True when nothing is left worth keeping (the driver may drop the key)."""
        return not (self.states or self.instances or self.timer_counts)


class Sink(Protocol):
    """What a driver receives from the host: outputs, and timers to queue."""

    def emit(self, detection: Detection) -> None:
        """Deliver a detection."""
        ...

    def react(self, reaction: Reaction) -> None:
        """Deliver a channel reaction."""
        ...

    def record(self, record: TraceRecord) -> None:
        """Deliver a trace record."""
        ...

    def schedule(self, time: Time, key: Hashable, pindex: int, token: Hashable) -> None:
        """Queue a timer; the driver calls :meth:`KeyHost.fire` once its clock passes ``time``."""
        ...

    def release_time(self, key: Hashable, now: Time) -> Time:
        """The time of a match released by a timer of ``key`` at ``now`` (see ``Context``)."""
        ...


class HostContext:
    """The :class:`~workbench.engine.matcher.Context` of every driver (one per host, reused)."""

    __slots__ = (
        "budget", "cause", "emit", "final", "forget", "key", "keystate", "now", "pattern", "pindex", "sink",
        "tracing",
    )  # fmt: skip

    #: ``emit(detection)``: the sink's own, bound once (a detection is handed over with one call)
    emit: Callable[[Detection], None]

    def __init__(self, sink: Sink, tracing: bool, budget: Budget | None = None, forget: bool = False) -> None:
        self.sink = sink
        self.emit = sink.emit
        self.tracing = tracing
        self.final = False
        self.key: Hashable = None
        self.now: Time = 0
        #: the position of the event being handled (``None`` while a timer fires), for trace records
        self.cause: int | None = None
        self.pindex = 0
        self.pattern = ""
        self.keystate = KeyState()
        #: the run's memory budget: engine-wide caps, ``dropped`` totals, once-per-run warnings
        self.budget = budget if budget is not None else Budget()
        #: ``forget``: an idle state's instance counter goes with it, so a key whose instances all
        #: ended leaves nothing behind. Ids then stay unique per key and pattern but are no longer
        #: 1, 2, 3 per key: a key with no counter counts on from ``budget.released``, the highest
        #: id of any released key (per pattern index). Off by default: the columnar replay
        #: renumbers instances by their rank among a key's start rows.
        self.forget = forget

    def release_time(self) -> Time:
        self.now = self.sink.release_time(self.key, self.now)
        return self.now

    def react(self, reaction: Reaction) -> None:
        self.sink.react(reaction)

    # (the native loop step has twins of schedule and new_instance: _native.pyx's _schedule and
    # _new_instance; a change here goes there too, and the native-vs-Python tests compare them)
    def schedule(self, time: Time, token: Hashable) -> None:
        counts, pindex = self.keystate.timer_counts, self.pindex
        counts[pindex] = counts.get(pindex, 0) + 1
        self.sink.schedule(time, self.key, pindex, token)

    def new_instance(self) -> int:
        instances, pindex = self.keystate.instances, self.pindex
        n = instances.get(pindex)
        if n is None:  # why: no live counter: count on past every released key's ids
            n = self.budget.released.get(pindex, 0)
        n += 1
        instances[pindex] = n
        return n

    def release(self, ks: KeyState, pindex: int) -> None:
        """``pindex``'s state of ``ks`` went idle with no timer pending: drop it and its bookkeeping."""
        ks.timer_counts.pop(pindex, None)
        del ks.states[pindex]
        if self.forget:
            self.forget_instances(ks, pindex)

    def forget_instances(self, ks: KeyState, pindex: int) -> None:
        """``forget``: drop the instance counter of a released state (ids count on past it)."""
        n = ks.instances.pop(pindex, None)
        released = self.budget.released
        if n is not None and n > released.get(pindex, 0):
            released[pindex] = n

    def horizon(self) -> Time:
        """How far time will move before the next event (timers up to here fire first); see ``Sink``."""
        reach = getattr(self.sink, "horizon", None)
        return self.now if reach is None else max(self.now, reach())

    def drop(self, count: int) -> None:
        self.budget.drop(self.pattern, count)

    def warn_once(self, topic: str, message: str) -> None:
        """A ``RuntimeWarning`` about the current pattern, given once per run and ``topic``."""
        self.budget.warn_once(self.pattern, topic, message)

    def trace(
        self, kind: TraceKind, instance: int, element: str | None = None, event_seq: int | None = None,
        detail: dict[str, object] | None = None,
    ) -> None:  # fmt: skip
        if self.tracing:
            rec = TraceRecord(
                self.now, self.pattern, self.key, instance, kind, element, event_seq, detail or {}
            )
            self.sink.record(rec)


class KeyHost:
    """Run a list of matchers for one key at a time.

    Args:
        matchers: compiled matchers; a matcher's position is its pattern index.
        sink: where outputs and timers go (the driver).
        tracing: whether matchers should produce trace records.
    """

    def __init__(
        self, matchers: Sequence[Matcher], sink: Sink, *, tracing: bool = False, budget: Budget | None = None,
        forget: bool = False,
    ) -> None:  # fmt: skip
        self.matchers: list[Matcher] = []
        self.by_type: dict[str, list[int]] = {}
        self.any_type: list[int] = []
        self.context = HostContext(sink, tracing, budget, forget)
        for matcher in matchers:
            self.add(matcher)

    def add(self, matcher: Matcher) -> int:
        """Add a matcher; return its pattern index."""
        index = len(self.matchers)
        self.matchers.append(matcher)
        types = matcher.event_types()
        if types is None:
            self.any_type.append(index)
            for targets in self.by_type.values():
                targets.append(index)
                targets.sort()
        else:
            for t in types:
                if t not in self.by_type:
                    self.by_type[t] = list(self.any_type)
                self.by_type[t].append(index)
                self.by_type[t].sort()
        return index

    def targets(self, event_type: str) -> list[int]:
        """The pattern indexes that use events of this type, in order (empty: none does)."""
        return self.by_type.get(event_type, self.any_type)

    def initial_timers(self) -> list[tuple[int, Time, Hashable, Hashable]]:
        """Start-up timers ``(pattern index, time, key, token)`` of matchers with ``initial_timers()``."""
        out: list[tuple[int, Time, Hashable, Hashable]] = []
        for index, matcher in enumerate(self.matchers):
            initial = getattr(matcher, "initial_timers", None)
            if initial is not None:
                out.extend((index, t, k, token) for t, k, token in initial())
        return out

    def schedule_initial(self, ks: KeyState, key: Hashable, pindex: int, time: Time, token: Hashable) -> None:
        """Schedule a start-up timer for ``key`` (before any of its events)."""
        ctx = self.context
        ctx.key, ctx.keystate, ctx.pindex = key, ks, pindex
        ctx.schedule(time, token)

    def process(self, ks: KeyState, key: Hashable, event: Event, targets: list[int]) -> None:
        """Hand one event of ``key`` to the matchers at ``targets`` (see :meth:`targets`)."""
        ctx = self.context
        ctx.key, ctx.now, ctx.keystate, ctx.cause = key, event.time, ks, event.seq
        states = ks.states
        matchers = self.matchers
        for pindex in targets:
            matcher = matchers[pindex]
            state = states.get(pindex)
            if state is None:
                state = states[pindex] = matcher.new_state(key)
            ctx.pindex = pindex
            ctx.pattern = matcher.name
            matcher.process(state, event, ctx)
            # Why: an idle state is dropped at once, unless a timer of it is still pending
            if matcher.is_idle(state) and not ks.timer_counts.get(pindex):
                ctx.release(ks, pindex)

    def fire(self, ks: KeyState, key: Hashable, time: Time, pindex: int, token: Hashable) -> None:
        """Fire one timer that the driver queued through :meth:`Sink.schedule`."""
        ks.timer_counts[pindex] -= 1
        matcher = self.matchers[pindex]
        state = ks.states.get(pindex)
        if state is None:  # a start-up timer may reach a key before any of its events
            state = ks.states[pindex] = matcher.new_state(key)
        ctx = self.context
        ctx.key, ctx.now, ctx.keystate, ctx.pindex, ctx.pattern = key, time, ks, pindex, matcher.name
        ctx.cause = None
        matcher.on_timer(state, time, token, ctx)
        if matcher.is_idle(state) and not ks.timer_counts.get(pindex):
            ctx.release(ks, pindex)


def late_record(event: Event) -> TraceRecord:
    """The trace record of a late event (every driver traces one the same way)."""
    return TraceRecord(event.time, "", event.key, 0, TraceKind.LATE, None, event.seq, {})
