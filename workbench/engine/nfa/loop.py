"""The loop plan: ``begin a, followedBy b{n,} (relaxed inside), followedBy c``.

The shape of the P3 and P5 benchmark patterns: a single start stage, a looping stage entered with
relaxed contiguity whose inner contiguity is relaxed (Flink's default ``timesOrMore(n)`` /
``oneOrMore()``, neither greedy nor ``until``), then a single relaxed last stage. The plan is
recognised on the *compiled* NFA, state by state and edge by edge, so anything else (greedy
guards, ``until``, optional stages, negations, ``consecutive``, ``allowCombinations``, bounded
``times``, skip strategies, previous-event windows, ``flink_order``) runs in the general plan.

A partial match (:class:`LoopRun`) has a ``code``: ``k > 0`` (``k`` more loop events needed),
:data:`LOOP` (just took a loop event), :data:`GAP` (inside the loop, last event skipped) or
:data:`LAST` (left the loop, waiting for the last stage). It steps exactly as the general plan
steps those NFA states (same successors, in the same order, with the same run ids, instances,
traces, timers, timeouts and cap), with no versions, index sets or heaps. Aggregates are a tuple
per partial match inside the loop, updated in place in O(1) per aggregate when the loop takes an
event (see :meth:`LoopPlan._take_loop` for why no copy is needed); a condition that reads them gets
a :class:`LoopContext` (one small object, no closures).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.engine.aggregates import Aggregate
from workbench.engine.detection import TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context, Kernel
from workbench.engine.nfa.analysis import Analysis
from workbench.engine.nfa.buffer import EventId, Time
from workbench.engine.nfa.chain import ChainPlan, ChainState, Done, by_start
from workbench.engine.nfa.conditions import (
    ConditionContext,
    compile_predicate,
    needs_context,
)
from workbench.engine.nfa.graph import CompiledNFA
from workbench.engine.nfa.loopgen import generate, loop_kernel
from workbench.engine.nfa.loopnative import native_step
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.runaggs import RunAggregates
from workbench.engine.nfa.shapes import loop_shape

__all__ = ["GAP", "LAST", "LOOP", "LoopContext", "LoopPlan", "LoopRun", "LoopState"]

LOOP, GAP, LAST = 0, -1, -2


@dataclass(slots=True, eq=False)
class LoopRun:
    """One partial match of a loop pattern.

    Attributes:
        start_id: id of its first event; ``(start_id, rid)`` orders partial matches.
        rid: run id (a partial match that changes gets a new one, as in the general plan).
        code: where it waits (see the module docstring).
        start_ts / prev_ts: times of its first and last event.
        inst: detection instance id.
        events: the events taken so far.
        aggs: the aggregates (``()`` while nothing reads them).
    """

    start_id: EventId
    rid: int
    code: int
    start_ts: Time
    prev_ts: Time
    inst: int
    events: tuple[Event, ...]
    aggs: tuple[Aggregate, ...]


@dataclass(slots=True, eq=False)
class LoopState(ChainState):
    """Everything one key holds for a loop pattern: three lists, each in ``(start_id, rid)`` order.

    Attributes:
        hot: partial matches that just took a loop event (every event changes them).
        cold: partial matches waiting for a loop event.
        last: partial matches waiting for the last stage.
        next_rid / dropped / time / scheduled: see :class:`~workbench.engine.nfa.chain.ChainState`.
    """

    hot: list[LoopRun] = field(default_factory=list)
    cold: list[LoopRun] = field(default_factory=list)
    last: list[LoopRun] = field(default_factory=list)

    @property
    def partial_matches(self) -> int:
        """Number of live partial matches."""
        return len(self.hot) + len(self.cold) + len(self.last)


class LoopContext(ConditionContext):
    """The condition context of one partial match of a :class:`LoopPlan` for one event."""

    __slots__ = ("_event", "_path", "_plan", "_run_aggs")

    def __init__(self, plan: LoopPlan, run: LoopRun, event: Event) -> None:
        # No lookup/reader closures: ``matched`` and ``aggregate`` read the run directly.
        self._plan = plan
        self._path = run.events
        self._run_aggs = run.aggs
        self._event = event
        self._matched = None
        self.timestamp = event.time
        self.stage = None
        self.memo = {}

    def matched(self, stage: str) -> list[Event]:
        """Events already taken for ``stage`` in this partial match (empty if none)."""
        stages = self._plan.stages_of(len(self._path))  # a restored run may be longer than any seen
        return [e for j, e in enumerate(self._path) if stages[j] == stage]

    def aggregate(self, name: str) -> object:
        """The current value of the declared aggregate ``name``."""
        return self._plan.aggs.read(self._run_aggs, name, self.stage, self._event)

    def __getitem__(self, name: str) -> object:
        return self.aggregate(name)


class LoopPlan(ChainPlan[LoopState]):
    """The compiled ``a, b{n,}, c`` shape; steps one key's :class:`LoopState`.

    ``process`` is :meth:`interpret` specialised to this plan by
    :func:`~workbench.engine.nfa.loopgen.generate` (``generated=False``: the interpreter itself);
    both step the same state the same way.
    """

    #: ``process(state, event, ctx)``: the generated code, or :meth:`interpret`
    process: Callable[[LoopState, Event, Context], None]

    def __init__(
        self, pattern: SequencePattern, nfa: CompiledNFA, entry: list[str], names: tuple[str, str, str, str],
        facts: Analysis, *, generated: bool = True,
    ) -> None:  # fmt: skip
        states, wakes = nfa.states, facts.wakes
        loop, gap, last, final = names
        start = states[nfa.start]
        super().__init__(pattern, nfa)
        self.n = len(entry)
        self.stages = (start.stage, states[loop].stage, states[last].stage)
        self.start_cond = start.transitions[0].cond
        self.start_pred = compile_predicate(self.start_cond)
        take = self.take_cond = states[loop].transitions[1].cond
        self.take_pred = compile_predicate(take)
        self.take_ctx = needs_context(take)
        self.last_cond = states[last].transitions[0].cond
        self.last_pred = compile_predicate(self.last_cond)
        #: target state name of the TAKE from code k (entry), for traces; index 0 unused
        self.entry_target = ["", *(states[s].transitions[0].target for s in reversed(entry))]
        self.entry_name = entry[0]
        self.loop_name, self.final_name = loop, final
        self.start_wakes = facts.start_wakes
        #: wake sets by code (negative codes index from the end): [LOOP, 1..n, LAST, GAP]
        self.wakes = [wakes[loop], *(wakes[s] for s in reversed(entry)), wakes[last], wakes[gap]]
        cold = [wakes[s] for s in (*entry, gap)]
        #: event types that can change a partial match waiting for a loop event (None: all)
        self.cold_wakes: frozenset[str] | None = (
            None if any(w is None for w in cold) else frozenset().union(*(w for w in cold if w is not None))
        )
        self.aggs = RunAggregates(pattern)
        #: per stage (a, b, c): indexes of the aggregates it updates
        self.agg_of = tuple(self.aggs.of_stage.get(stage, ()) for stage in self.stages)
        #: stage of each taken event by position (a, b, ..., b, c), grown on demand (``stages_of``)
        self.path_stages: list[str] = [start.stage]
        # why native first: the same step, compiled, where the native core is built
        native = native_step(self) if generated else None
        self.process = native if native is not None else generate(self) if generated else self.interpret
        if native is not None:  # why: a window deadline's timer expires as the native step does
            self.on_timer = native.on_timer  # type: ignore[method-assign,assignment]

    @classmethod
    def build(
        cls, pattern: SequencePattern, nfa: CompiledNFA, facts: Analysis, *, generated: bool = True
    ) -> LoopPlan | None:
        """The plan, or ``None`` when the compiled NFA does not have exactly this shape."""
        if pattern.skip.kind != "no_skip" or pattern.flink_order or nfa.window_times:
            return None
        shape = loop_shape(nfa)
        return None if shape is None else cls(pattern, nfa, *shape, facts, generated=generated)

    def new_state(self) -> LoopState:
        """A fresh per-key state."""
        return LoopState()

    def kernel(self, prefix: str) -> Kernel:
        """The step for the engine's fused loop (names of its constants start with ``prefix``)."""
        return loop_kernel(self, prefix)

    def is_idle(self, state: LoopState) -> bool:
        """Nothing in flight."""
        return not state.hot and not state.cold and not state.last

    # ------------------------------------------------------------------ aggregates, paths
    def _take_loop(self, aggs: tuple[Aggregate, ...], event: Event) -> tuple[Aggregate, ...]:
        """Update the loop stage's aggregates in place, O(1) each.

        No copy is needed: the partial match that takes the event is discarded, and the branch
        that leaves the loop (waiting for the last stage) holds no aggregates, because nothing
        reads them there (the last stage's condition reads only the event).
        """
        touched = self.agg_of[1]
        if not touched:
            return aggs
        out = list(aggs)
        for i in touched:
            out[i] = self.aggs.updated(aggs[i], i, event, in_place=True)
        return tuple(out)

    def stages_of(self, n: int) -> list[str]:
        """:attr:`path_stages`, grown to at least ``n`` positions."""
        stages = self.path_stages
        while len(stages) < n:
            stages.append(self.stages[1])
        return stages

    def _complete(
        self, inst: int, taken: tuple[Event, ...], event: Event, ctx: Context, done: list[Done]
    ) -> None:
        """The last stage takes ``event``: a match."""
        if ctx.tracing:
            ctx.trace(TraceKind.EXTENDED, inst, self.stages[2], event.seq, {"state": self.final_name})
        if self.agg_of[2]:
            self.aggs.take((), self.stages[2], event)  # nothing reads them; only as the NFA would fail
        done.append((inst, (*taken, event)))

    # ------------------------------------------------------------------ per event
    def interpret(self, state: LoopState, event: Event, ctx: Context) -> None:
        """Expire windows, step every partial match the event can change, then the start.

        Each of the state's three lists is visited only when the event can wake its partial
        matches; the visited ones are merged into the general plan's visiting order.
        """
        t = event.time
        window = self.window
        hot, cold, last = state.hot, state.cold, state.last
        if window is not None and (
            (hot and hot[0].start_ts + window <= t)
            or (cold and cold[0].start_ts + window <= t)
            or (last and last[0].start_ts + window <= t)
        ):
            self.advance(state, t, ctx)  # why: some partial match's window has passed
            hot, cold, last = state.hot, state.cold, state.last
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
            return  # why: no partial match can change and the event cannot start one
        # the visited lists, merged into one visiting order (a list woken alone is already sorted)
        if visit_cold:
            runs = (
                sorted(hot + cold + last, key=by_start)
                if visit_last
                else sorted(hot + cold, key=by_start)
                if hot
                else cold
            )
        elif visit_last:
            runs = sorted(hot + last, key=by_start) if hot else last
        else:
            runs = hot
        new_hot: list[LoopRun] = []
        new_cold = [] if visit_cold else cold
        new_last = [] if visit_last else last
        fresh: list[LoopRun] = []
        done: list[Done] = []
        self._step_all(state, runs, event, ctx, (new_hot, new_cold, new_last, fresh), done)
        if starts and self.start_pred(event, None):
            self._start(state, event, ctx, new_cold, fresh)
        if window is not None:
            for run in fresh:
                self._fresh(state, run, ctx)
        # Successors get new run ids, so a list that received any must be re-sorted (nearly sorted).
        new_hot.sort(key=by_start)
        new_cold.sort(key=by_start)
        new_last.sort(key=by_start)
        state.hot, state.cold, state.last = new_hot, new_cold, new_last
        for inst, events in done:
            self._emit(inst, "match", t, events, ctx)
        if self.cap is not None and len(new_hot) + len(new_cold) + len(new_last) > self.cap:
            self._cap(state, ctx, self.cap)

    def _step_all(
        self, state: LoopState, runs: list[LoopRun], event: Event, ctx: Context,
        out: tuple[list[LoopRun], list[LoopRun], list[LoopRun], list[LoopRun]], done: list[Done],
    ) -> None:  # fmt: skip
        """Step each visited partial match; successors go to ``out`` (hot, cold, last, fresh)."""
        new_hot, new_cold, new_last, fresh = out
        t, typ = event.time, event.type
        wakes, take_pred, last_pred, take_ctx = self.wakes, self.take_pred, self.last_pred, self.take_ctx
        tracing = ctx.tracing
        for run in runs:
            code = run.code
            if code == LAST:
                if last_pred(event, None):  # why: a match (its rid is used, as in the general plan)
                    state.next_rid += 1
                    self._complete(run.inst, run.events, event, ctx, done)
                else:
                    new_last.append(run)
                continue
            w = wakes[code]
            if w is not None and typ not in w:
                (new_hot if code == LOOP else new_cold).append(run)  # why: the type cannot change it
                continue
            took = take_pred(event, LoopContext(self, run, event) if take_ctx else None)
            if code == LOOP:  # why: in the loop both branches live (take or skip; leave the loop)
                rid = state.next_rid
                state.next_rid = rid + 2
                taken, prev_ts = run.events, run.prev_ts
                if took:  # the run itself becomes the successor that took the event
                    run.rid, run.prev_ts = rid, t
                    run.events, run.aggs = (*taken, event), self._take_loop(run.aggs, event)
                    new_hot.append(run)
                    if tracing:
                        ctx.trace(
                            TraceKind.EXTENDED, run.inst, self.stages[1], event.seq, {"state": self.loop_name}
                        )
                else:
                    run.rid, run.code = rid, GAP
                    new_cold.append(run)
                fresh.append(run)
                if last_pred(event, None):
                    self._complete(run.inst, taken, event, ctx, done)
                else:
                    wait = LoopRun(run.start_id, rid + 1, LAST, run.start_ts, prev_ts, run.inst, taken, ())
                    new_last.append(wait)
                    fresh.append(wait)
            elif took:  # why: entry states and the gap move one step towards the loop
                rid = state.next_rid
                state.next_rid = rid + 1
                if tracing:
                    target = self.loop_name if code == GAP else self.entry_target[code]
                    ctx.trace(TraceKind.EXTENDED, run.inst, self.stages[1], event.seq, {"state": target})
                run.rid, run.code, run.prev_ts = rid, LOOP if code <= 1 else code - 1, t
                run.events, run.aggs = (*run.events, event), self._take_loop(run.aggs, event)
                (new_hot if code <= 1 else new_cold).append(run)
                fresh.append(run)
            else:
                new_cold.append(run)

    def _start(
        self, state: LoopState, event: Event, ctx: Context, cold: list[LoopRun], fresh: list[LoopRun]
    ) -> None:
        """The event takes the first stage: a new partial match."""
        inst = ctx.new_instance()
        rid = state.next_rid
        state.next_rid = rid + 1
        if ctx.tracing:
            ctx.trace(TraceKind.STARTED, inst, self.stages[0], event.seq, {"state": self.entry_name})
        t = event.time
        aggs = self.aggs.take((), self.stages[0], event)
        run = LoopRun((t, event.seq), rid, self.n, t, t, inst, (event,), aggs)
        cold.append(run)
        fresh.append(run)

    # ------------------------------------------------------------------ time
    def advance(self, state: LoopState, t: Time, ctx: Context) -> None:
        """Advance the key's time to ``t``: partial matches whose window passed time out."""
        if state.time is None or t > state.time:
            state.time = t
        window = self.window
        if window is None:
            return
        report = self.emit_timeouts or ctx.tracing  # why: else nothing reads the expired
        expired: list[LoopRun] = []
        for runs in (state.hot, state.cold, state.last):
            k = 0
            while k < len(runs) and runs[k].start_ts + window <= t:
                k += 1
            if k:
                if report:
                    expired += runs[:k]
                del runs[:k]
        if expired:
            expired.sort(key=by_start)
            self._time_out(self._expire(expired, ctx), window, ctx)

    def match_channels(self, n: int) -> tuple[str, ...]:
        """The channels of a match of ``n`` events (a, b, ..., b, c)."""
        return (*self.stages_of(n - 1)[: n - 1], self.stages[2])

    def _emit(self, inst: int, kind: str, t: Time, events: tuple[Event, ...], ctx: Context) -> None:
        n = len(events)
        channels = self.match_channels(n) if kind == "match" else tuple(self.stages_of(n)[:n])
        self._detect(inst, kind, t, events, channels, ctx)

    def _cap(self, state: LoopState, ctx: Context, cap: int) -> None:
        runs = sorted(state.hot + state.cold + state.last, key=by_start)
        excess = len(runs) - cap
        dropped = runs[:excess]
        kept = runs[excess:]
        state.hot = [r for r in kept if r.code == LOOP]
        state.cold = [r for r in kept if r.code != LOOP and r.code != LAST]
        state.last = [r for r in kept if r.code == LAST]
        self._drop(state, dropped, ctx, cap, stacklevel=3)
