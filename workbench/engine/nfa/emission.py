"""How the general plan hands out completed matches: at once, or held under a skip strategy.

Under ``no_skip`` a completed match is emitted at once. Under any other after-match skip strategy
Flink holds a completed match back while an earlier partial match is alive (FLINK-15873), emits the
held ones in completion order, and prunes what the strategy discards. :class:`MatchEmission` is that
part of :class:`~workbench.engine.nfa.general.GeneralPlan`; the Flink-order subclass overrides its
ordering hooks (``_hold``, ``_earliest``, ``_pop_held``).
"""

from __future__ import annotations

import heapq

from workbench.engine.detection import TraceKind, new_match
from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.nfa.buffer import EventId, Time
from workbench.engine.nfa.skip import CompletionKey, SkipRule, completion_key, held_back
from workbench.engine.nfa.state import NFAState, Run
from workbench.engine.nfa.store import Step, Store
from workbench.engine.nfa.trace import skip_detail

__all__ = ["MatchEmission"]


class MatchEmission:
    """Emission of completed matches (a base of the general plan, which sets these attributes)."""

    name: str
    skip: SkipRule
    store: Store
    _stage_index: dict[str, int]

    def _emit_matches(self, state: NFAState, potential: list[Run], t: Time, ctx: Context) -> None:
        """Emit completed matches now (``no_skip``) or once no earlier partial match is alive."""
        if not self.skip.holds:
            for run in potential:
                self._emit(state, run, "match", t, ctx)
                self.store.release(state, run.node, run.version)
            return
        self._hold(state, potential)
        completed = state.completed
        while completed:
            match = completed[0]
            assert match.start_id is not None
            earliest = self._earliest(state)
            if held_back(ctx, state, potential, match, earliest, self.skip.kind):
                break  # why: an earlier partial match may still complete first
            self._pop_held(state)
            paths = self.store.extract(state, match.node, match.version)
            pruning = self.skip.pruning_id(paths)
            if pruning is not None:
                self._prune(state, pruning, ctx)
            self._emit(state, match, "match", t, ctx, paths[0] if paths else [])
            self.store.release(state, match.node, match.version)

    def _hold(self, state: NFAState, potential: list[Run]) -> None:
        """Add completed matches to the held ones, in emission order (see ``completion_key``)."""
        completed = state.completed
        completed.extend(potential)
        keys = {id(r): self._completion_key(state, r) for r in completed}
        completed.sort(key=lambda r: keys[id(r)])

    def _earliest(self, state: NFAState) -> EventId | None:
        """The start of the earliest live partial match."""
        return state.earliest_start()

    def _pop_held(self, state: NFAState) -> Run:
        return state.completed.pop(0)

    def _completion_key(self, state: NFAState, run: Run) -> CompletionKey:
        paths = self.store.extract(state, run.node, run.version)
        path = paths[0] if paths else ()
        return completion_key(run.start_id, self.store.last_id(run.node), path, self._stage_index)

    def _prune(self, state: NFAState, pruning: EventId, ctx: Context) -> None:
        """Discard the partial matches and held matches the skip rule prunes from ``pruning``."""
        skip, runs, heap = self.skip, state.runs, state.starts
        while heap and (heap[0][1] not in runs or skip.prunes(heap[0][0], pruning)):
            _, rid = heapq.heappop(heap)
            victim = runs.get(rid)
            if victim is not None:
                state.remove(victim)
                self._discard(state, victim, ctx)
        kept = []
        for run in state.completed:
            if skip.prunes(run.start_id, pruning):
                self._discard(state, run, ctx)
            else:
                kept.append(run)
        state.completed[:] = kept

    def _discard(self, state: NFAState, run: Run, ctx: Context) -> None:
        """Release a run the skip strategy pruned."""
        self.store.release(state, run.node, run.version)
        if ctx.tracing:
            ctx.trace(TraceKind.PRUNED, run.inst, None, ctx.cause, skip_detail(self.skip.kind))

    def _emit(
        self, state: NFAState, run: Run, kind: str, t: Time, ctx: Context, path: list[Step] | None = None
    ) -> None:
        if path is None:
            paths = self.store.extract(state, run.node, run.version)
            path = paths[0] if paths else []
        grouped: dict[str, list[Event]] = {}
        event_of = self.store.event_of(state, run.node)
        for stage, eid in path:
            grouped.setdefault(stage, []).append(event_of(eid))
        events: list[Event] = []
        channels: list[str] = []
        for stage, evs in grouped.items():
            events.extend(evs)
            channels.extend([stage] * len(evs))
        ctx.emit(new_match(self.name, ctx.key, run.inst, kind, t, tuple(events), tuple(channels)))
        if ctx.tracing:
            if kind == "match":  # why: a match names the event that completed (or released) it
                ctx.trace(TraceKind.DETECTED, run.inst, None, ctx.cause)
            else:
                ctx.trace(TraceKind.TIMED_OUT, run.inst)
