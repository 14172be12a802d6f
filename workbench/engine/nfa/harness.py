"""Drive a sequence matcher the way Flink's NFA-level tests do (no operator, no timers).

Flink's NFA tests call ``nfa.advanceTime(t)`` and ``nfa.process(event, t)`` for each event in input
order, whatever its timestamp, and only call ``advanceTime`` again when the test says so. Time
therefore only passes when an event (or an explicit :meth:`NFAHarness.advance`) says so: a pending
``notFollowedBy`` match is released with the time of the next event, not at its deadline. The
:class:`~workbench.engine.runtime.Engine` instead buffers by event time and fires window timers at
their deadlines. Conformance cases without an ``operator`` section use this harness.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from workbench.engine.clock import stamp
from workbench.engine.detection import Detection, Reaction, TraceKind
from workbench.engine.events import Event
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.state import NFAState

__all__ = ["NFAHarness"]


class _HarnessCtx:
    """A :class:`~workbench.engine.matcher.Context` without timers."""

    def __init__(self) -> None:
        self.key: Hashable = None
        self.now: int | float = 0
        self.tracing = False
        self.final = False
        self.out: list[Detection] = []
        self.instances: dict[Hashable, int] = {}

    def emit(self, detection: Detection) -> None:
        self.out.append(detection)

    def react(self, reaction: Reaction) -> None:  # pragma: no cover - sequences do not react
        pass

    def schedule(self, time: int | float, token: Hashable) -> None:
        """Timers are not used: time only passes with events and explicit advances."""

    def new_instance(self) -> int:
        n = self.instances.get(self.key, 0) + 1
        self.instances[self.key] = n
        return n

    def trace(
        self,
        kind: TraceKind,
        instance: int,
        element: str | None = None,
        event_seq: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Tracing is off in the harness."""


class NFAHarness:
    """Feed events to one sequence pattern in input order, per key, advancing time before each.

    >>> from workbench.engine.nfa import SequencePattern, Stage
    >>> h = NFAHarness(SequencePattern("p", (Stage("a", "e.type == 'a'"), Stage("b", "e.type == 'b'"))))
    >>> h.feed({"type": "a", "time": 1}), len(h.feed({"type": "b", "time": 2}))
    ([], 1)
    """

    def __init__(self, pattern: SequencePattern | NFAMatcher) -> None:
        self.matcher = pattern if isinstance(pattern, NFAMatcher) else NFAMatcher(pattern)
        self.states: dict[Hashable, NFAState] = {}
        self.detections: list[Detection] = []
        self._ctx = _HarnessCtx()
        self._seq = 0

    def feed(self, raw: Event | Mapping[str, Any]) -> list[Detection]:
        """Advance the event's key to its time, then process it; return what was emitted."""
        event = stamp(raw, self._seq)
        self._seq += 1
        ctx = self._ctx
        ctx.out = []
        ctx.key, ctx.now = event.key, event.time
        state = self.states.get(event.key)
        if state is None:
            state = self.states[event.key] = self.matcher.new_state(event.key)
        self.matcher.process(state, event, ctx)  # process() advances time first
        self.detections.extend(ctx.out)
        return ctx.out

    def advance(self, time: int | float) -> list[Detection]:
        """Advance every key to ``time`` (timeouts, pending ``notFollowedBy`` matches)."""
        ctx = self._ctx
        ctx.out = []
        ctx.now = time
        for key, state in self.states.items():
            ctx.key = key
            self.matcher.advance(state, time, ctx)
        self.detections.extend(ctx.out)
        return ctx.out
