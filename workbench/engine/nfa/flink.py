"""The ``flink_order`` plan: the general plan with Flink's exact order among ties.

Flink keeps partial and completed matches in ``java.util.PriorityQueue`` s ordered only by the start
event and iterates them in heap-array order (:mod:`workbench.engine.nfa.javaheap`). Among matches
with the same first event, that order decides which is emitted first and, under a skip strategy,
which survives. This plan reproduces it: it visits every partial match (no event-type index) and
overrides the general plan's ordering hooks. Its taken events live in the shared buffer.
"""

from __future__ import annotations

from collections.abc import Mapping

from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.nfa.buffer import EventId, Time
from workbench.engine.nfa.general import GeneralPlan
from workbench.engine.nfa.javaheap import offer, poll, remove_if
from workbench.engine.nfa.state import FlinkState, NFAState, Run

__all__ = ["FlinkOrderPlan"]


def _jkey(run: Run) -> tuple[int, Time, int] | tuple[int]:
    """Flink's partial-match comparator: by start event id; runs without one sort last."""
    if run.start_id is None:
        return (1,)
    return (0, *run.start_id)


def _pq(state: NFAState) -> list[Run]:
    assert isinstance(state, FlinkState)
    return state.pq


class FlinkOrderPlan(GeneralPlan):
    """The general plan in Flink's heap order (a pattern with ``flink_order=True``)."""

    #: Flink touches every partial match, the start run included, on every event
    skips_idle = False

    def new_state(self) -> FlinkState:
        """A fresh per-key state (with the Java heap of runs)."""
        return FlinkState()

    def _visit(self, state: NFAState, event: Event, starts: bool, ctx: Context, potential: list[Run]) -> None:
        """Step every run in heap-array order; the successors form the new heap."""
        eid: EventId = (event.time, event.seq)
        woken = self._woken.get(event.type, self._always)
        new: list[Run] = []
        for run in _pq(state) or [self._start_run(state)]:
            if (run.state not in woken) if run.start_id is not None else not starts:
                offer(new, run, _jkey)
                continue
            for r in self._advance_run(state, run, event, eid, ctx, potential):
                offer(new, r, _jkey)
        assert isinstance(state, FlinkState)
        state.pq = new

    def _collect(self, potential: list[Run], run: Run) -> None:
        offer(potential, run, _jkey)

    def _expired_in_order(self, state: NFAState, expired: Mapping[int, bool]) -> list[Run]:
        """The expired runs in heap-array order; the others form the new heap."""
        order: list[Run] = []
        new: list[Run] = []
        for run in _pq(state):
            if run.start_id is not None and run.rid in expired:
                order.append(run)
            else:
                offer(new, run, _jkey)
        assert isinstance(state, FlinkState)
        state.pq = new
        return order

    def _after_cap(self, state: NFAState) -> None:
        runs = state.runs
        remove_if(_pq(state), lambda r: r.start_id is not None and r.rid not in runs, _jkey)

    def _hold(self, state: NFAState, potential: list[Run]) -> None:
        for run in potential:
            offer(state.completed, run, _jkey)

    def _earliest(self, state: NFAState) -> EventId | None:
        pq = _pq(state)
        return pq[0].start_id if pq else None

    def _pop_held(self, state: NFAState) -> Run:
        return poll(state.completed, _jkey)

    def _prune(self, state: NFAState, pruning: EventId, ctx: Context) -> None:
        skip = self.skip
        for run in remove_if(_pq(state), lambda r: skip.prunes(r.start_id, pruning), _jkey):
            state.remove(run)
            self._discard(state, run, ctx)
        for run in remove_if(state.completed, lambda r: skip.prunes(r.start_id, pruning), _jkey):
            self._discard(state, run, ctx)
