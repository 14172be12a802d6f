"""The general plan: Flink's NFA interpreted edge by edge, for any sequence pattern.

Per event:

1. time is advanced to the event's time: partial matches whose first-and-last window
   (``t - t_first >= within``) or previous-and-current window expired are removed; those waiting in
   a trailing ``notFollowedBy`` become matches, the others timeouts;
2. only the partial matches whose NFA state can be changed by an event of this type are visited
   (the event-type index, :mod:`workbench.engine.nfa.analysis`); each one follows ``PROCEED``
   edges and branches on every ``TAKE``/``IGNORE`` edge whose condition holds, exactly like
   Flink's NFA, with Dewey versions;
3. completed matches are emitted, subject to the after-match skip strategy
   (:mod:`workbench.engine.nfa.skip`).

Taken events live in a :mod:`~workbench.engine.nfa.store`. Flink's exact order among ties is the
:class:`~workbench.engine.nfa.flink.FlinkOrderPlan`, a subclass that overrides the ordering hooks.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

from workbench.engine.aggregates import Aggregate
from workbench.engine.detection import TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.nfa.analysis import Analysis
from workbench.engine.nfa.buffer import EventId, Time, Version, add_stage, increase
from workbench.engine.nfa.chain import WINDOW_TIMER
from workbench.engine.nfa.conditions import ConditionContext, Predicate, compile_predicate, needs_context
from workbench.engine.nfa.emission import MatchEmission
from workbench.engine.nfa.graph import Action, CompiledNFA, Kind, StateDef, Transition
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.runaggs import RunAggregates
from workbench.engine.nfa.skip import SkipRule
from workbench.engine.nfa.state import NFAState, Node, Run
from workbench.engine.nfa.store import Store
from workbench.engine.nfa.trace import cap_detail, negation_detail, strict_detail, warn_cap

__all__ = ["GeneralPlan", "final_after_proceed"]

_TAKE = int(Action.TAKE)
_PROCEED = int(Action.PROCEED)
_IGNORE = int(Action.IGNORE)
#: one edge on the hot path: (action, target, compiled predicate, transition)
Edge = tuple[int, str, Predicate, Transition]


class GeneralPlan(MatchEmission):
    """A compiled NFA of any shape, interpreted; steps one key's :class:`~.state.NFAState`."""

    #: a key with no partial match may ignore events that cannot start one (the indexed order)
    skips_idle = True

    def __init__(
        self, pattern: SequencePattern, nfa: CompiledNFA, facts: Analysis, aggs: RunAggregates, store: Store
    ) -> None:
        self.name = pattern.name
        self.pattern = pattern
        self.nfa = nfa
        self.facts = facts
        self.aggs = aggs
        self.store = store
        self.skip = SkipRule(pattern.skip, pattern.name)
        self._states: Mapping[str, StateDef] = nfa.states
        self._has_aggs = bool(pattern.aggregates)
        self._start_wakes = facts.start_wakes
        self._woken, self._always = facts.woken, facts.always
        self._stage_index = {name: i for i, name in enumerate(nfa.stage_names)}
        # Hot-path tables: each state's edges with compiled predicates; a ConditionContext is only
        # built when some condition can read it.
        self._edges: dict[str, tuple[Edge, ...]] = {
            name: tuple((int(tr.action), tr.target, compile_predicate(tr.cond), tr) for tr in st.transitions)
            for name, st in self._states.items()
        }
        self._needs_ctx = any(needs_context(tr.cond) for st in self._states.values() for tr in st.transitions)
        #: PROCEED edges that lead back to a state: each event's closure tracks its paths (see _step)
        self._proceed_cycle = facts.proceed_cycle
        self._kind = {name: st.kind for name, st in self._states.items()}
        self._finals = frozenset(name for name, kind in self._kind.items() if kind == Kind.FINAL)
        self._window, self._window_times, self._shared = nfa.window_ms, nfa.window_times, store.shared
        #: the ``starts`` heap is read only by skip strategies and the cap (else it would only grow)
        self._track_starts = self.skip.holds or pattern.max_partial_matches is not None

    def new_state(self) -> NFAState:
        """A fresh per-key state."""
        return NFAState()

    def is_idle(self, state: NFAState) -> bool:
        """Nothing in flight."""
        return not state.runs and not state.completed

    # ------------------------------------------------------------------ per event
    def process(self, state: NFAState, event: Event, ctx: Context) -> None:
        """Advance time to the event, then feed it to the partial matches it can change."""
        t = event.time
        if state.time is None or t > state.time:
            # why only at a new time: as Flink's operator, windows are checked once per timestamp,
            # before its first event; a partial match that an event of this time moved into a
            # previous-event window ending now still sees the other events of this time
            first, prev = state.first_deadlines, state.prev_deadlines
            if (first and first[0][0] <= t) or (prev and prev[0][0] <= t):
                self.advance(state, t, ctx)  # why: a window deadline has passed
            else:
                state.time = t
        sw = self._start_wakes
        starts = sw is None or event.type in sw
        if not starts and not state.runs and self.skips_idle:
            # Nothing to visit; held-back completed matches are only released when a partial
            # match changes, and none can.
            return
        potential: list[Run] = []
        self._visit(state, event, starts, ctx, potential)
        if potential or self.skip.holds:
            self._emit_matches(state, potential, t, ctx)
        cap = self.pattern.max_partial_matches
        if cap is not None and len(state.runs) > cap:
            self._cap(state, ctx)

    def _visit(self, state: NFAState, event: Event, starts: bool, ctx: Context, potential: list[Run]) -> None:
        """Step the woken partial matches in start order, then the start run."""
        eid: EventId = (event.time, event.seq)
        visiting: list[Run] = []
        if state.runs:
            woken = self._woken.get(event.type, self._always)
            ids: set[int] = set()
            by_state = state.by_state
            for s in woken:
                waiting = by_state.get(s)
                if waiting:
                    ids.update(waiting)
            runs = state.runs
            if len(ids) == 1:
                visiting = [runs[i] for i in ids]
            elif ids:
                visiting = sorted((runs[i] for i in ids), key=_order)
        if starts:
            visiting.append(self._start_run(state))
        for run in visiting:
            self._advance_run(state, run, event, eid, ctx, potential)

    def _collect(self, potential: list[Run], run: Run) -> None:
        """A run reached Final: a potential match, in visiting order."""
        potential.append(run)

    def _advance_run(
        self, state: NFAState, run: Run, event: Event, eid: EventId, ctx: Context, potential: list[Run]
    ) -> list[Run]:
        """Step one run; register its surviving successors; collect completed ones in ``potential``."""
        is_start = run.start_id is None
        if not is_start:
            state.remove(run)
        succ = self._step(state, run, event, eid, ctx)
        if not succ and not is_start:
            if ctx.tracing:
                self._trace_dead_end(run, event, ctx)
            return succ
        stopped = False
        keep: list[Run] = []
        kinds = self._kind
        for r in succ:
            kind = kinds[r.state]
            if kind == Kind.FINAL:
                self._collect(potential, r)
            elif kind == Kind.STOP:
                stopped = True
                self.store.release(state, r.node, r.version)
            else:
                keep.append(r)
        if stopped and not is_start:
            keep = self._violated(state, run, keep, event, ctx)
        for r in keep:
            if r.start_id is None:
                state.start_version = r.version
            else:
                self._add(state, r, ctx, fresh=r is not run)
        return keep

    def _violated(self, state: NFAState, run: Run, keep: list[Run], event: Event, ctx: Context) -> list[Run]:
        """A negated stage occurred: the run's successors die (the start run lives on)."""
        for r in keep:
            self.store.release(state, r.node, r.version)
        if ctx.tracing:
            ctx.trace(TraceKind.VIOLATED, run.inst, None, event.seq)
            ctx.trace(TraceKind.PRUNED, run.inst, None, event.seq, negation_detail(event.seq))
        return [r for r in keep if r.start_id is None]

    def _trace_dead_end(self, run: Run, event: Event, ctx: Context) -> None:
        """Trace a partial match that ``event`` left with no successor (strict contiguity, mostly)."""
        stage = self._states[run.state].stage
        if self.facts.strict[run.state]:
            detail = strict_detail(event.seq, stage)
        else:
            detail = {"reason": f"no edge accepts event #{event.seq}", "event": event.seq, "waiting": stage}
        ctx.trace(TraceKind.PRUNED, run.inst, None, event.seq, detail)

    # ------------------------------------------------------------------ time
    def on_timer(self, state: NFAState, time: Time, token: object, ctx: Context) -> None:
        """A window deadline passed with no event: advance time to it."""
        self.advance(state, time, ctx, timer=True)

    def advance(self, state: NFAState, t: Time, ctx: Context, *, timer: bool = False) -> None:
        """Advance the key's time to ``t``: expire windows, release pending ``notFollowedBy`` matches
        (by a ``timer``: at the watermark that passed, :meth:`Context.release_time`)."""
        if state.time is None or t > state.time:
            state.time = t
        first, prev = state.first_deadlines, state.prev_deadlines
        if not (first and first[0][0] <= t) and not (prev and prev[0][0] <= t):
            return
        expired = self._expired(state, t)
        if not expired:
            return
        potential: list[Run] = []
        timeouts: list[tuple[Run, Time]] = []
        for run in self._expired_in_order(state, expired):
            state.remove(run)
            if self._states[run.state].kind == Kind.PENDING:
                self._collect(potential, run)  # why: a trailing notFollowedBy held its match
                continue
            if self.pattern.emit_timeouts:
                timeouts.append((run, self._deadline(run, expired[run.rid])))
                continue
            if ctx.tracing:
                ctx.trace(TraceKind.TIMED_OUT, run.inst)
            self.store.release(state, run.node, run.version)
        if timer and (potential or state.completed):  # why: what time releases carries the watermark
            t = ctx.release_time()
        self._emit_matches(state, potential, t, ctx)
        for run, deadline in timeouts:
            self._emit(state, run, "timeout", deadline, ctx)
            self.store.release(state, run.node, run.version)

    def _expired(self, state: NFAState, t: Time) -> dict[int, bool]:
        """Run id -> timed out by the previous-event window (else the first-and-last one)."""
        expired: dict[int, bool] = {}
        runs = state.runs
        if self.nfa.window_ms is not None:
            heap = state.first_deadlines
            while heap and heap[0][0] <= t:
                _, rid = heapq.heappop(heap)
                if rid in runs:
                    expired[rid] = False
        heap = state.prev_deadlines
        while heap and heap[0][0] <= t:
            _, rid = heapq.heappop(heap)
            if rid in runs:
                expired[rid] = True
        return expired

    def _expired_in_order(self, state: NFAState, expired: Mapping[int, bool]) -> list[Run]:
        """The expired runs in the order they are handled."""
        return sorted((state.runs[i] for i in expired), key=Run.order)

    def _deadline(self, run: Run, by_prev: bool) -> Time:
        """The time a timed-out run's window ended."""
        if by_prev:
            assert run.prev_ts is not None
            return run.prev_ts + self.nfa.window_times[run.state]
        window = self.nfa.window_ms
        assert window is not None
        assert run.start_ts is not None
        return run.start_ts + window

    # ------------------------------------------------------------------ one run, one event
    def _context(self, state: NFAState, run: Run, event: Event) -> ConditionContext:
        """What a condition reading the partial match sees (built only when one can)."""
        matched = lambda: self.store.events(state, run.node, run.version)  # noqa: E731
        return ConditionContext(matched, self.aggs.reader(run.aggs, event), event.time)

    def _start_run(self, state: NFAState) -> Run:
        return Run(-1, self.nfa.start, None, state.start_version, None, None, None, 0, ())

    def _step(self, state: NFAState, run: Run, event: Event, eid: EventId, ctx: Context) -> list[Run]:
        """Flink's ``computeNextStates`` for one run (successors; releases the run's reference).

        Where PROCEED edges form a cycle (:attr:`Analysis.proceed_cycle`), each path of the closure
        carries the states it passed and stops where it would reach one again: that round of a
        repeated group took no event and adds only the same edges again, for ever.
        """
        cctx = self._context(state, run, event) if self._needs_ctx else None
        edges: list[Transition] = []
        edges_of = self._edges
        here = run.state
        stack: list[tuple[str, frozenset[str] | None]] = [
            (here, frozenset((here,)) if self._proceed_cycle else None)
        ]
        takes = ignores = 0
        while stack:
            name, path = stack.pop()
            for action, target, pred, tr in edges_of[name]:
                if pred(event, cctx):
                    if action == _PROCEED:
                        if path is None:  # why: no cycle (nearly every NFA): no path to carry
                            stack.append((target, None))
                        elif target not in path:
                            stack.append((target, path | {target}))
                    else:
                        edges.append(tr)
                        if action == _TAKE:
                            takes += 1
                        elif target != here:
                            ignores += 1
        return self._branch(state, run, event, eid, ctx, cctx, edges, takes, ignores)

    def _branch(
        self, state: NFAState, run: Run, event: Event, eid: EventId, ctx: Context,
        cctx: ConditionContext | None, edges: list[Transition], takes: int, ignores: int,
    ) -> list[Run]:  # fmt: skip
        """The successors of ``run`` along the edges that fired, with Flink's Dewey versions."""
        is_start = run.start_id is None
        version = run.version
        here = run.state
        self_inc = 0 if takes == 0 and ignores == 0 else ignores + max(1, takes)
        takes_left = take_skip = max(0, takes - 1)
        ignores_left = ignores
        out: list[Run] = []
        kept = False  # ``run`` itself is among the successors
        for tr in edges:
            if tr.action == _IGNORE:
                if is_start:
                    continue
                if tr.target == here:
                    v = increase(version, self_inc)
                    if v == version and not kept:
                        out.append(run)  # unchanged: keep the run (and its buffer reference)
                        kept = True
                        continue
                else:
                    v = add_stage(increase(version, take_skip + ignores_left))
                    ignores_left -= 1
                out.append(self._new_run(state, tr.target, run.node, v, run, run.aggs))
            else:
                edge_v = increase(version, takes_left)
                takes_left -= 1
                self._take(state, run, tr, event, eid, ctx, cctx, edge_v, out)
        if is_start:
            out.append(Run(-1, run.state, None, increase(version, self_inc), None, None, None, 0, ()))
        elif not kept:
            self.store.release(state, run.node, run.version)
        return out

    def _take(
        self, state: NFAState, run: Run, tr: Transition, event: Event, eid: EventId, ctx: Context,
        cctx: ConditionContext | None, edge_v: Version, out: list[Run],
    ) -> None:  # fmt: skip
        """A TAKE edge fired: the successor that took ``event`` (and a Final reached right after)."""
        stage = self._states[tr.source].stage
        node = self.store.put(state, stage, event, eid, run.node, edge_v)
        nxt_v = add_stage(edge_v)
        aggs = self.aggs.take(run.aggs, stage, event) if self._has_aggs else ()
        t = event.time
        start_ts: Time | None
        start_id: EventId | None
        if run.start_id is None:
            start_ts, start_id, inst = t, eid, ctx.new_instance()
        else:
            start_ts, start_id, inst = run.start_ts, run.start_id, run.inst
        out.append(self._run_at(state, tr.target, node, nxt_v, start_ts, start_id, t, inst, aggs))
        if ctx.tracing:
            kind = TraceKind.STARTED if run.start_id is None else TraceKind.EXTENDED
            ctx.trace(kind, inst, stage, event.seq, {"state": tr.target})
        final = self._final_after_proceed(tr.target, event, cctx)
        if final is not None:
            out.append(self._run_at(state, final, node, nxt_v, start_ts, start_id, t, inst, aggs))

    def _run_at(
        self, state: NFAState, target: str, node: Node, version: Version, start_ts: Time | None,
        start_id: EventId | None, prev_ts: Time | None, inst: int, aggs: tuple[Aggregate, ...],
    ) -> Run:  # fmt: skip
        """A new run with the next run id (its node locked in a shared buffer)."""
        rid = state.next_rid
        state.next_rid = rid + 1
        if self._shared and node is not None:
            self.store.lock(state, node, version)
        return Run(rid, target, node, version, start_ts, start_id, prev_ts, inst, aggs)

    def _new_run(
        self,
        state: NFAState,
        target: str,
        node: Node,
        version: Version,
        like: Run,
        aggs: tuple[Aggregate, ...],
    ) -> Run:
        rid = state.next_rid
        state.next_rid = rid + 1
        if self._shared and node is not None:
            self.store.lock(state, node, version)
        return Run(rid, target, node, version, like.start_ts, like.start_id, like.prev_ts, like.inst, aggs)

    def _final_after_proceed(self, target: str, event: Event, cctx: ConditionContext | None) -> str | None:
        if not self.facts.final_reach[target]:
            return None
        return final_after_proceed(self._edges, self._finals, target, event, cctx)

    # ------------------------------------------------------------------ bookkeeping
    def _add(self, state: NFAState, run: Run, ctx: Context, fresh: bool = True) -> None:
        state.runs[run.rid] = run
        state.by_state.setdefault(run.state, set()).add(run.rid)
        if not fresh:
            return
        if self._track_starts and run.start_id is not None:
            heapq.heappush(state.starts, (run.start_id, run.rid))
        window = self._window
        if window is not None and run.start_ts is not None:
            deadline = run.start_ts + window
            heapq.heappush(state.first_deadlines, (deadline, run.rid))
            if run.start_id is not None and run.prev_ts == run.start_ts and state.scheduled != deadline:
                state.scheduled = deadline
                ctx.schedule(deadline, WINDOW_TIMER)
        if not self._window_times:  # why: no stage has a previous-event window (the usual case)
            return
        w = self._window_times.get(run.state)
        if w is not None and run.prev_ts is not None:
            deadline = run.prev_ts + w
            heapq.heappush(state.prev_deadlines, (deadline, run.rid))
            ctx.schedule(deadline, WINDOW_TIMER)

    def _cap(self, state: NFAState, ctx: Context) -> None:
        cap = self.pattern.max_partial_matches
        if cap is None or len(state.runs) <= cap:
            return
        excess = len(state.runs) - cap
        heap, runs = state.starts, state.runs
        while len(runs) > cap and heap:
            _, rid = heapq.heappop(heap)
            run = runs.get(rid)
            if run is None:
                continue
            state.remove(run)
            self.store.release(state, run.node, run.version)
            if ctx.tracing:
                ctx.trace(TraceKind.PRUNED, run.inst, None, None, cap_detail(cap))
        self._after_cap(state)
        state.dropped += excess
        warn_cap(ctx, self.name, cap, excess)

    def _after_cap(self, state: NFAState) -> None:
        """Hook: forget the dropped runs in the plan's own orderings."""


def _order(run: Run) -> tuple[EventId | None, int]:
    """:meth:`Run.order` for runs that have a first event (every run in ``NFAState.runs``)."""
    return (run.start_id, run.rid)


def final_after_proceed(
    edges: Mapping[str, Sequence[tuple[int, str, Predicate, object]]],
    finals: frozenset[str],
    target: str,
    event: Event,
    cctx: ConditionContext | None,
) -> str | None:
    """The Final state reached from ``target`` through PROCEED edges that hold for ``event`` (Flink's
    order: the edges of the state reached last are tried first), if any."""
    stack, seen = [target], set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        for action, nxt, pred, _ in edges[name]:
            if action != _PROCEED:
                continue
            if pred(event, cctx):
                if nxt in finals:
                    return nxt
                stack.append(nxt)
    return None
