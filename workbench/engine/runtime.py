"""The keyed runtime: splitter, event-time clock, watermarks, timers, late events.

:class:`Engine` runs many patterns over one stream. Each event is validated, stamped with its
arrival position (``seq``), routed by key (the splitter: Prova's conversation id, Flink's
``keyBy``, the patent's stream splitter) and by event type to the matchers that can use it, and
handed to each matcher together with that key's state.

Time and ordering rules (event-time mode, the default):

* The watermark follows Flink: ``advance_time(w)`` declares that no event with ``time <= w`` will
  arrive any more. Every buffered event with ``time <= w`` is processed and every timer with
  ``time <= w`` fires.
* With ``out_of_orderness=B`` the engine derives a watermark from the events themselves: after an
  event, events with ``time <= max_seen - B`` are released (in ``(time, arrival)`` order), while
  timers fire only for ``time < max_seen - B`` -- an event may still arrive at exactly
  ``max_seen - B``. With ``B = 0`` an in-order stream is processed immediately.
* **Ties**: at one timestamp, events come first, then timers (Prova's documented "event first"
  resolution, ``prova.md`` 9.15); equal-time events keep arrival order; equal-time timers fire in
  the order they were scheduled. A matcher that must act *before* an event at a boundary (Flink's
  ``within`` prunes at ``t - t_first >= window``) checks that in ``process`` itself.
* An event older than the watermark (``time < max_seen - B``, or ``time <= w`` after
  ``advance_time(w)``) is **late**: it is not matched, it is appended to :attr:`Engine.late`, counted
  in ``late_count``, passed to ``on_late`` callbacks and traced. Nothing is dropped silently.

Processing-time mode (``time_mode="processing"``) stamps each event with the clock at arrival and
processes it at once; :meth:`Engine.tick` fires the timers that the clock has passed (a live feed
calls it periodically).
"""

from __future__ import annotations

import heapq
import itertools
import math
import pickle
import time as _time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from workbench.engine.clock import is_late, stamp
from workbench.engine.detection import Detection, Reaction, TraceKind, TraceRecord
from workbench.engine.events import Event, _fast_check
from workbench.engine.families import compile_matcher
from workbench.engine.faults import ConditionFault
from workbench.engine.matcher import Matcher, Pattern
from workbench.engine.outputs import Outputs
from workbench.errors import CepError, PatternError

__all__ = ["Engine", "EngineSnapshot", "KeyState", "RunResult", "run"]

INF = math.inf
Clock = Callable[[], float]


def wall_clock_ms() -> float:
    """Milliseconds since the epoch, the default processing-time clock."""
    return _time.time() * 1000.0


@dataclass(slots=True)
class KeyState:
    """Everything the runtime keeps for one key: one state per pattern, and an instance counter."""

    states: dict[int, Any] = field(default_factory=dict)


@dataclass(slots=True)
class EngineSnapshot:
    """A picklable image of the engine's mutable state (patterns are not part of it)."""

    pattern_names: tuple[str, ...]
    keys: dict[Hashable, KeyState]
    timers: list[tuple[int | float, int, Hashable, int, Hashable]]
    timer_counts: dict[tuple[Hashable, int], int]
    buffer: list[tuple[int | float, int, Event]]
    watermark: tuple[float, bool]
    max_seen: float
    next_seq: int
    next_timer: int
    late: list[Event]
    late_count: int
    instance_counters: dict[tuple[Hashable, int], int] = field(default_factory=dict)


@dataclass(slots=True)
class RunResult:
    """What :func:`run` returns."""

    detections: list[Detection]
    reactions: list[Reaction]
    late: list[Event]
    trace: list[TraceRecord]
    errors: list[ConditionFault] = field(default_factory=list)


class _Ctx:
    """The single mutable :class:`~workbench.engine.matcher.Context` implementation."""

    __slots__ = ("_engine", "final", "key", "keystate", "now", "pattern", "pindex", "tracing")

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.key: Hashable = None
        self.now: int | float = 0
        self.pindex = 0
        self.pattern = ""
        self.keystate = KeyState()
        self.tracing = engine.tracing
        self.final = False

    def emit(self, detection: Detection) -> None:
        self._engine._emit(detection)

    def react(self, reaction: Reaction) -> None:
        self._engine._react(reaction)

    def schedule(self, time: int | float, token: Hashable) -> None:
        self._engine._schedule(time, self.key, self.pindex, token)

    def new_instance(self) -> int:
        counters = self._engine._instance_counters
        slot = (self.key, self.pindex)
        n = counters.get(slot, 0) + 1
        counters[slot] = n
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
            rec = TraceRecord(
                self.now, self.pattern, self.key, instance, kind, element, event_seq, detail or {}
            )
            self._engine._trace(rec)


