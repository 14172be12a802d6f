"""A plain reaction outside any group (Prova ``rcvMsg``/``rcvMult``): one detection per accepted event."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from workbench.engine.detection import Detection, Reaction, TraceKind
from workbench.engine.events import Event
from workbench.engine.faults import FaultSink
from workbench.engine.matcher import Context
from workbench.engine.reactions.compiled import compile_match, match_event
from workbench.engine.reactions.conditions import compile_condition
from workbench.engine.reactions.patterns import Receive, pairs
from workbench.errors import PatternError

__all__ = ["ReceiveMatcher", "ReceiveState"]


@dataclass(slots=True)
class ReceiveState:
    """How many events this key's reaction accepted (only matters with a finite ``count``)."""

    accepted: int = 0


class ReceiveMatcher:
    """Compiled :class:`Receive`: accepts matching events, up to ``count`` per key."""

    def __init__(self, pattern: Receive) -> None:
        if not pattern.name:
            msg = "a reaction needs a non-empty name"
            raise PatternError(msg)
        if pattern.count is not None and pattern.count == 0:
            msg = "count must be -1 (unlimited) or a positive number"
            raise PatternError(msg, pattern=pattern.name)
        self.pattern = pattern
        self.name = pattern.name
        self._limit = None if pattern.count is None or pattern.count < 0 else pattern.count
        self._match = compile_match(pairs(pattern.match))
        #: where this reaction's condition reports runtime errors (an engine points it at its log)
        self.faults = FaultSink(pattern.name)
        self._where = (
            None
            if pattern.where is None
            else compile_condition(pattern.where, f"reaction {pattern.name!r}", self.faults)
        )
        self._env = dict(pairs(pattern.constants))

    def event_types(self) -> frozenset[str] | None:
        """The reaction's type (``None``: all)."""
        return None if self.pattern.type is None else frozenset({self.pattern.type})

    def new_state(self, key: Hashable) -> ReceiveState:
        """A fresh counter."""
        return ReceiveState()

    def is_idle(self, state: ReceiveState) -> bool:
        """Unlimited reactions keep nothing; limited ones remember how many they accepted."""
        return self._limit is None or state.accepted == 0

    def process(self, state: ReceiveState, event: Event, ctx: Context) -> None:
        """Accept the event if it matches and the limit is not reached."""
        if self._limit is not None and state.accepted >= self._limit:
            return
        if match_event(self._match, self._where, self.pattern.type, event, self._env) is None:
            return
        state.accepted += 1
        instance = ctx.new_instance() if self._limit is not None else event.seq
        if ctx.tracing:
            ctx.trace(TraceKind.ACCEPTED, instance, self.name, event.seq)
        ctx.react(Reaction(self.name, ctx.key, instance, self.name, event, ctx.now))
        ctx.emit(Detection(self.name, ctx.key, instance, "match", ctx.now, (event,), (self.name,)))

    def on_timer(self, state: ReceiveState, time: int | float, token: Hashable, ctx: Context) -> None:
        """Plain reactions schedule no timers."""
