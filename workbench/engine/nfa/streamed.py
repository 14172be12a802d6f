"""Sequence patterns whose conditions read the key's stream: ``prev(e, n)``, sliding and session windows.

:func:`compile_sequence` returns the plain :class:`~workbench.engine.nfa.matcher.NFAMatcher` unless
a condition holds an :class:`~workbench.engine.expr.ir.Offset` or a
:class:`~workbench.engine.expr.ir.Window`; then a :class:`StreamMatcher` wraps it. Its per-key
state adds a :class:`~workbench.engine.expr.stream.KeyStream` to the plan's: the key's last ``n``
events and one incremental aggregate per window and event type
(:class:`~workbench.engine.aggregates.Rolling` / ``TimeRolling`` / a
:class:`~workbench.engine.aggregates.session.Session`: O(1) amortised per event).

Every event of the key reaches the wrapper (``event_types()`` is ``None``: the previous event is
the key's, whatever its type); it updates the windows of the event's type (the window includes
the event being tested), runs the plan with :data:`~workbench.engine.expr.stream.CURSOR` on the
key's stream (only for the types the plan uses), then appends the event to the history. The
stream is part of the key's state: it is released with it, and it keeps the key alive while it
holds events.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from workbench.engine.aggregates import make_aggregate
from workbench.engine.aggregates.exact import window_aggregate
from workbench.engine.aggregates.rolling import Rolling, TimeRolling
from workbench.engine.aggregates.session import Session
from workbench.engine.events import Event
from workbench.engine.expr import EMPTY_FRAME, Run, compile_tree, ir, print_expr
from workbench.engine.expr.stream import CURSOR, KeyStream, Unit, WindowAggregate
from workbench.engine.faults import FaultSink
from workbench.engine.matcher import Context
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.plans import PlanState
from workbench.engine.shape import elements
from workbench.errors import PatternError

__all__ = ["StreamMatcher", "StreamState", "compile_sequence", "reject_stream", "stream_nodes"]

Time = int | float


def stream_nodes(pattern: object) -> list[ir.Offset | ir.Window]:
    """The ``prev(e, n)`` and window nodes of a pattern's conditions, in order."""
    return [
        node
        for element in elements(pattern)
        for tree in element.conditions
        for node in ir.walk(tree)
        if isinstance(node, ir.Offset | ir.Window)
    ]


def reject_stream(pattern: object, family: str) -> None:
    """Raise when a pattern that is not a sequence reads the key's stream (only sequences keep it)."""
    nodes = stream_nodes(pattern)
    if nodes:
        what = print_expr(nodes[0])
        msg = f"{what}: prev(e, n) and windows ('over last ...') work in sequence patterns, not in a {family}"
        raise PatternError(msg, element=getattr(pattern, "name", None))


def compile_sequence(pattern: SequencePattern) -> NFAMatcher | StreamMatcher:
    """The matcher of a sequence pattern (a :class:`StreamMatcher` when it reads the key's stream)."""
    inner = NFAMatcher(pattern)
    nodes = stream_nodes(pattern)
    return StreamMatcher(inner, nodes) if nodes else inner


@dataclass(slots=True)
class StreamState:
    """One key's state: the plan's own, and the key's stream."""

    inner: PlanState
    stream: KeyStream


@dataclass(frozen=True, slots=True)
class _Spec:
    text: str
    value: Callable[[Event], object]
    function: str
    size: int | float
    unit: Unit


