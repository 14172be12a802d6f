"""The NFA matcher: advances partial matches per event, windows, skip strategies, emission.

One :class:`NFAMatcher` (immutable, shared by every key) interprets the compiled graph; each key has
an :class:`~workbench.engine.nfa.state.NFAState`. Per event:

1. time is advanced to the event's time: partial matches whose first-and-last window
   (``t - t_first >= within``) or previous-and-current window expired are removed; those waiting in
   a trailing ``notFollowedBy`` become matches, the others timeouts;
2. only the partial matches whose NFA state can be changed by an event of this type are visited
   (the event-type index, see :meth:`NFAMatcher.wakes`); each one follows ``PROCEED`` edges and
   branches on every ``TAKE``/``IGNORE`` edge whose condition holds, exactly like Flink's NFA,
   with Dewey versions in the shared buffer;
3. completed matches are emitted, subject to the after-match skip strategy.
"""

from __future__ import annotations

import heapq
import warnings
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from workbench.engine.aggregates import input_of, make_aggregate, value_with
from workbench.engine.detection import Detection, TraceKind
from workbench.engine.events import Event
from workbench.engine.faults import FaultSink
from workbench.engine.matcher import Context
from workbench.engine.nfa.buffer import EventId, NodeId, Version, add_stage, increase
from workbench.engine.nfa.compiler import Action, CompiledNFA, Kind, StateDef, Transition, compile_nfa
from workbench.engine.nfa.conditions import (
    ConditionContext,
    compile_predicate,
    needs_context,
    type_profile,
)
from workbench.engine.nfa.javaheap import offer, poll, remove_if
from workbench.engine.nfa.linear import LinearPlan
from workbench.engine.nfa.loop import LoopPlan
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.state import NFAState, Run
from workbench.engine.nfa.trace import cap_detail, negation_detail, skip_detail, strict_detail
from workbench.errors import PatternError, SkipStrategyError

__all__ = ["NFAMatcher"]

_TIMER = "nfa-window"
_TAKE = int(Action.TAKE)
_PROCEED = int(Action.PROCEED)
_IGNORE = int(Action.IGNORE)