class Engine(Outputs):
    """Run several patterns over one keyed stream.

    Args:
        patterns: pattern objects (anything with ``name`` and ``compile()``) or compiled matchers.
        out_of_orderness: how far (ms) behind the newest event an event may arrive and still be
            sorted into place instead of being late.
        time_mode: ``"event"`` (default) or ``"processing"`` (events stamped with ``clock()``).
        clock: the processing-time clock in ms (default: wall clock).
        trace: record state changes (see :class:`~workbench.engine.detection.TraceRecord`).
        on_detection / on_reaction / on_late / on_trace: callbacks, called synchronously.
        collect: keep detections, reactions and trace records in lists on the engine (default).
        strict: stop at the first runtime error of a condition (:class:`CepRuntimeError`) instead
            of recording it in :attr:`errors` and treating the event as not matching.

    >>> from workbench.engine.runtime import Engine
    >>> Engine([]).process({"type": "a", "time": 1})
    []
    """

    def __init__(
        self,
        patterns: Iterable[Pattern | Matcher] = (),
        *,
        out_of_orderness: int | float = 0,
        time_mode: Literal["event", "processing"] = "event",
        clock: Clock | None = None,
        trace: bool = False,
        on_detection: Callable[[Detection], None] | None = None,
        on_reaction: Callable[[Reaction], None] | None = None,
        on_late: Callable[[Event], None] | None = None,
        on_trace: Callable[[TraceRecord], None] | None = None,
        collect: bool = True,
        strict: bool = False,
    ) -> None:
        if time_mode not in ("event", "processing"):
            msg = f"time_mode must be 'event' or 'processing', got {time_mode!r}"
            raise CepError(msg)
        if out_of_orderness < 0:
            msg = f"out_of_orderness must be >= 0, got {out_of_orderness!r}"
            raise CepError(msg)
        self.matchers: list[Matcher] = []
        self._by_type: dict[str, list[int]] = {}
        self._any_type: list[int] = []
        self.out_of_orderness = out_of_orderness
        self.time_mode = time_mode
        self.clock: Clock = clock or wall_clock_ms
        self.tracing = trace
        super().__init__(
            on_detection=on_detection,
            on_reaction=on_reaction,
            on_late=on_late,
            on_trace=on_trace,
            collect=collect,
            strict=strict,
        )
        self._keys: dict[Hashable, KeyState] = {}
        self._timers: list[tuple[int | float, int, Hashable, int, Hashable]] = []
        self._timer_counts: dict[tuple[Hashable, int], int] = {}
        self._timer_seq = itertools.count()
        self._buffer: list[tuple[int | float, int, Event]] = []
        self._wm: tuple[float, bool] = (-INF, False)
        self._max_seen = -INF
        self._next_seq = 0
        self._processing = time_mode == "processing"
        self._instance_counters: dict[tuple[Hashable, int], int] = {}
        self._ctx = _Ctx(self)
        for p in patterns:
            self.add(p)

    # ------------------------------------------------------------------ set-up
    def add(self, pattern: Pattern | Matcher) -> Matcher:
        """Add a pattern (compiling it) and return its matcher. Names must be unique."""
        matcher: Matcher = compile_matcher(pattern)
        if any(m.name == matcher.name for m in self.matchers):
            msg = "a pattern with this name is already in the engine"
            raise PatternError(msg, pattern=matcher.name)
        index = len(self.matchers)
        self.matchers.append(matcher)
        self._adopt_faults(matcher)
        types = matcher.event_types()
        if types is None:
            self._any_type.append(index)
            for lst in self._by_type.values():
                lst.append(index)
                lst.sort()
        else:
            for t in types:
                if t not in self._by_type:
                    self._by_type[t] = list(self._any_type)
                self._by_type[t].append(index)
                self._by_type[t].sort()
        # Optional hook: a matcher may ask for timers before any event (Prova groups created at
        # start-up). ``initial_timers()`` yields ``(time, key, token)``.
        initial = getattr(matcher, "initial_timers", None)
        if initial is not None:
            for time, key, token in initial():
                self._schedule(time, key, index, token)
        return matcher

    @property
    def watermark(self) -> float:
        """The current watermark (``-inf`` before any time has passed)."""
        return self._wm[0]

    @property
    def keys(self) -> Mapping[Hashable, KeyState]:
        """Live per-key states (read-only view for inspection)."""
        return self._keys

    def state_of(self, pattern: str, key: Hashable) -> Any:
        """The per-key state of one pattern (``None`` if the key holds none)."""
        ks = self._keys.get(key)
        if ks is None:
            return None
        for i, m in enumerate(self.matchers):
            if m.name == pattern:
                return ks.states.get(i)
        msg = f"no pattern named {pattern!r}; patterns: {[m.name for m in self.matchers]}"
        raise CepError(msg)

    # ------------------------------------------------------------------ input
    def process(self, raw: Event | Mapping[str, Any]) -> list[Detection]:
        """Feed one event; return the detections emitted as a consequence (possibly by timers).

        ``raw`` is an :class:`~workbench.engine.events.Event` or a mapping (see
        :func:`~workbench.engine.events.make_event`). An event without ``seq`` is stamped with its
        input position; an event that already carries one (``seq >= 0``) keeps it, so a host that
        splits one stream over several engines keeps global ids.
        """
        out: list[Detection] = []
        self._out = out
        position = self._next_seq
        self._next_seq = position + 1  # a rejected event still occupies its input position
        event = stamp(raw, position)
        if self._processing:
            now = max(self.clock(), self._max_seen)
            event = event.with_time(now)
            self._max_seen = now
            self._advance((now, False))
            self._dispatch(event)
            return out
        t = event.time
        wm = self._wm[0]
        if is_late(self._wm, t):
            self._late(event)
            return out
        if not self._buffer and not self.out_of_orderness and t >= self._max_seen:
            # Fast path for in-order input: nothing to sort, fire timers strictly before t, go.
            self._max_seen = t
            if t > wm:
                self._wm = (t, False)
            timers = self._timers
            if timers and timers[0][0] < t:
                self._advance(self._wm)
            self._dispatch(event)
            return out
        if t > self._max_seen:
            self._max_seen = t
        heapq.heappush(self._buffer, (t, position, event))
        self._advance((self._max_seen - self.out_of_orderness, False))
        return out

    def process_many(self, events: Iterable[Event | Mapping[str, Any]]) -> list[Detection]:
        """Feed events in order; return all detections they caused.

        Same results as calling :meth:`process` per event; in-order :class:`Event` objects of an
        event-time engine take an inlined fast path (the replay hot loop).
        """
        out: list[Detection] = []
        if self._processing or self.out_of_orderness:
            for e in events:
                out.extend(self.process(e))
            return out
        self._out = out
        dispatch = self._dispatch
        by_type, any_type = self._by_type, self._any_type
        for raw in events:
            if type(raw) is not Event or self._buffer:
                out.extend(self.process(raw))
                self._out = out
                continue
            position = self._next_seq
            self._next_seq = position + 1
            # clock.stamp, inlined for built events: the one per-event call the replay loop saves
            event = _fast_check(raw, position)
            if event.seq < 0:
                event = event.with_seq(position)
            t = event.time
            wm = self._wm[0]
            # Why the guard: an event newer than the watermark is never late (the usual case)
            if t < self._max_seen or (t <= wm and is_late(self._wm, t)):
                self._next_seq = position  # let process() handle lateness/sorting with the same position
                out.extend(self.process(event))
                self._out = out
                continue
            self._max_seen = t
            if t > wm:
                self._wm = (t, False)
            timers = self._timers
            if timers and timers[0][0] < t:
                self._advance(self._wm)
            if by_type.get(event.type, any_type):  # events no pattern uses only move the clock
                dispatch(event)
        return out

    def advance_time(self, watermark: int | float) -> list[Detection]:
        """Declare that no event with ``time <= watermark`` will arrive; fire what is due."""
        self._out = []
        self._advance((watermark, True))
        return self._out

    def tick(self) -> list[Detection]:
        """Processing-time mode: fire the timers the clock has passed."""
        self._out = []
        now = max(self.clock(), self._max_seen)
        self._max_seen = now
        self._advance((now, False))
        return self._out

    def finish(self, until: int | float | None = None) -> list[Detection]:
        """End of input: release everything buffered and fire timers up to ``until`` (default: all).

        With ``until=None`` the flush is *final*: recurring timers (Prova ``@timer`` windows) do not
        re-arm, so the flush terminates.
        """
        self._out = []
        if until is None:
            self._ctx.final = True
            try:
                self._advance((INF, True))
            finally:
                self._ctx.final = False
        else:
            self._advance((until, True))
        return self._out

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> bytes:
        """Pickle the mutable state (keys, timers, buffer, clock, counters)."""
        snap = EngineSnapshot(
            tuple(m.name for m in self.matchers),
            self._keys,
            self._timers,
            self._timer_counts,
            self._buffer,
            self._wm,
            self._max_seen,
            self._next_seq,
            next(self._timer_seq),
            self.late,
            self.late_count,
            self._instance_counters,
        )
        return pickle.dumps(snap)

    def restore(self, blob: bytes) -> None:
        """Replace the mutable state with a snapshot taken from an engine with the same patterns."""
        snap: EngineSnapshot = pickle.loads(blob)
        names = tuple(m.name for m in self.matchers)
        if snap.pattern_names != names:
            msg = f"snapshot was taken with patterns {snap.pattern_names}, this engine has {names}"
            raise CepError(msg)
        self._keys = snap.keys
        self._timers = snap.timers
        self._timer_counts = snap.timer_counts
        self._buffer = snap.buffer
        self._wm = snap.watermark
        self._max_seen = snap.max_seen
        self._next_seq = snap.next_seq
        self._timer_seq = itertools.count(snap.next_timer)
        self.late = snap.late
        self.late_count = snap.late_count
        self._instance_counters = snap.instance_counters

    # ------------------------------------------------------------------ internals
    def _late(self, event: Event) -> None:
        self.late_count += 1
        self.late.append(event)
        if self._on_late is not None:
            self._on_late(event)
        if self.tracing:
            self._trace(TraceRecord(event.time, "", event.key, 0, TraceKind.LATE, None, event.seq, {}))

    def _advance(self, wm: tuple[float, bool]) -> None:
        if wm > self._wm:
            self._wm = wm
        limit, closed = self._wm
        buf, timers = self._buffer, self._timers
        while True:
            ev_due = bool(buf) and buf[0][0] <= limit
            tm_due = bool(timers) and (timers[0][0] < limit or (closed and timers[0][0] == limit))
            if ev_due and (not tm_due or buf[0][0] <= timers[0][0]):
                _, _, event = heapq.heappop(buf)
                self._dispatch(event)
            elif tm_due:
                time, _, key, pindex, token = heapq.heappop(timers)
                self._fire(time, key, pindex, token)
            else:
                break

    def _dispatch(self, event: Event) -> None:
        targets = self._by_type.get(event.type, self._any_type)
        if not targets:
            return
        key = event.key
        ks = self._keys.get(key)
        if ks is None:
            ks = self._keys[key] = KeyState()
        ctx = self._ctx
        ctx.key, ctx.now, ctx.keystate = key, event.time, ks
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
            if matcher.is_idle(state):
                self._maybe_release(ks, key, pindex)
        # Drop the key only after every target ran: a later target may still store state in ``ks``.
        if not ks.states:
            self._keys.pop(key, None)

    def _fire(self, time: int | float, key: Hashable, pindex: int, token: Hashable) -> None:
        counts = self._timer_counts
        counts[(key, pindex)] -= 1
        matcher = self.matchers[pindex]
        ks = self._keys.get(key)
        if ks is None:  # a start-up timer (initial_timers) may reach a key that has no state yet
            ks = self._keys[key] = KeyState()
        state = ks.states.get(pindex)
        if state is None:
            state = ks.states[pindex] = matcher.new_state(key)
        ctx = self._ctx
        ctx.key, ctx.now, ctx.keystate, ctx.pindex, ctx.pattern = key, time, ks, pindex, matcher.name
        matcher.on_timer(state, time, token, ctx)
        if matcher.is_idle(state):
            self._maybe_release(ks, key, pindex)
            if not ks.states:
                self._keys.pop(key, None)

    def _maybe_release(self, ks: KeyState, key: Hashable, pindex: int) -> None:
        """Drop an idle state once no timer of it is pending."""
        if self._timer_counts.get((key, pindex), 0) == 0:
            self._timer_counts.pop((key, pindex), None)
            del ks.states[pindex]
            # The caller drops the key once it holds no state. Instance ids stay unique per key and
            # pattern: the counters live in ``Engine._instance_counters`` (one int per key and
            # pattern that ever created an instance), not in the released state.

    def _schedule(self, time: int | float, key: Hashable, pindex: int, token: Hashable) -> None:
        heapq.heappush(self._timers, (time, next(self._timer_seq), key, pindex, token))
        k = (key, pindex)
        self._timer_counts[k] = self._timer_counts.get(k, 0) + 1


def run(
    patterns: Sequence[Pattern | Matcher] | Pattern | Matcher,
    events: Iterable[Event | Mapping[str, Any]],
    *,
    until: int | float | None = None,
    out_of_orderness: int | float = 0,
    trace: bool = False,
    strict: bool = False,
) -> RunResult:
    """Run patterns over a finite stream and flush at the end (``strict``: see :class:`Engine`).

    >>> run([], [{"type": "a", "time": 1}]).detections
    []
    """
    plist: Sequence[Pattern | Matcher] = [patterns] if isinstance(patterns, Pattern | Matcher) else patterns
    engine = Engine(plist, out_of_orderness=out_of_orderness, trace=trace, strict=strict)
    engine.process_many(events)
    engine.finish(until)
    return RunResult(engine.detections, engine.reactions, engine.late, engine.trace_records, engine.errors)