class StreamMatcher:
    """A sequence matcher that keeps the key's stream for its conditions (see the module)."""

    def __init__(self, inner: NFAMatcher, nodes: list[ir.Offset | ir.Window]) -> None:
        self.inner = inner
        self.name = inner.name
        self.pattern = inner.pattern
        self.faults = inner.faults
        self.depth = max((n.n for n in nodes if isinstance(n, ir.Offset)), default=0)
        specs: dict[str, _Spec] = {}
        for node in nodes:
            if isinstance(node, ir.Window):
                text = print_expr(node)
                run = compile_tree(node.value).run
                value = _reader(run, inner.faults, f"window {text!r}")
                specs[text] = _Spec(text, value, node.func, node.size, node.unit)
        self.specs = tuple(specs.values())
        #: the types the plan uses (``None``: all); the stream sees every type
        self.relevant = inner.event_types()

    def event_types(self) -> frozenset[str] | None:
        """Every type: the key's previous event may be of any type."""
        return None

    def new_state(self, key: Hashable) -> StreamState:
        """The plan's fresh state and an empty stream."""
        return StreamState(self.inner.new_state(key), KeyStream(self.depth))

    def process(self, state: StreamState, event: Event, ctx: Context) -> None:
        """Update the windows, run the plan on the key's stream, then remember the event."""
        stream = state.stream
        self._take_windows(stream, event)
        relevant = self.relevant
        if relevant is None or event.type in relevant:  # Why: the host would route no other type
            previous, CURSOR.stream = CURSOR.stream, stream
            try:
                self.inner.process(state.inner, event, ctx)
            finally:
                CURSOR.stream = previous
        stream.history.append(event)

    def observe(self, state: StreamState, event: Event) -> None:
        """Remember an event in the key's stream without matching it (:meth:`process` without the plan)."""
        self._take_windows(state.stream, event)
        state.stream.history.append(event)

    def _take_windows(self, stream: KeyStream, event: Event) -> None:
        for spec in self.specs:
            self._update(stream, spec, event)

    def _update(self, stream: KeyStream, spec: _Spec, event: Event) -> None:
        by_type = stream.windows.get(spec.text)
        if by_type is None:
            by_type = stream.windows[spec.text] = {}
        agg = by_type.get(event.type)
        if agg is None:
            agg = by_type[event.type] = _window(spec)
        value = spec.value(event)
        if value is not None and spec.function != "count":
            value = self._admitted(spec, value, agg, event)
        if spec.unit == "events":
            agg.update(value)  # type: ignore[attr-defined]
        else:  # Why: time and session windows need the value's time
            agg.update(value, t=event.time)  # type: ignore[attr-defined]

    def _admitted(self, spec: _Spec, value: object, agg: WindowAggregate, event: Event) -> object:
        """``value`` when the window can take it, else ``None`` (skipped) with a condition fault.

        Sums, averages and spreads take numbers; ``min``/``max`` take numbers or strings, but not
        both in one window (they could not be compared). A value the window cannot take is
        checked here, before the window holds it, so the window stays as it was.
        """
        kind = _kind(value)
        if spec.function in ("min", "max"):
            held = agg.get()
            fits = kind is not None and (held is None or _kind(held) == kind)
            if not fits and kind is not None:
                # why: the value of the other kind may leave the window with this very event
                # (the oldest of a count window, an expired time, a new session): ask a copy
                probe = copy.deepcopy(agg)
                if spec.unit == "events":
                    probe.update(None)  # type: ignore[attr-defined]
                else:
                    probe.update(None, t=event.time)  # type: ignore[attr-defined]
                after = probe.get()
                fits = after is None or _kind(after) == kind
        else:
            fits = kind == "number"
        if fits:
            return value
        wants = f"a value comparable with {agg.get()!r}" if spec.function in ("min", "max") else "a number"
        err = TypeError(f"{type(value).__name__} {value!r} where the window needs {wants}")
        self.faults.report(f"window {spec.text!r}", err, event)
        return None

    def advance(self, state: StreamState, t: Time, ctx: Context) -> None:
        """Advance the plan's time."""
        self.inner.advance(state.inner, t, ctx)

    def on_timer(self, state: StreamState, time: Time, token: Hashable, ctx: Context) -> None:
        """A timer of the plan (conditions run with the key's stream)."""
        previous, CURSOR.stream = CURSOR.stream, state.stream
        try:
            self.inner.on_timer(state.inner, time, token, ctx)
        finally:
            CURSOR.stream = previous

    def is_idle(self, state: StreamState) -> bool:
        """Idle when the plan is and the stream holds nothing."""
        return self.inner.is_idle(state.inner) and not state.stream.holds()


def _kind(value: object) -> str | None:
    """What a window may compare or add: ``"number"`` (not a bool), ``"text"``, or ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "number"
    return "text" if isinstance(value, str) else None


def _window(spec: _Spec) -> WindowAggregate:
    """A fresh window of ``spec``: sliding by count or time, or a session.

    Sums, averages and spreads use the exact aggregates of
    :mod:`workbench.engine.aggregates.exact`: the scalar ones would drift as values leave.
    """
    exact = window_aggregate(spec.function)
    if exact is None:  # Why: count, min and max never round; their usual aggregates are exact
        if spec.unit == "events":
            return make_aggregate(spec.function, window=int(spec.size))
        if spec.unit == "session":
            return Session(make_aggregate(spec.function), spec.size)
        return make_aggregate(spec.function, period=spec.size)
    if spec.unit == "events":
        return Rolling(exact, int(spec.size))
    if spec.unit == "session":
        return Session(exact, spec.size)
    return TimeRolling(exact, spec.size)


def _reader(run: Run, faults: FaultSink, where: str) -> Callable[[Event], object]:
    def value(e: Event) -> object:
        try:
            return run(e, EMPTY_FRAME, None)
        except Exception as err:  # Why: recorded as a condition fault; the window skips the value
            faults.report(where, err, e)
            return None

    return value
