"""Leading and standalone absence: ``not a for 30s`` (Siddhi's ``not A for 30 sec -> B``).

An :class:`AbsencePattern` is a :class:`Silence` (no event of the absent kind for ``for_ms``), and
optionally a continuation (a :class:`~workbench.engine.nfa.pattern.SequencePattern`) that may only
start once the silence is proved. Absence is proved by the clock: a timer at the silence's end,
which fires when the watermark passes it (event time) or when :meth:`Engine.tick` sees the clock
pass it (processing time). At one timestamp events come before timers, so an absent event exactly
at the end breaks the silence.

Per key (the silence belongs to a partition key once the key has been seen):

* The silence starts at the key's first event of any type (a key never seen has no silence: there
  is no clock for it) and restarts at each absent event.
* It is **proved** when ``for_ms`` passes without an absent event. Standalone, the proof is the
  detection; leading, it opens the continuation, whose partial matches start at the key's events
  after the proof. Its first match is the detection: the first the continuation emits, so when
  one event (or timer) completes several, the one the sequence orders first (the oldest partial
  match; Flink's order with ``flink_order``); the others, and whatever the continuation emits
  after it in that step, are dropped with the continuation. Its timeouts before that match are
  passed on. An absent event closes it (its partial matches are dropped: the continuation must
  happen during the silence).
* The continuation's conditions read the **key's stream** (``prev(e, n)``, windows): it sees every
  event of the key from the first, those before the proof and the absent events included, however
  many continuations were opened and closed (only the partial matches are new at each proof).
* After a detection the silence waits for the next absent event (one detection per silence), or,
  with ``every``, restarts at once: a silence that goes on is reported every ``for_ms``.

Detections of an absence become events of type ``emit_into`` (:mod:`workbench.engine.derived`) like
those of a sequence: the pattern's ``emit_into`` is its continuation's (they are kept equal).

Detections of a standalone absence have no events; their measures ``silence_start`` and
``silence_end`` (kind ``"time"``) say when the silence began and when it was proved, and
``negated`` names the absent element. A continuation's detections carry the same two measures
before its own.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any

from workbench.engine.detection import Detection, MeasureValues, TraceKind
from workbench.engine.events import Event
from workbench.engine.expr import EMPTY_FRAME, compile_tree, ir
from workbench.engine.faults import FaultSink
from workbench.engine.matcher import Context
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.pattern import AllOf, AnyOf, Condition, Measure, SequencePattern, as_condition
from workbench.engine.nfa.streamed import StreamMatcher, StreamState, stream_nodes
from workbench.errors import PatternError

__all__ = ["SILENCE_MEASURES", "AbsenceMatcher", "AbsencePattern", "AbsenceState", "Silence"]

Time = int | float
#: the measures every absence detection starts with (times: dates when the input's times are)
SILENCE_MEASURES = ("silence_start", "silence_end")
_KINDS = {"silence_start": "time", "silence_end": "time"}


@dataclass(frozen=True, slots=True)
class Silence:
    """``not NAME[: TYPES] for D [where COND]``: no such event of the key for ``for_ms``.

    Attributes:
        name: the absent element's name (``negated`` of the detections).
        for_ms: how long the silence must last (ms, > 0).
        types: the absent event's types (empty: an event of any type breaks the silence).
        where: the condition an event must meet to break the silence (``None``: every event of
            ``types``); reads ``e`` only.
        every: restart the silence after each detection (else after the next absent event).
    """

    name: str
    for_ms: int | float
    types: tuple[str, ...] = ()
    where: Condition | None = None
    every: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", as_condition(self.where, self.name))
        types: object = self.types  # a list or one type name is fine; kept as a tuple
        object.__setattr__(self, "types", (types,) if isinstance(types, str) else tuple(self.types))
        d: object = self.for_ms
        if isinstance(d, bool) or not isinstance(d, int | float) or not 0 < d < math.inf:
            msg = f"an absence lasts a finite duration > 0, got {d!r}"
            raise PatternError(msg, element=self.name)


@dataclass(frozen=True, slots=True)
class AbsencePattern:
    """A silence, standalone or followed by a continuation (see the module).

    Attributes:
        name: the pattern's name (the continuation's, when there is one).
        silence: what must be absent, and for how long.
        then: the sequence that must follow the proved silence (``None``: standalone).
        emit_into: an event type each match becomes (:mod:`workbench.engine.derived`), its
            measures (the silence's columns first) as fields; the continuation's ``emit_into``
            when it has one (either given is the other).
    """

    name: str
    silence: Silence
    then: SequencePattern | None = None
    emit_into: str | None = None

    def __post_init__(self) -> None:
        if self.then is not None and self.then.name != self.name:
            object.__setattr__(self, "then", replace(self.then, name=self.name))
        self._agree_on_emit_into()
        names = {m.name for m in self.then.measures} if self.then is not None else set()
        clash = names & set(SILENCE_MEASURES)
        if clash:
            msg = f"measure {sorted(clash)[0]!r} is the silence's own column; choose another name"
            raise PatternError(msg, pattern=self.name)

    @property
    def measures(self) -> tuple[Measure, ...]:
        """The continuation's measures (a detection has them after ``silence_start`` and ``silence_end``)."""
        return self.then.measures if self.then is not None else ()

    @property
    def own_measures(self) -> tuple[str, ...]:
        """The measures every detection has before :attr:`measures`: the silence's two columns."""
        return SILENCE_MEASURES

    def compile(self) -> AbsenceMatcher:
        """The pattern's matcher."""
        return AbsenceMatcher(self)

    def _agree_on_emit_into(self) -> None:
        """One ``emit_into`` for the pattern and its continuation (whichever was given)."""
        into: object = self.emit_into
        then = self.then
        if into is not None and (not isinstance(into, str) or not into):
            msg = f"emit_into must be an event type name, got {into!r}"
            raise PatternError(msg, pattern=self.name)
        if then is None or then.emit_into == into:
            return
        if into is None:  # Why: given on the continuation only (its own option)
            object.__setattr__(self, "emit_into", then.emit_into)
        elif then.emit_into is None:  # Why: given on the pattern only; the printer reads the continuation's
            object.__setattr__(self, "then", replace(then, emit_into=into))
        else:
            msg = f"the pattern emits into {into!r} but its continuation emits into {then.emit_into!r}"
            raise PatternError(msg, pattern=self.name)


class AbsenceState:
    """One key's silence and continuation.

    Attributes:
        seen: whether the key has had an event (its clock runs).
        start: when the running silence began (``None``: waiting for an absent event).
        pending: the time of the key's one pending silence timer (``None``: none). An absent event
            moves ``start`` without a new timer; the pending one, when it fires early, re-arms at
            the new end (so a key has one timer however many absent events it has).
        gates: how many continuations were opened (the open one's number is ``gate``).
        gate: the open continuation's number (``0``: none is open).
        opened: the proved silence ``(start, end)`` the open continuation follows.
        inner: the continuation's state: the key's stream, and the open continuation's partial
            matches (none while it is closed); ``None`` when standalone.
    """

    __slots__ = ("gate", "gates", "inner", "opened", "pending", "seen", "start")

    def __init__(self) -> None:
        self.seen = False
        self.start: Time | None = None
        self.pending: Time | None = None
        self.gates = 0
        self.gate = 0
        self.opened: tuple[Time, Time] = (0, 0)
        self.inner: Any = None

    def __getstate__(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setstate__(self, data: tuple[Any, ...]) -> None:
        for name, value in zip(self.__slots__, data, strict=True):
            setattr(self, name, value)


class AbsenceMatcher:
    """The matcher of an :class:`AbsencePattern` (every event type reaches it: any event is a sighting)."""

    def __init__(self, pattern: AbsencePattern) -> None:
        self.pattern = pattern
        self.name = pattern.name
        self.silence = pattern.silence
        self.inner = _Continuation(pattern.then) if pattern.then is not None else None
        self.faults: FaultSink = self.inner.faults if self.inner is not None else FaultSink(pattern.name)
        self.breaks = _breaker(pattern.silence, self.faults)
        self.types = frozenset(pattern.silence.types)
        #: the types that can lead to a detection (``None``: every type); see :func:`_relevant`
        self.relevant = _relevant(self.types, self.inner)

    def event_types(self) -> frozenset[str] | None:
        """Every type: a key is seen by any of its events."""
        return None

    def new_state(self, key: Hashable) -> AbsenceState:
        """A key not yet seen (its continuation closed, its stream empty)."""
        state = AbsenceState()
        if self.inner is not None:
            state.inner = self.inner.new_state(key)
        return state

    def is_idle(self, state: AbsenceState) -> bool:
        """Never: a seen key keeps its silence."""
        return False

    def process(self, state: AbsenceState, event: Event, ctx: Context) -> None:
        """An absent event restarts the silence (closing the continuation); each event feeds it."""
        types = self.types
        if (not types or event.type in types) and self.breaks(event):
            self._close(state, ctx)
            self._arm(state, event.time, ctx)
        elif not state.seen:  # Why: the key's first sighting starts its clock
            self._arm(state, event.time, ctx)
        if self.inner is not None:
            self._feed(self.inner, state, event, ctx)

    def _feed(self, inner: _Continuation, state: AbsenceState, event: Event, ctx: Context) -> None:
        """The key's stream takes every event; only an open continuation matches it."""
        if state.inner is None:  # Why: a snapshot of an older version kept no closed continuation
            state.inner = inner.new_state(ctx.key)
        if not state.gate:  # Why: no proved silence admits the event to a partial match
            inner.observe(state.inner, event)
            return
        gate = _Gate(ctx, state.gate)
        inner.process(state.inner, event, gate)
        self._after(state, gate, ctx)

    def on_timer(self, state: AbsenceState, time: Time, token: Hashable, ctx: Context) -> None:
        """The silence's end (proof), or a timer of the open continuation."""
        assert isinstance(token, tuple)
        if token[0] == "then":
            if token[1] == state.gate and self.inner is not None:  # Why: else the continuation is gone
                gate = _Gate(ctx, state.gate)
                self.inner.on_timer(state.inner, time, token[2], gate)
                self._after(state, gate, ctx)
            return
        state.pending = None
        if state.start is None:  # Why: proved already; waiting for an absent event
            return
        end = state.start + self.silence.for_ms
        if end > time:  # Why: an absent event moved the start: wait for the new end
            self._schedule(state, end, ctx)
            return
        proved = (state.start, time)
        state.start = None
        if self.inner is None:
            self._emit(ctx, proved, None)
            self._rearm(state, time, ctx)
            return
        state.gates += 1
        state.gate = state.gates  # the plan is empty: a closed continuation keeps no partial match
        state.opened = proved

    def advance(self, state: AbsenceState, t: Time, ctx: Context) -> None:
        """Advance the open continuation's time."""
        if state.gate and self.inner is not None:
            gate = _Gate(ctx, state.gate)
            self.inner.advance(state.inner, t, gate)
            self._after(state, gate, ctx)

    def _arm(self, state: AbsenceState, start: Time, ctx: Context) -> None:
        state.seen = True
        state.start = start
        if state.pending is None:  # Why: else the pending timer re-arms itself when it fires
            self._schedule(state, start + self.silence.for_ms, ctx)

    @staticmethod
    def _schedule(state: AbsenceState, end: Time, ctx: Context) -> None:
        state.pending = end
        ctx.schedule(end, ("silence",))

    def _rearm(self, state: AbsenceState, time: Time, ctx: Context) -> None:
        # Why: at the final flush time runs to infinity; a re-armed silence would never end
        if self.silence.every and not ctx.final:
            self._arm(state, time, ctx)

    def _close(self, state: AbsenceState, ctx: Context) -> None:
        """Close the open continuation: its partial matches go, the key's stream stays."""
        if state.gate and self.inner is not None:
            state.gate = 0
            self.inner.drop_matches(state.inner, ctx.key)

    def _after(self, state: AbsenceState, gate: _Gate, ctx: Context) -> None:
        """Pass on what the continuation emitted up to its first match, which closes it."""
        for d in gate.out:
            self._emit(ctx, state.opened, d)
            if d.kind == "match":  # Why: one detection per silence; what follows went with the continuation
                self._close(state, ctx)
                self._rearm(state, d.time, ctx)
                return

    def _emit(self, ctx: Context, proved: tuple[Time, Time], d: Detection | None) -> None:
        values: dict[str, object] = {"silence_start": proved[0], "silence_end": proved[1]}
        exprs = getattr(d.measures, "exprs", None) if d is not None else None
        if d is None:
            d = Detection(self.name, ctx.key, ctx.new_instance(), "match", proved[1], (), ())
            kinds: dict[str, str] = dict(_KINDS)
            if ctx.tracing:  # Why: the proof is the detection; the timeline shows it as one
                ctx.trace(TraceKind.DETECTED, d.instance, self.silence.name, None, dict(values))
        else:
            values.update(d.measures)
            kinds = {**_KINDS, **getattr(d.measures, "kinds", {})}
        negated = (self.silence.name, *d.negated)
        ctx.emit(replace(d, negated=negated, measures=MeasureValues(values, kinds, exprs)))


class _Continuation(StreamMatcher):
    """The stages after a leading silence, on the key's stream (see the module).

    The stream (``prev(e, n)``, windows; nothing is kept when the conditions read none) is the
    key's: :meth:`observe` gives it the events no open continuation sees. The partial matches are
    the open continuation's: :meth:`drop_matches` empties them when it closes.
    """

    def __init__(self, then: SequencePattern) -> None:
        super().__init__(NFAMatcher(then), stream_nodes(then))

    def drop_matches(self, state: StreamState, key: Hashable) -> None:
        """Forget the partial matches (a fresh plan), keep the stream."""
        state.inner = self.inner.new_state(key)


class _Gate:
    """The context the continuation runs in: its timers are tagged, its detections held back."""

    __slots__ = ("ctx", "gate", "out")

    def __init__(self, ctx: Context, gate: int) -> None:
        self.ctx = ctx
        self.gate = gate
        self.out: list[Detection] = []

    def emit(self, detection: Detection) -> None:
        self.out.append(detection)

    def schedule(self, time: Time, token: Hashable) -> None:
        self.ctx.schedule(time, ("then", self.gate, token))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ctx, name)


def _relevant(types: frozenset[str], inner: _Continuation | None) -> frozenset[str] | None:
    """The types that break the silence or change the continuation's partial matches (``None``: all).

    Any other event only starts an unseen key's clock or enters the key's stream: a derived event
    of the pattern's own type cannot do the first (its key was seen) and need not do the second.
    """
    if not types:  # Why: an untyped silence is broken by any event, the pattern's own derived ones too
        return None
    matched = inner.relevant if inner is not None else frozenset()
    return None if matched is None else types | matched


def _breaker(silence: Silence, faults: FaultSink) -> Callable[[Event], bool]:
    """Whether an event of the silence's types breaks it (its ``where`` holds)."""
    test = _test(silence.where, silence.name)
    where = f"condition of {silence.name!r}"

    def breaks(event: Event) -> bool:
        try:
            return test(event)
        except Exception as err:  # Why: a condition fault; the event does not break the silence
            faults.report(where, err, event)
            return False

    return breaks


def _test(cond: Condition | None, name: str) -> Callable[[Event], bool]:
    if cond is None:
        return lambda e: True
    if isinstance(cond, AllOf | AnyOf):
        parts = [_test(p, name) for p in cond.parts]
        combine = all if isinstance(cond, AllOf) else any
        return lambda e: combine(p(e) for p in parts)
    if isinstance(cond, ir.Node):
        if ir.free_names(cond) - {"e"}:
            what = ", ".join(sorted(ir.free_names(cond) - {"e"}))
            msg = f"the condition of an absence reads only the event 'e', not {what}"
            raise PatternError(msg, element=name)
        run = compile_tree(cond).run
        return lambda e: bool(run(e, EMPTY_FRAME, None))
    if callable(cond):
        fn = cond
        try:
            arity = len(inspect.signature(fn).parameters)
        except (TypeError, ValueError):  # a builtin without a signature: assume fn(e)
            arity = 1
        if arity != 1:
            msg = "a callable absence condition takes the event only: fn(e)"
            raise PatternError(msg, element=name)
        return lambda e: bool(fn(e))
    msg = f"an absence condition is an expression or a callable, got {type(cond).__name__}"
    raise PatternError(msg, element=name)
