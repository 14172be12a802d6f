"""The fast path for ``begin a, followedBy b{n,} (relaxed inside), followedBy c`` (matcher detail).

The shape of the P3 and P5 benchmark patterns: a single start stage, a looping stage entered with
relaxed contiguity whose inner contiguity is relaxed (Flink's default ``timesOrMore(n)`` /
``oneOrMore()``, neither greedy nor ``until``), then a single relaxed last stage. The plan is
recognised on the *compiled* NFA, state by state and edge by edge, so anything else (greedy
guards, ``until``, optional stages, negations, ``consecutive``, ``allowCombinations``, bounded
``times``, skip strategies, previous-event windows, ``flink_order``) runs in the general matcher.

A partial match is a list ``[start_id, rid, code, start_ts, prev_ts, instance, events, aggs]``
kept sorted in the general matcher's visiting order, where ``code`` is ``k > 0`` (``k`` more loop
events needed), :data:`LOOP` (just took a loop event), :data:`GAP` (inside the loop, last event
skipped) or :data:`LAST` (left the loop, waiting for the last stage). It steps exactly as the
general interpreter steps those NFA states (same successors, in the same order, with the same run
ids, instances, traces, timers, timeouts and cap), with no versions, index sets or heaps.
Aggregates are a tuple per partial match inside the loop, updated in place in O(1) per aggregate
when the loop takes an event (see :meth:`LoopPlan._take_loop` for why no copy is needed); a
condition that reads them gets a :class:`LoopContext` (one small object, no closures).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from workbench.engine.aggregates import input_of, make_aggregate, value_with
from workbench.engine.detection import Detection, TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.nfa.compiler import Action, CompiledNFA, Kind, StateDef
from workbench.engine.nfa.conditions import (
    TRUE,
    Cond,
    ConditionContext,
    Not,
    compile_predicate,
    needs_context,
)
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.state import NFAState
from workbench.engine.nfa.trace import cap_detail
from workbench.errors import PatternError

__all__ = ["GAP", "LAST", "LOOP", "LoopContext", "LoopPlan"]

LOOP, GAP, LAST = 0, -1, -2
_TIMER = "nfa-window"


class LoopContext(ConditionContext):
    """The condition context of one partial match of a :class:`LoopPlan` for one event."""

    __slots__ = ("_event", "_path", "_plan", "_run_aggs")

    def __init__(self, plan: LoopPlan, run: list[Any], event: Event) -> None:
        # No lookup/reader closures: ``matched`` and ``aggregate`` read the run directly.
        self._plan = plan
        self._path: tuple[Event, ...] = run[6]
        self._run_aggs: tuple[Any, ...] = run[7]
        self._event = event
        self._matched = None
        self.timestamp = event.time
        self.stage = None
        self.memo = {}

    def matched(self, stage: str) -> list[Event]:
        """Events already taken for ``stage`` in this partial match (empty if none)."""
        stages = self._plan.path_stages
        return [e for j, e in enumerate(self._path) if stages[j] == stage]

    def aggregate(self, name: str) -> Any:
        """The current value of the declared aggregate ``name``."""
        plan = self._plan
        i = plan.agg_index.get(name)
        if i is None:
            msg = f"no aggregate named {name!r}; declared: {sorted(plan.agg_index)}"
            raise PatternError(msg, pattern=plan.name)
        spec = plan.specs[i]
        aggs = self._run_aggs
        agg = aggs[i] if aggs else make_aggregate(spec.function, **dict(spec.params))
        if spec.include_current and self.stage == spec.stage:
            event = self._event
            return value_with(agg, input_of(event, spec.field))
        return agg.get()

    def __getitem__(self, name: str) -> Any:
        return self.aggregate(name)


def _take_ignore(st: StateDef, cond: Cond | None) -> bool:
    """``st`` is exactly ``[TAKE x if cond, IGNORE st if not cond]`` (``cond=None``: any ``cond``)."""
    trs = st.transitions
    if len(trs) != 2:
        return False
    take, ign = trs
    return (
        take.action == Action.TAKE
        and (cond is None or take.cond is cond)
        and ign.action == Action.IGNORE
        and ign.target == st.name
        and isinstance(ign.cond, Not)
        and ign.cond.inner is take.cond
    )


class LoopPlan:
    """The compiled ``a, b{n,}, c`` shape; steps ``NFAState.linear`` for one key."""

    def __init__(
        self,
        pattern: SequencePattern,
        nfa: CompiledNFA,
        entry: list[str],
        names: tuple[str, str, str, str],
        wakes: Mapping[str, frozenset[str] | None],
        start_wakes: frozenset[str] | None,
    ) -> None:
        states = nfa.states
        loop, gap, last, final = names
        start = states[nfa.start]
        self.name = pattern.name
        self.emit_timeouts = pattern.emit_timeouts
        self.cap = pattern.max_partial_matches
        self.window = nfa.window_ms
        self.n = len(entry)
        self.stages = (start.stage, states[loop].stage, states[last].stage)
        self.start_pred = compile_predicate(start.transitions[0].cond)
        take = states[loop].transitions[1].cond
        self.take_pred = compile_predicate(take)
        self.take_ctx = needs_context(take)
        self.last_pred = compile_predicate(states[last].transitions[0].cond)
        #: target state name of the TAKE from code k (entry), for traces; index 0 unused
        self.entry_target = ["", *(states[s].transitions[0].target for s in reversed(entry))]
        self.entry_name = entry[0]
        self.loop_name, self.final_name = loop, final
        self.start_wakes = start_wakes
        #: wake sets by code: k > 0 entry states, LOOP, GAP, LAST (None: every type)
        # A list indexed by code (negative codes index from the end): [LOOP, 1..n, LAST, GAP].
        self.wakes: list[frozenset[str] | None] = [
            wakes[loop],
            *(wakes[s] for s in reversed(entry)),
            wakes[last],
            wakes[gap],
        ]
        cold = [wakes[s] for s in (*entry, gap)]
        #: event types that can change a partial match waiting for a loop event (None: all)
        self.cold_wakes: frozenset[str] | None = (
            None if any(w is None for w in cold) else frozenset().union(*(w for w in cold if w is not None))
        )
        self.specs = pattern.aggregates
        self.agg_index = {a.name: i for i, a in enumerate(self.specs)}
        #: per stage (a, b, c): indexes of the aggregates it updates
        self.agg_of = tuple(
            tuple(i for i, a in enumerate(self.specs) if a.stage == stage) for stage in self.stages
        )
        #: stage of each taken event by position (a, b, ..., b, c), grown on demand
        self.path_stages: list[str] = [start.stage]

    @classmethod
    def build(
        cls,
        pattern: SequencePattern,
        nfa: CompiledNFA,
        wakes: Mapping[str, frozenset[str] | None],
        start_wakes: frozenset[str] | None,
    ) -> LoopPlan | None:
        """The plan, or ``None`` when the compiled NFA does not have exactly this shape."""
        if pattern.skip.kind != "no_skip" or pattern.flink_order or nfa.window_times:
            return None
        states = nfa.states
        start = states[nfa.start]
        if start.kind != Kind.START or len(start.transitions) != 1:
            return None
        first = start.transitions[0]
        if first.action != Action.TAKE or needs_context(first.cond):
            return None
        entry: list[str] = []
        name = first.target
        cond: Cond | None = None
        while name in states and len(states[name].transitions) == 2 and len(entry) < len(states):
            st = states[name]
            if st.kind != Kind.NORMAL or name in entry or not _take_ignore(st, cond):
                return None
            cond = st.transitions[0].cond
            entry.append(name)
            name = st.transitions[0].target
        if not entry or name not in states:
            return None
        loop = states[name]
        if loop.kind != Kind.NORMAL or len(loop.transitions) != 3:
            return None
        proceed, take, skip = loop.transitions
        if proceed.action != Action.PROCEED or proceed.cond is not TRUE:
            return None
        if take.action != Action.TAKE or take.cond is not cond or take.target != loop.name:
            return None
        if skip.action != Action.IGNORE or skip.target not in states:
            return None
        if not isinstance(skip.cond, Not) or skip.cond.inner is not cond:
            return None
        gap, last = states[skip.target], states[proceed.target]
        if gap.kind != Kind.NORMAL or not _take_ignore(gap, cond) or gap.transitions[0].target != loop.name:
            return None
        if (
            last.kind != Kind.NORMAL
            or not _take_ignore(last, None)
            or needs_context(last.transitions[0].cond)
        ):
            return None
        final = states.get(last.transitions[0].target)
        if final is None or final.kind != Kind.FINAL:
            return None
        b = loop.stage
        if (
            any(states[s].stage != b for s in entry)
            or gap.stage != b
            or len({start.stage, b, last.stage}) != 3
        ):
            return None
        if len(states) != len(entry) + 5:
            return None
        names = (loop.name, gap.name, last.name, final.name)
        return cls(pattern, nfa, entry, names, wakes, start_wakes)

    # ------------------------------------------------------------------ per event
    def _aggs(self, aggs: tuple[Any, ...], which: int, event: Event) -> tuple[Any, ...]:
        """The general matcher's ``_take_aggs``: copy and update the aggregates of stage ``which``."""
        specs = self.specs
        if not specs:
            return ()
        if not aggs:
            aggs = tuple(make_aggregate(s.function, **dict(s.params)) for s in specs)
        touched = self.agg_of[which]
        if not touched:
            return aggs
        out = list(aggs)
        for i in touched:
            spec = specs[i]
            agg = aggs[i].copy()
            agg.update(input_of(event, spec.field))
            out[i] = agg
        return tuple(out)

    def _take_loop(self, aggs: tuple[Any, ...], event: Event) -> tuple[Any, ...]:
        """Update the loop stage's aggregates in place, O(1) each.

        No copy is needed: the partial match that takes the event is discarded, and the branch
        that leaves the loop (waiting for the last stage) holds no aggregates, because nothing
        reads them there (the last stage's condition reads only the event).
        """
        specs = self.specs
        for i in self.agg_of[1]:
            field = specs[i].field
            aggs[i].update(input_of(event, field))
        return aggs

    def _events(self, run: list[Any], event: Event) -> tuple[Event, ...]:
        events: tuple[Event, ...] = (*run[6], event)
        stages = self.path_stages
        while len(stages) < len(events):
            stages.append(self.stages[1])
        return events

    def process(self, state: NFAState, event: Event, ctx: Context) -> None:
        """Expire windows, step every partial match the event can change, then the start.

        Partial matches are kept in three lists, each sorted in the general matcher's order:
        ``state.loop_hot`` (just took a loop event: every event changes them), ``state.linear``
        (waiting for a loop event) and ``state.loop_last`` (waiting for the last stage). A list is
        visited only when the event can wake its partial matches; the visited ones are merged.
        """
        t = event.time
        window = self.window
        hot, cold, last = state.loop_hot, state.linear, state.loop_last
        if window is not None and (
            (hot and hot[0][3] + window <= t)
            or (cold and cold[0][3] + window <= t)
            or (last and last[0][3] + window <= t)
        ):
            self.advance(state, t, ctx)
            hot, cold, last = state.loop_hot, state.linear, state.loop_last
        elif state.time is None or t > state.time:
            state.time = t
        typ = event.type
        sw = self.start_wakes
        starts = sw is None or typ in sw
        w = self.cold_wakes
        visit_cold = bool(cold) and (w is None or typ in w)
        w = self.wakes[LAST]
        visit_last = bool(last) and (w is None or typ in w)
        if not hot and not visit_cold and not visit_last and not starts:
            return
        # the visited lists, merged into one visiting order (a list woken alone is already sorted)
        if visit_cold:
            runs = sorted(hot + cold + last) if visit_last else sorted(hot + cold) if hot else cold
        elif visit_last:
            runs = sorted(hot + last) if hot else last
        else:
            runs = hot
        new_hot: list[list[Any]] = []
        new_cold = [] if visit_cold else cold
        new_last = [] if visit_last else last
        wakes = self.wakes
        take_pred, last_pred = self.take_pred, self.last_pred
        take_ctx = self.take_ctx
        tracing = ctx.tracing
        b_stage, c_stage = self.stages[1], self.stages[2]
        fresh: list[list[Any]] = []
        done: list[tuple[int, tuple[Event, ...]]] = []
        for run in runs:
            code = run[2]
            if code == LAST:
                if last_pred(event, None):
                    state.next_rid += 1
                    if tracing:
                        ctx.trace(TraceKind.EXTENDED, run[5], c_stage, event.seq, {"state": self.final_name})
                    if self.agg_of[2]:
                        self._aggs((), 2, event)  # nothing reads them; only as the NFA would fail
                    done.append((run[5], (*run[6], event)))
                else:
                    new_last.append(run)
                continue
            w = wakes[code]
            if w is not None and typ not in w:
                (new_hot if code == LOOP else new_cold).append(run)
                continue
            took = take_pred(event, LoopContext(self, run, event) if take_ctx else None)
            if code == LOOP:
                rid = state.next_rid
                state.next_rid = rid + 2
                if took:
                    nxt = [
                        run[0],
                        rid,
                        LOOP,
                        run[3],
                        t,
                        run[5],
                        self._events(run, event),
                        self._take_loop(run[7], event),
                    ]
                    new_hot.append(nxt)
                    if tracing:
                        ctx.trace(TraceKind.EXTENDED, run[5], b_stage, event.seq, {"state": self.loop_name})
                else:
                    nxt = [run[0], rid, GAP, run[3], run[4], run[5], run[6], run[7]]
                    new_cold.append(nxt)
                fresh.append(nxt)
                if last_pred(event, None):
                    if tracing:
                        ctx.trace(TraceKind.EXTENDED, run[5], c_stage, event.seq, {"state": self.final_name})
                    if self.agg_of[2]:
                        self._aggs((), 2, event)  # nothing reads them; only as the NFA would fail
                    done.append((run[5], (*run[6], event)))
                else:
                    wait = [run[0], rid + 1, LAST, run[3], run[4], run[5], run[6], ()]
                    new_last.append(wait)
                    fresh.append(wait)
            elif took:
                rid = state.next_rid
                state.next_rid = rid + 1
                nxt = [
                    run[0],
                    rid,
                    LOOP if code <= 1 else code - 1,
                    run[3],
                    t,
                    run[5],
                    self._events(run, event),
                    self._take_loop(run[7], event),
                ]
                if tracing:
                    target = self.loop_name if code == GAP else self.entry_target[code]
                    ctx.trace(TraceKind.EXTENDED, run[5], b_stage, event.seq, {"state": target})
                (new_hot if code <= 1 else new_cold).append(nxt)
                fresh.append(nxt)
            else:
                new_cold.append(run)
        if starts and self.start_pred(event, None):
            inst = ctx.new_instance()
            rid = state.next_rid
            state.next_rid = rid + 1
            if tracing:
                ctx.trace(TraceKind.STARTED, inst, self.stages[0], event.seq, {"state": self.entry_name})
            run = [(t, event.seq), rid, self.n, t, t, inst, (event,), self._aggs((), 0, event)]
            new_cold.append(run)
            fresh.append(run)
        if window is not None:
            for run in fresh:
                if run[4] == run[3]:
                    deadline = run[3] + window
                    if state.scheduled != deadline:
                        state.scheduled = deadline
                        ctx.schedule(deadline, _TIMER)
        # Successors get new run ids, so a list that received any must be re-sorted (nearly sorted).
        new_hot.sort()
        new_cold.sort()
        new_last.sort()
        state.loop_hot, state.linear, state.loop_last = new_hot, new_cold, new_last
        for inst, events in done:
            self._emit(inst, "match", t, events, ctx)
        cap = self.cap
        if cap is not None and len(new_hot) + len(new_cold) + len(new_last) > cap:
            self._cap(state, ctx, cap)

    def advance(self, state: NFAState, t: int | float, ctx: Context) -> None:
        """Advance the key's time to ``t``: partial matches whose window passed time out."""
        if state.time is None or t > state.time:
            state.time = t
        window = self.window
        if window is None:
            return
        expired: list[list[Any]] = []
        for runs in (state.loop_hot, state.linear, state.loop_last):
            k = 0
            while k < len(runs) and runs[k][3] + window <= t:
                k += 1
            if k:
                expired += runs[:k]
                del runs[:k]
        if not expired:
            return
        expired.sort()
        timeouts = []
        for run in expired:
            if self.emit_timeouts:
                timeouts.append(run)
            elif ctx.tracing:
                ctx.trace(TraceKind.TIMED_OUT, run[5])
        for run in timeouts:
            self._emit(run[5], "timeout", run[3] + window, run[6], ctx)

    def _emit(self, inst: int, kind: str, t: int | float, events: tuple[Event, ...], ctx: Context) -> None:
        stages = self.path_stages
        n = len(events)
        if kind == "match":
            channels = (*stages[: n - 1], self.stages[2])
        else:
            while len(stages) < n:
                stages.append(self.stages[1])
            channels = tuple(stages[:n])
        ctx.emit(Detection(self.name, ctx.key, inst, kind, t, events, channels))
        if ctx.tracing:
            ctx.trace(TraceKind.DETECTED if kind == "match" else TraceKind.TIMED_OUT, inst)

    def _cap(self, state: NFAState, ctx: Context, cap: int) -> None:
        runs = sorted(state.loop_hot + state.linear + state.loop_last)
        excess = len(runs) - cap
        dropped = runs[:excess]
        kept = runs[excess:]
        state.loop_hot = [r for r in kept if r[2] == LOOP]
        state.linear = [r for r in kept if r[2] != LOOP and r[2] != LAST]
        state.loop_last = [r for r in kept if r[2] == LAST]
        if ctx.tracing:
            for run in dropped:
                ctx.trace(TraceKind.PRUNED, run[5], None, None, cap_detail(cap))
        state.dropped += excess
        warnings.warn(
            f"pattern {self.name!r}, key {ctx.key!r}: more than {cap} partial matches; dropped the "
            f"{excess} oldest (max_partial_matches; {state.dropped} dropped so far for this key)",
            RuntimeWarning,
            stacklevel=3,
        )
