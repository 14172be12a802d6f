"""What the linear and the loop plans share: window timers, timeouts and the partial-match cap.

Both keep their partial matches in lists sorted by ``(start_id, rid)`` (:data:`by_start`), ask
for a timer at the window deadline of each new partial match, time out the partial matches whose
window passed and drop the oldest over ``max_partial_matches``, as the general plan does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Generic, Protocol, TypeVar

from workbench.engine.detection import TraceKind, new_match
from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.nfa.buffer import Time
from workbench.engine.nfa.graph import CompiledNFA
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.trace import cap_detail, warn_cap

__all__ = ["WINDOW_TIMER", "ChainPlan", "ChainState", "Done", "Run", "by_start"]

#: the token of window timers
WINDOW_TIMER = "nfa-window"

#: a completed match: (instance, events)
Done = tuple[int, tuple[Event, ...]]

#: the visiting order of partial matches (C-level key for ``list.sort``)
by_start = attrgetter("start_id", "rid")


@dataclass(slots=True, eq=False)
class ChainState:
    """The bookkeeping every linear or loop key state holds (the lists of runs are the plan's).

    Attributes:
        next_rid: run id counter.
        dropped: partial matches dropped because of ``max_partial_matches``.
        time: the latest time the state was advanced to.
        scheduled: the latest window deadline a timer was requested for.
    """

    next_rid: int = 0
    dropped: int = 0
    time: Time | None = None
    scheduled: Time | None = None


class Run(Protocol):
    """What the shared code reads of a partial match."""

    start_ts: Time
    prev_ts: Time
    inst: int
    events: tuple[Event, ...]


S = TypeVar("S", bound=ChainState)


class ChainPlan(Generic[S]):
    """The base of the linear and loop plans (``S``: the plan's key state)."""

    def __init__(self, pattern: SequencePattern, nfa: CompiledNFA) -> None:
        self.name = pattern.name
        self.emit_timeouts = pattern.emit_timeouts
        self.cap = pattern.max_partial_matches
        self.window = nfa.window_ms

    def advance(self, state: S, t: Time, ctx: Context) -> None:
        """Advance the key's time to ``t``: partial matches whose window passed time out."""
        raise NotImplementedError

    def _emit(self, inst: int, kind: str, t: Time, events: tuple[Event, ...], ctx: Context) -> None:
        raise NotImplementedError

    def on_timer(self, state: S, time: Time, token: object, ctx: Context) -> None:
        """A window deadline passed with no event: advance time to it."""
        self.advance(state, time, ctx)

    def _begin(self, state: S, ctx: Context) -> tuple[int, int]:
        """A new partial match: its detection instance and its run id."""
        rid = state.next_rid
        state.next_rid = rid + 1
        return ctx.new_instance(), rid

    def _fresh(self, state: S, run: Run, ctx: Context) -> None:
        """A new partial match: request a timer at its window deadline, as the general plan does."""
        window = self.window
        if window is not None and run.prev_ts == run.start_ts:
            deadline = run.start_ts + window
            if state.scheduled != deadline:
                state.scheduled = deadline
                ctx.schedule(deadline, WINDOW_TIMER)

    def _expire(self, expired: Sequence[Run], ctx: Context) -> list[Run]:
        """The partial matches whose window passed that are reported (the others are traced)."""
        timeouts = []
        for run in expired:
            if self.emit_timeouts:
                timeouts.append(run)
            elif ctx.tracing:
                ctx.trace(TraceKind.TIMED_OUT, run.inst)
        return timeouts

    def _time_out(self, timeouts: list[Run], window: Time, ctx: Context) -> None:
        for run in timeouts:
            self._emit(run.inst, "timeout", run.start_ts + window, run.events, ctx)

    def _detect(
        self,
        inst: int,
        kind: str,
        t: Time,
        events: tuple[Event, ...],
        channels: tuple[str, ...],
        ctx: Context,
    ) -> None:
        ctx.emit(new_match(self.name, ctx.key, inst, kind, t, events, channels))
        if ctx.tracing:
            if kind == "match":  # why: a match names the event that completed (or released) it
                ctx.trace(TraceKind.DETECTED, inst, None, ctx.cause)
            else:
                ctx.trace(TraceKind.TIMED_OUT, inst)

    def _drop(self, state: S, dropped: Sequence[Run], ctx: Context, cap: int, stacklevel: int) -> None:
        """``max_partial_matches``: trace and count the dropped partial matches, and warn."""
        if ctx.tracing:
            for run in dropped:
                ctx.trace(TraceKind.PRUNED, run.inst, None, None, cap_detail(cap))
        state.dropped += len(dropped)
        warn_cap(ctx, self.name, cap, len(dropped))
