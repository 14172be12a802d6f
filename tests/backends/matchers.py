"""Small matchers of our own that exercise every part of the Context contract.

They stand in for the real pattern families while testing backends: instances, timers with tokens,
timers that arrive after their instance ended, recurring timers that stop re-arming on the final
flush, reactions, trace records, idle states.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.detection import Detection, Reaction, TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context


@dataclass(slots=True)
class PairState:
    """Open ``a`` instances of one key: instance id -> the ``a`` event."""

    open: dict[int, Event] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PairWithin:
    """``a`` followed by ``b`` within ``window`` ms; an ``a`` left alone times out.

    Each ``a`` opens an instance; a ``b`` completes the oldest open instance (a match with both
    events); a timer at ``a.time + window`` ends an instance still open (a timeout).
    """

    name: str = "pair"
    window: int = 10
    first: str = "a"
    second: str = "b"

    def event_types(self) -> frozenset[str] | None:
        return frozenset({self.first, self.second})

    def new_state(self, key: Hashable) -> PairState:
        return PairState()

    def process(self, state: PairState, event: Event, ctx: Context) -> None:
        if event.type == self.first:
            instance = ctx.new_instance()
            state.open[instance] = event
            ctx.schedule(event.time + self.window, instance)
            ctx.trace(TraceKind.STARTED, instance, self.first, event.seq)
            return
        ctx.react(Reaction(self.name, ctx.key, 0, self.second, event, ctx.now))
        if not state.open:
            ctx.trace(TraceKind.IGNORED, 0, self.second, event.seq)
            return
        instance = min(state.open)
        first = state.open.pop(instance)
        ctx.trace(TraceKind.DETECTED, instance, self.second, event.seq)
        ctx.emit(
            Detection(
                self.name, ctx.key, instance, "match", ctx.now, (first, event), (self.first, self.second)
            )
        )

    def on_timer(self, state: PairState, time: int | float, token: Hashable, ctx: Context) -> None:
        assert isinstance(token, int)
        first = state.open.pop(token, None)
        if first is None:
            return
        ctx.trace(TraceKind.TIMED_OUT, token)
        ctx.emit(Detection(self.name, ctx.key, token, "timeout", time, (first,), (self.first,)))

    def is_idle(self, state: PairState) -> bool:
        return not state.open


@dataclass(slots=True)
class TickState:
    """Events seen since the last tick, and whether a tick is scheduled."""

    seen: list[Event] = field(default_factory=list)
    armed: bool = False
    ticks: int = 0


@dataclass(frozen=True, slots=True)
class Ticker:
    """A recurring window: every ``period`` ms after the first event, emit the events seen since.

    The timer re-arms after a tick that had events, except on the final flush (``ctx.final``), like
    Prova's ``@timer``; a quiet tick disarms it.
    """

    name: str = "ticker"
    period: int = 7
    types: frozenset[str] | None = None

    def event_types(self) -> frozenset[str] | None:
        return self.types

    def new_state(self, key: Hashable) -> TickState:
        return TickState()

    def process(self, state: TickState, event: Event, ctx: Context) -> None:
        state.seen.append(event)
        if not state.armed:
            state.armed = True
            ctx.schedule(event.time + self.period, "tick")

    def on_timer(self, state: TickState, time: int | float, token: Hashable, ctx: Context) -> None:
        state.ticks += 1
        if state.seen:
            ctx.emit(
                Detection(
                    self.name,
                    ctx.key,
                    state.ticks,
                    "match",
                    time,
                    tuple(state.seen),
                    tuple("seen" for _ in state.seen),
                    extra={"final": ctx.final},
                )
            )
            state.seen = []
            if not ctx.final:
                ctx.schedule(time + self.period, "tick")
                return
        state.armed = False

    def is_idle(self, state: TickState) -> bool:
        return not state.armed and not state.seen


def standard_matchers() -> list[Any]:
    """The matcher set most backend tests run: types overlap, so events reach several matchers."""
    return [Ticker(types=frozenset({"a", "c"})), PairWithin("pair-bc", 5, "b", "c"), PairWithin()]