class NFAMatcher:
    """A compiled sequence pattern (implements :class:`~workbench.engine.matcher.Matcher`).

    Attributes:
        name: the pattern's name.
        pattern: the source pattern.
        nfa: the compiled graph.
    """

    def __init__(self, pattern: SequencePattern, *, specialise: bool = True) -> None:
        self.name = pattern.name
        self.pattern = pattern
        specs = pattern.aggregates
        names = [a.name for a in specs]
        if len(set(names)) != len(names):
            msg = f"duplicate aggregate names: {names}"
            raise PatternError(msg, pattern=pattern.name)
        self._agg_index = {a.name: i for i, a in enumerate(specs)}
        self._has_aggs = bool(specs)
        for a in specs:
            make_aggregate(a.function, **dict(a.params))  # validates the function name early
        #: where this pattern's conditions report runtime errors (an engine points it at its log)
        self.faults = FaultSink(pattern.name)
        self.nfa: CompiledNFA = compile_nfa(pattern, frozenset(names), self.faults)
        for a in specs:
            if a.stage not in self.nfa.stage_names:
                msg = f"aggregate {a.name!r} refers to unknown stage {a.stage!r}"
                raise PatternError(msg, pattern=pattern.name, element=a.name)
        self._states: Mapping[str, StateDef] = self.nfa.states
        self._skip = pattern.skip
        self._final_reach = {name: self._proceed_closure(name) for name in self._states}
        #: state -> no IGNORE edge reachable through PROCEED edges (a dead end is strict contiguity)
        self._strict = {name: self._no_ignore(name) for name in self._states}
        self._wakes = {name: self.wakes(name) for name in self._states}
        self._always = frozenset(n for n, w in self._wakes.items() if w is None)
        by_type: dict[str, set[str]] = {}
        for n, w in self._wakes.items():
            for typ in w or ():
                by_type.setdefault(typ, set()).add(n)
        self._by_type = {t: frozenset(s) for t, s in by_type.items()}
        self._flink = pattern.flink_order
        self._start_wakes = self.start_wakes()
        self._event_types = self._relevant_types()
        #: event type -> states an event of that type can wake (other types: ``_always``)
        self._woken = {t: self._always | states for t, states in self._by_type.items()}
        self._stage_index = {name: i for i, name in enumerate(self.nfa.stage_names)}
        # Hot-path tables: each state's edges as (action, target, compiled predicate, transition);
        # a ConditionContext is only built when some condition can read it.
        self._edges: dict[str, tuple[tuple[int, str, Callable[..., Any], Transition], ...]] = {
            name: tuple((int(tr.action), tr.target, compile_predicate(tr.cond), tr) for tr in st.transitions)
            for name, st in self._states.items()
        }
        self._needs_ctx = any(needs_context(tr.cond) for st in self._states.values() for tr in st.transitions)
        #: partial matches keep their own path instead of sharing the Dewey-versioned buffer
        self._paths = specialise and not pattern.flink_order
        #: the fast path for chains of single-event stages (None: the general NFA runs every pattern)
        self._linear: LinearPlan | LoopPlan | None = None
        if specialise:
            plans = (LinearPlan, LoopPlan)
            self._linear = next(
                (p for p in (c.build(pattern, self.nfa, self._wakes, self._start_wakes) for c in plans) if p),
                None,
            )

    # ------------------------------------------------------------------ analysis
    def _proceed_closure(self, name: str) -> bool:
        """Whether Final may be reachable from ``name`` through PROCEED edges."""
        seen, stack = set(), [name]
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            st = self._states[s]
            if st.kind == Kind.FINAL:
                return True
            stack.extend(t.target for t in st.transitions if t.action == Action.PROCEED)
        return False

    def _no_ignore(self, name: str) -> bool:
        """Whether no ``IGNORE`` edge is reachable from ``name`` through PROCEED edges."""
        seen, stack = set(), [name]
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            for tr in self._states[s].transitions:
                if tr.action == Action.IGNORE:
                    return False
                if tr.action == Action.PROCEED and self._states[tr.target].kind != Kind.STOP:
                    stack.append(tr.target)
        return True

    def start_wakes(self) -> frozenset[str] | None:
        """Event types that can start a partial match (``None``: all).

        The start run never ignores; for any other type every reachable TAKE/IGNORE/PROCEED edge
        is certainly false, so it neither branches nor changes its version.
        """
        out: set[str] = set()
        start = self.nfa.start
        seen, stack = set(), [start]
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            for tr in self._states[s].transitions:
                if tr.action == Action.IGNORE and tr.target == start:
                    continue
                prof = type_profile(tr.cond)
                if prof is None or prof[1]:
                    return None
                out |= prof[0]
                if tr.action == Action.PROCEED:
                    stack.append(tr.target)
        return frozenset(out)

    def _relevant_types(self) -> frozenset[str] | None:
        """Every event type that can start or change a partial match (``None``: all types)."""
        if self._start_wakes is None:
            return None
        out = set(self._start_wakes)
        start = self.nfa.start
        targeted = {tr.target for st in self._states.values() for tr in st.transitions}
        for name, st in self._states.items():
            if st.kind in (Kind.FINAL, Kind.STOP) or (name == start and start not in targeted):
                continue
            w = self._wakes[name]
            if w is None:
                return None
            out |= w
        return frozenset(out)

    def wakes(self, name: str) -> frozenset[str] | None:
        """Event types that can change a partial match waiting in state ``name`` (``None``: all).

        For any other type, every edge reachable from the state is certainly false except its own
        ``IGNORE`` loop, which is certainly true, so the partial match stays exactly as it is.
        """
        out: set[str] = set()
        seen, stack = set(), [name]
        stays = False  # some IGNORE loop keeps the run in place (else a non-matching event kills it)
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            for tr in self._states[s].transitions:
                prof = type_profile(tr.cond)
                if prof is None:
                    return None
                types, value = prof
                self_ignore = tr.action == Action.IGNORE and tr.target == name
                if value is not self_ignore:
                    return None
                stays = stays or self_ignore
                out |= types
                if tr.action == Action.PROCEED:
                    stack.append(tr.target)
        return frozenset(out) if stays else None

    # ------------------------------------------------------------------ Matcher protocol
    def event_types(self) -> frozenset[str] | None:
        """The types that can start or change a partial match, when the conditions tell (else all).

        Other events cannot change any partial match; windows still expire on time because the
        matcher schedules timers at every deadline.
        """
        return self._event_types

    def new_state(self, key: Hashable) -> NFAState:
        """A fresh per-key state."""
        return NFAState()

    @property
    def specialised(self) -> bool:
        """Whether a fast path (linear or loop) runs this pattern (same results as the general NFA)."""
        return self._linear is not None

    @property
    def fast_path(self) -> str | None:
        """``"linear"``, ``"loop"`` or ``None`` (the general interpreter runs the pattern)."""
        if self._linear is None:
            return None
        return "linear" if isinstance(self._linear, LinearPlan) else "loop"

    def is_idle(self, state: NFAState) -> bool:
        """Nothing in flight."""
        return (
            not state.runs
            and not state.completed
            and not state.linear
            and not state.linear_done
            and not state.loop_hot
            and not state.loop_last
        )

    def on_timer(self, state: NFAState, time: int | float, token: Hashable, ctx: Context) -> None:
        """A window deadline passed with no event: advance time to it."""
        self.advance(state, time, ctx)

    def process(self, state: NFAState, event: Event, ctx: Context) -> None:
        """Advance time to the event, then feed it to the partial matches it can change."""
        if self._linear is not None:
            self._linear.process(state, event, ctx)
            return
        t = event.time
        first, prev = state.first_deadlines, state.prev_deadlines
        if (first and first[0][0] <= t) or (prev and prev[0][0] <= t):
            self.advance(state, t, ctx)
        elif state.time is None or t > state.time:
            state.time = t
        typ = event.type
        sw = self._start_wakes
        starts = sw is None or typ in sw
        if not starts and not state.runs and not self._flink:
            # Nothing to visit; held-back completed matches are only released when a partial
            # match changes, and none can.
            return
        eid: EventId = (t, event.seq)
        woken = self._woken.get(typ, self._always)
        potential: list[Run] = []
        if self._flink:
            new: list[Run] = []
            for run in state.pq or [self._start_run(state)]:
                if (run.state not in woken) if run.start_id is not None else not starts:
                    offer(new, run, _jkey)
                    continue
                for r in self._advance_run(state, run, event, eid, ctx, potential):
                    offer(new, r, _jkey)
            state.pq = new
        else:
            visiting: list[Run] = []
            if state.runs:
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
        if potential or self._skip.kind != "no_skip":
            self._emit_matches(state, potential, t, ctx)
        cap = self.pattern.max_partial_matches
        if cap is not None and len(state.runs) > cap:
            self._cap(state, ctx)

    def _advance_run(
        self, state: NFAState, run: Run, event: Event, eid: EventId, ctx: Context, potential: list[Run]
    ) -> list[Run]:
        """Step one run; register its surviving successors; collect completed ones in ``potential``."""
        is_start = run.start_id is None
        if not is_start:
            self._remove(state, run)
        succ = self._step(state, run, event, eid, ctx)
        if not succ and not is_start:
            if ctx.tracing:
                self._trace_dead_end(run, event, ctx)
            return succ
        stopped = False
        keep: list[Run] = []
        for r in succ:
            kind = self._states[r.state].kind
            if kind == Kind.FINAL:
                if self._flink:
                    offer(potential, r, _jkey)
                else:
                    potential.append(r)
            elif kind == Kind.STOP:
                stopped = True
                self._release(state, r.node, r.version)
            else:
                keep.append(r)
        if stopped and not is_start:
            for r in keep:
                self._release(state, r.node, r.version)
            if ctx.tracing:
                ctx.trace(TraceKind.VIOLATED, run.inst, None, event.seq)
                ctx.trace(TraceKind.PRUNED, run.inst, None, event.seq, negation_detail(event.seq))
            keep = [r for r in keep if r.start_id is None]
        for r in keep:
            if r.start_id is None:
                state.start_version = r.version
            else:
                self._add(state, r, ctx, fresh=r is not run)
        return keep

    def _trace_dead_end(self, run: Run, event: Event, ctx: Context) -> None:
        """Trace a partial match that ``event`` left with no successor (strict contiguity, mostly)."""
        stage = self._states[run.state].stage
        if self._strict[run.state]:
            detail = strict_detail(event.seq, stage)
        else:
            detail = {"reason": f"no edge accepts event #{event.seq}", "event": event.seq, "waiting": stage}
        ctx.trace(TraceKind.PRUNED, run.inst, None, event.seq, detail)

    # ------------------------------------------------------------------ time
    def advance(self, state: NFAState, t: int | float, ctx: Context) -> None:
        """Advance the key's time to ``t``: expire windows, release pending ``notFollowedBy`` matches."""
        if self._linear is not None:
            self._linear.advance(state, t, ctx)
            return
        if state.time is None or t > state.time:
            state.time = t
        first, prev = state.first_deadlines, state.prev_deadlines
        if not (first and first[0][0] <= t) and not (prev and prev[0][0] <= t):
            return
        window = self.nfa.window_ms
        expired: dict[int, bool] = {}  # rid -> timed out by the previous-event window
        runs = state.runs
        if window is not None:
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
        if not expired:
            return
        potential: list[Run] = []
        timeouts: list[tuple[Run, int | float]] = []
        if self._flink:
            order: list[Run] = []
            new: list[Run] = []
            for run in state.pq:
                if run.start_id is not None and run.rid in expired:
                    order.append(run)
                else:
                    offer(new, run, _jkey)
            state.pq = new
        else:
            order = sorted((runs[i] for i in expired), key=Run.order)
        for run in order:
            self._remove(state, run)
            if self._states[run.state].kind == Kind.PENDING:
                if self._flink:
                    offer(potential, run, _jkey)
                else:
                    potential.append(run)
                continue
            by_prev = expired[run.rid]
            if self.pattern.emit_timeouts:
                if by_prev:
                    deadline = run.prev_ts + self.nfa.window_times[run.state]
                else:
                    assert window is not None
                    deadline = run.start_ts + window
                timeouts.append((run, deadline))
                continue
            if ctx.tracing:
                ctx.trace(TraceKind.TIMED_OUT, run.inst)
            self._release(state, run.node, run.version)
        self._emit_matches(state, potential, t, ctx)
        for run, deadline in timeouts:
            self._emit(state, run, "timeout", deadline, ctx)
            self._release(state, run.node, run.version)

    # ------------------------------------------------------------------ one run, one event
    def _start_run(self, state: NFAState) -> Run:
        return Run(-1, self.nfa.start, None, state.start_version, None, None, None, 0, ())

    def _step(self, state: NFAState, run: Run, event: Event, eid: EventId, ctx: Context) -> list[Run]:
        """Flink's ``computeNextStates`` for one run (successors; releases the run's reference)."""
        states = self._states
        cctx = (
            ConditionContext(lambda: self._materialize(state, run), self._agg_reader(run, event), event.time)
            if self._needs_ctx
            else None
        )
        edges: list[Transition] = []
        edges_of = self._edges
        here = run.state
        stack = [here]
        takes = ignores = 0
        while stack:
            for action, target, pred, tr in edges_of[stack.pop()]:
                if pred(event, cctx):
                    if action == _PROCEED:
                        stack.append(target)
                    else:
                        edges.append(tr)
                        if action == _TAKE:
                            takes += 1
                        elif target != here:
                            ignores += 1
        is_start = run.start_id is None
        version = run.version
        self_inc = 0 if takes == 0 and ignores == 0 else ignores + max(1, takes)
        takes_left = max(0, takes - 1)
        ignores_left = ignores
        take_skip = max(0, takes - 1)
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
                out.append(self._new_run(state, tr.target, run.node, v, run, run.aggs, ctx))
            else:
                edge_v = increase(version, takes_left)
                takes_left -= 1
                node = self._put(state, states[tr.source].stage, event, eid, run.node, edge_v)
                nxt_v = add_stage(edge_v)
                aggs = self._take_aggs(run.aggs, states[tr.source].stage, event) if self._has_aggs else ()
                if is_start:
                    proto = Run(-1, "", None, (), event.time, eid, event.time, ctx.new_instance(), aggs)
                else:
                    proto = Run(-1, "", None, (), run.start_ts, run.start_id, event.time, run.inst, aggs)
                out.append(self._new_run(state, tr.target, node, nxt_v, proto, aggs, ctx))
                if ctx.tracing:
                    kind = TraceKind.STARTED if is_start else TraceKind.EXTENDED
                    ctx.trace(kind, proto.inst, states[tr.source].stage, event.seq, {"state": tr.target})
                final = self._final_after_proceed(tr.target, event, cctx)
                if final is not None:
                    out.append(self._new_run(state, final, node, nxt_v, proto, aggs, ctx))
        if is_start:
            out.append(Run(-1, run.state, None, increase(version, self_inc), None, None, None, 0, ()))
        elif not kept:
            self._release(state, run.node, run.version)
        return out

    def _new_run(
        self, state: NFAState, target: str, node: NodeId | None, version: Version, like: Run,
        aggs: tuple[Any, ...], ctx: Context,
    ) -> Run:  # fmt: skip
        rid = state.next_rid
        state.next_rid = rid + 1
        if node is not None and not self._paths:
            state.buffer.lock(node, version)
        return Run(rid, target, node, version, like.start_ts, like.start_id, like.prev_ts, like.inst, aggs)

    def _final_after_proceed(self, target: str, event: Event, cctx: ConditionContext | None) -> str | None:
        if not self._final_reach[target]:
            return None
        stack, seen = [target], set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            for action, nxt, pred, _ in self._edges[name]:
                if action != _PROCEED:
                    continue
                if pred(event, cctx):
                    if self._states[nxt].kind == Kind.FINAL:
                        return nxt
                    stack.append(nxt)
        return None

    # ------------------------------------------------------------------ storage of taken events
    # Shared buffer (Dewey versions), or with ``_paths`` each partial match's own path as a tuple of
    # ``(stage, event id, event)`` in ``Run.node`` (no sharing, no versions to resolve).
    def _put(
        self, state: NFAState, stage: str, event: Event, eid: EventId, prev: Any, version: Version
    ) -> Any:
        if self._paths:
            return ((stage, eid, event),) if prev is None else (*prev, (stage, eid, event))
        return state.buffer.put(stage, event, eid, prev, version)

    def _release(self, state: NFAState, node: Any, version: Version) -> None:
        if not self._paths:
            state.buffer.release(node, version)

    def _extract(self, state: NFAState, node: Any, version: Version) -> list[list[tuple[str, EventId]]]:
        if self._paths:
            return [[(stage, eid) for stage, eid, _ in node]] if node else []
        return state.buffer.extract(node, version)

    # ------------------------------------------------------------------ aggregates
    def _agg_reader(self, run: Run, event: Event) -> Callable[[str, str | None], Any]:
        specs = self.pattern.aggregates
        index = self._agg_index

        def read(name: str, stage: str | None = None) -> Any:
            i = index.get(name)
            if i is None:
                msg = f"no aggregate named {name!r}; declared: {sorted(index)}"
                raise PatternError(msg, pattern=self.name)
            spec = specs[i]
            agg = run.aggs[i] if run.aggs else make_aggregate(spec.function, **dict(spec.params))
            if spec.include_current and stage == spec.stage:
                return value_with(agg, input_of(event, spec.field))
            return agg.get()

        return read

    def _take_aggs(self, aggs: tuple[Any, ...], stage: str, event: Event) -> tuple[Any, ...]:
        specs = self.pattern.aggregates
        if not specs:
            return ()
        if not aggs:
            aggs = tuple(make_aggregate(s.function, **dict(s.params)) for s in specs)
        if not any(s.stage == stage for s in specs):
            return aggs
        out = []
        for spec, agg in zip(specs, aggs, strict=True):
            if spec.stage == stage:
                agg = agg.copy()
                agg.update(input_of(event, spec.field))
            out.append(agg)
        return tuple(out)

    # ------------------------------------------------------------------ bookkeeping
    def _add(self, state: NFAState, run: Run, ctx: Context, fresh: bool = True) -> None:
        state.runs[run.rid] = run
        state.by_state.setdefault(run.state, set()).add(run.rid)
        if not fresh:
            return
        if run.start_id is not None:
            heapq.heappush(state.starts, (run.start_id, run.rid))
        if self.nfa.window_ms is not None and run.start_ts is not None:
            deadline = run.start_ts + self.nfa.window_ms
            heapq.heappush(state.first_deadlines, (deadline, run.rid))
            if run.start_id is not None and run.prev_ts == run.start_ts and state.scheduled != deadline:
                state.scheduled = deadline
                ctx.schedule(deadline, _TIMER)
        w = self.nfa.window_times.get(run.state)
        if w is not None and run.prev_ts is not None:
            deadline = run.prev_ts + w
            heapq.heappush(state.prev_deadlines, (deadline, run.rid))
            ctx.schedule(deadline, _TIMER)

    @staticmethod
    def _remove(state: NFAState, run: Run) -> None:
        del state.runs[run.rid]
        ids = state.by_state[run.state]
        ids.discard(run.rid)
        if not ids:
            del state.by_state[run.state]

    def _earliest_partial(self, state: NFAState) -> EventId | None:
        heap, runs = state.starts, state.runs
        while heap and heap[0][1] not in runs:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

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
            self._remove(state, run)
            self._release(state, run.node, run.version)
            if ctx.tracing:
                ctx.trace(TraceKind.PRUNED, run.inst, None, None, cap_detail(cap))
        if self._flink:
            remove_if(state.pq, lambda r: r.start_id is not None and r.rid not in runs, _jkey)
        state.dropped += excess
        warnings.warn(
            f"pattern {self.name!r}, key {ctx.key!r}: more than {cap} partial matches; dropped the "
            f"{excess} oldest (max_partial_matches; {state.dropped} dropped so far for this key)",
            RuntimeWarning,
            stacklevel=2,
        )

    # ------------------------------------------------------------------ matches
    def _emit_matches(self, state: NFAState, potential: list[Run], t: int | float, ctx: Context) -> None:
        if self._skip.kind == "no_skip":
            for run in potential:
                self._emit(state, run, "match", t, ctx)
                self._release(state, run.node, run.version)
            return
        completed = state.completed
        if self._flink:
            for run in potential:
                offer(completed, run, _jkey)
        else:
            completed.extend(potential)
            keys = {id(r): self._completion_key(state, r) for r in completed}
            completed.sort(key=lambda r: keys[id(r)])
        while completed:
            match = completed[0]
            assert match.start_id is not None
            if self._flink:
                earliest = state.pq[0].start_id if state.pq else None
            else:
                earliest = self._earliest_partial(state)
            if earliest is not None and earliest < match.start_id:
                break
            if self._flink:
                poll(completed, _jkey)
            else:
                completed.pop(0)
            paths = self._extract(state, match.node, match.version)
            pruning = self._pruning_id(paths)
            if pruning is not None:
                self._prune(state, pruning, ctx)
            self._emit(state, match, "match", t, ctx, paths[0] if paths else [])
            self._release(state, match.node, match.version)

    def _completion_key(self, state: NFAState, run: Run) -> tuple[Any, ...]:
        """Emission order of held-back matches: earliest start, earliest last event, then the
        smallest (event, stage) sequence -- a deterministic, documented rule (Flink's own order
        among equal starts is a Java heap artefact, reproduced only with ``flink_order``)."""
        paths = self._extract(state, run.node, run.version)
        index = self._stage_index
        seq = tuple((eid, index[stage]) for stage, eid in paths[0]) if paths else ()
        last = None if run.node is None else run.node[-1][1] if self._paths else run.node[0]
        return (run.start_id, last, seq)

    def _pruning_id(self, paths: list[list[tuple[str, EventId]]]) -> EventId | None:
        skip = self._skip
        pruning: EventId | None = None
        for path in paths:
            if skip.kind == "skip_past_last_event":
                last = max(eid for _, eid in path)
                pruning = last if pruning is None else max(pruning, last)
            elif skip.kind == "skip_to_next":
                first = min(eid for _, eid in path)
                pruning = first if pruning is None else min(pruning, first)
            else:
                ids = [eid for stage, eid in path if stage == skip.stage]
                if not ids:
                    if skip.throw_on_miss:
                        msg = (
                            f"pattern {self.name!r}: could not skip to {skip.stage!r}: no such element "
                            f"in the found match {[s for s, _ in path]}"
                        )
                        raise SkipStrategyError(msg)
                else:
                    pick = ids[0] if skip.kind == "skip_to_first" else ids[-1]
                    pruning = pick if pruning is None else max(pruning, pick)
                if skip.throw_on_miss and pruning is not None and path and pruning == min(e for _, e in path):
                    msg = (
                        f"pattern {self.name!r}: could not skip to the first element of a match "
                        f"({skip.kind} {skip.stage!r} would restart at the same event)"
                    )
                    raise SkipStrategyError(msg)
        return pruning

    def _prune(self, state: NFAState, pruning: EventId, ctx: Context) -> None:
        inclusive = self._skip.kind in ("skip_to_next", "skip_past_last_event")

        def trace_pruned(run: Run) -> None:
            if ctx.tracing:
                ctx.trace(TraceKind.PRUNED, run.inst, None, None, skip_detail(self._skip.kind))

        def hit(start: EventId | None) -> bool:
            return start is not None and (start <= pruning if inclusive else start < pruning)

        runs = state.runs
        if self._flink:
            for run in remove_if(state.pq, lambda r: hit(r.start_id), _jkey):
                self._remove(state, run)
                self._release(state, run.node, run.version)
                trace_pruned(run)
            for run in remove_if(state.completed, lambda r: hit(r.start_id), _jkey):
                self._release(state, run.node, run.version)
                trace_pruned(run)
            return
        heap = state.starts
        while heap and (heap[0][1] not in runs or hit(heap[0][0])):
            _, rid = heapq.heappop(heap)
            victim = runs.get(rid)
            if victim is not None:
                self._remove(state, victim)
                self._release(state, victim.node, victim.version)
                trace_pruned(victim)
        kept = []
        for run in state.completed:
            if hit(run.start_id):
                self._release(state, run.node, run.version)
                trace_pruned(run)
            else:
                kept.append(run)
        state.completed[:] = kept

    def _materialize(self, state: NFAState, run: Run) -> dict[str, list[Event]]:
        out: dict[str, list[Event]] = {}
        if self._paths:
            for stage, _, ev in run.node or ():
                out.setdefault(stage, []).append(ev)
            return out
        paths = self._extract(state, run.node, run.version)
        if paths:
            for stage, eid in paths[0]:
                out.setdefault(stage, []).append(state.buffer.event(eid))
        return out

    def _emit(
        self, state: NFAState, run: Run, kind: str, t: int | float, ctx: Context,
        path: list[tuple[str, EventId]] | None = None,
    ) -> None:  # fmt: skip
        if path is None:
            paths = self._extract(state, run.node, run.version)
            path = paths[0] if paths else []
        grouped: dict[str, list[Event]] = {}
        event_of = {i: ev for _, i, ev in run.node or ()}.__getitem__ if self._paths else state.buffer.event
        for stage, eid in path:
            grouped.setdefault(stage, []).append(event_of(eid))
        events: list[Event] = []
        channels: list[str] = []
        for stage, evs in grouped.items():
            events.extend(evs)
            channels.extend([stage] * len(evs))
        ctx.emit(Detection(self.name, ctx.key, run.inst, kind, t, tuple(events), tuple(channels)))
        if ctx.tracing:
            ctx.trace(TraceKind.DETECTED if kind == "match" else TraceKind.TIMED_OUT, run.inst)


def _order(run: Run) -> tuple[Any, ...]:
    """:meth:`Run.order` for runs that have a first event (every run in ``NFAState.runs``)."""
    return (run.start_id, run.rid)


def _jkey(run: Run) -> tuple[Any, ...]:
    """Flink's partial-match comparator: by start event id; runs without one sort last."""
    if run.start_id is None:
        return (1,)
    return (0, *run.start_id)
