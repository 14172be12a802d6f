"""The linear plan: chains of single-event stages, one path per partial match.

A pattern whose stages each take exactly one event (no quantifier, group, negation, ``until``,
per-stage previous-event window or aggregate), with conditions that read only the event, after-match
skip ``no_skip``, ``skip_to_next`` or ``skip_past_last_event`` and the default (indexed) order,
compiles to an NFA that is a chain: state ``i`` has one ``TAKE`` edge to state ``i + 1`` and,
depending on the stage's contiguity, no ``IGNORE`` edge (``next``: any other event kills the
partial match), ``IGNORE`` on ``NOT where`` (``followedBy``) or ``IGNORE`` always
(``followedByAny``). Every partial match then has exactly one path, so the shared buffer and Dewey
versions are not needed: a partial match (:class:`LinearRun`) holds the events it took.
:class:`LinearPlan` steps them directly and reproduces the general plan's observable behaviour
exactly: the same detections in the same order (instance ids, timeouts), trace records, timer
requests, ``max_partial_matches`` pruning and warnings.

Partial matches live in :attr:`LinearState.runs`, kept sorted by ``(start_id, rid)`` -- the general
plan's visiting and expiry order. Under a skip strategy, completed matches held back until no
earlier partial match is alive wait in :attr:`LinearState.held`, in the general plan's emission
order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.engine.detection import TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context, Kernel
from workbench.engine.nfa.analysis import Analysis
from workbench.engine.nfa.buffer import EventId, Time
from workbench.engine.nfa.chain import WINDOW_TIMER, ChainPlan, ChainState, Done, Run, by_start
from workbench.engine.nfa.conditions import TRUE, Cond, Predicate, compile_predicate
from workbench.engine.nfa.graph import Action, CompiledNFA
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.shapes import linear_chain
from workbench.engine.nfa.skip import CompletionKey, HeldMatch, SkipRule, Step, completion_key, trace_held
from workbench.engine.nfa.trace import negation_detail, skip_detail, strict_detail

__all__ = ["ANY", "RELAXED", "STRICT", "WINDOW_TIMER", "LinearPlan", "LinearRun", "LinearState"]

STRICT, RELAXED, ANY = 0, 1, 2
_SKIPS = ("no_skip", "skip_to_next", "skip_past_last_event")
#: a notFollowedBy check: (PROCEED predicate, STOP take predicate, STOP state, its stage)
StopCheck = tuple[Predicate, Predicate, str, str]


@dataclass(slots=True, eq=False)
class LinearRun:
    """One partial match of a linear pattern.

    Attributes:
        start_id: id of its first event; ``(start_id, rid)`` orders partial matches.
        rid: run id (a partial match that changes gets a new one, as in the general plan).
        stage: index of the stage it waits for.
        start_ts / prev_ts: times of its first and last event.
        inst: detection instance id.
        events: the events taken so far.
    """

    start_id: EventId
    rid: int
    stage: int
    start_ts: Time
    prev_ts: Time
    inst: int
    events: tuple[Event, ...]

    def copy(self, rid: int) -> LinearRun:
        """The same partial match under a new run id (a branch)."""
        return LinearRun(self.start_id, rid, self.stage, self.start_ts, self.prev_ts, self.inst, self.events)


@dataclass(slots=True, eq=False)
class LinearState(ChainState):
    """Everything one key holds for a linear pattern.

    Attributes:
        runs: live partial matches in ``(start_id, rid)`` order.
        held: completed matches held back by a skip strategy.
        next_rid / dropped / time / scheduled: see :class:`~workbench.engine.nfa.chain.ChainState`.
    """

    runs: list[LinearRun] = field(default_factory=list)
    held: list[HeldMatch] = field(default_factory=list)

    @property
    def partial_matches(self) -> int:
        """Number of live partial matches."""
        return len(self.runs)


class LinearPlan(ChainPlan[LinearState]):
    """The compiled chain of a linear pattern; steps one key's :class:`LinearState`.

    Attributes:
        n: number of stages.
        window: first-and-last window (``None``: none).
    """

    def __init__(self, pattern: SequencePattern, nfa: CompiledNFA, chain: list[str], facts: Analysis) -> None:
        super().__init__(pattern, nfa)
        self.skip = SkipRule(pattern.skip, pattern.name)
        self.n = len(chain)
        states = nfa.states
        self.stage = [states[s].stage for s in chain]
        self.preds: list[Predicate] = []
        #: per stage: the TAKE condition's tree (the code generator inlines it)
        self.conds: list[Cond] = []
        self.kinds: list[int] = []
        self.targets: list[str] = []
        #: per stage: its notFollowedBy checks -- a partial match that meets one dies (VIOLATED)
        self.stops: list[tuple[StopCheck, ...]] = []
        #: per stage: the trees of its notFollowedBy checks (PROCEED, STOP take), for the generator
        self.stop_conds: list[tuple[tuple[Cond, Cond], ...]] = []
        for s in chain:
            take = next(tr for tr in states[s].transitions if tr.action == Action.TAKE)
            ignore = [tr for tr in states[s].transitions if tr.action == Action.IGNORE]
            self.conds.append(take.cond)
            self.preds.append(compile_predicate(take.cond))
            self.targets.append(take.target)
            self.kinds.append(STRICT if not ignore else ANY if ignore[0].cond is TRUE else RELAXED)
            checks, trees = [], []
            for tr in states[s].transitions:
                if tr.action == Action.PROCEED:
                    stop = states[tr.target]
                    stop_cond = stop.transitions[0].cond
                    checks.append(
                        (compile_predicate(tr.cond), compile_predicate(stop_cond), stop.name, stop.stage)
                    )
                    trees.append((tr.cond, stop_cond))
            self.stops.append(tuple(checks))
            self.stop_conds.append(tuple(trees))
        #: stages before the last with ``followedByAny``: each splits a partial match that takes an event
        self.forks = sum(k == ANY for k in self.kinds[1:-1])
        #: per prefix length: positions grouped stage by stage (a detection lists each stage's events
        #: together, in the order stages first appear: groups repeat stage names) and their channels
        self.layout: list[tuple[tuple[int, ...], tuple[str, ...]]] = []
        for k in range(self.n + 1):
            groups: dict[str, list[int]] = {}
            for j in range(k):
                groups.setdefault(self.stage[j], []).append(j)
            order = tuple(j for js in groups.values() for j in js)
            self.layout.append((order, tuple(self.stage[j] for j in order)))
        #: stage name -> its index in pattern order (completion keys under a skip strategy)
        self.stage_index = {name: i for i, name in enumerate(nfa.stage_names)}
        #: per stage: event types that can change a partial match waiting there (None: all)
        self.wakes = [facts.wakes[s] for s in chain]
        self.start_wakes = facts.start_wakes

    @classmethod
    def build(cls, pattern: SequencePattern, nfa: CompiledNFA, facts: Analysis) -> LinearPlan | None:
        """The plan, or ``None`` when the pattern is not a plain chain."""
        if pattern.skip.kind not in _SKIPS or pattern.flink_order or pattern.aggregates or nfa.window_times:
            return None
        chain = linear_chain(nfa)
        return None if chain is None else cls(pattern, nfa, chain, facts)

    def new_state(self) -> LinearState:
        """A fresh per-key state."""
        return LinearState()

    def compiled_step(self) -> Callable[[LinearState, Event, Context], None]:
        """A generated ``process`` specialised to this plan (:mod:`~workbench.engine.nfa.codegen`)."""
        from workbench.engine.nfa.codegen import linear_step

        return linear_step(self)

    def kernel(self, prefix: str) -> Kernel:
        """The step as source for the engine's fused loop (names of its constants start with ``prefix``)."""
        from workbench.engine.nfa.codegen import linear_kernel

        return linear_kernel(self, prefix)

    def is_idle(self, state: LinearState) -> bool:
        """Nothing in flight."""
        return not state.runs and not state.held

    # ------------------------------------------------------------------ per event
    def process(self, state: LinearState, event: Event, ctx: Context) -> None:
        """Expire windows, then step every partial match the event can change, then start one."""
        t = event.time
        runs = state.runs
        window = self.window
        if runs and window is not None and runs[0].start_ts + window <= t:
            self.advance(state, t, ctx)  # why: the oldest partial match's window has passed
        elif state.time is None or t > state.time:
            state.time = t
        typ = event.type
        sw = self.start_wakes
        starts = sw is None or typ in sw
        if not runs and not starts:
            return  # why: nothing to step and the event cannot start a match
        preds, kinds, wakes, stops = self.preds, self.kinds, self.wakes, self.stops
        last = self.n - 1
        tracing = ctx.tracing
        new: list[LinearRun] = []
        done: list[Done] = []
        for run in runs:
            i = run.stage
            w = wakes[i]
            if w is not None and typ not in w:
                new.append(run)  # why: the event's type cannot change this partial match
                continue
            if stops[i]:
                self._step_guarded(state, run, event, ctx, new, done)  # why: notFollowedBy checks
                continue
            if preds[i](event, None):
                rid = state.next_rid
                state.next_rid = rid + 1
                events = (*run.events, event)
                if tracing:
                    ctx.trace(
                        TraceKind.EXTENDED, run.inst, self.stage[i], event.seq, {"state": self.targets[i]}
                    )
                if kinds[i] == ANY:  # why: followedByAny also keeps the partial match as it was
                    self._take_and_keep(state, run, rid, i == last, t, events, ctx, new, done)
                elif i == last:
                    done.append((run.inst, events))
                else:  # the taking partial match is the successor: update it in place
                    run.rid, run.stage, run.prev_ts, run.events = rid, i + 1, t, events
                    new.append(run)
                    self._fresh(state, run, ctx)
            elif kinds[i] != STRICT:
                new.append(run)  # why: relaxed contiguity ignores a non-matching event
            elif tracing:
                ctx.trace(
                    TraceKind.PRUNED, run.inst, None, event.seq, strict_detail(event.seq, self.stage[i])
                )
        if starts and preds[0](event, None):
            self._start(state, event, ctx, new, done)
        new.sort(key=by_start)
        state.runs = new
        self._finish(state, done, t, ctx)

    def _take_and_keep(
        self, state: LinearState, run: LinearRun, rid: int, completes: bool, t: Time,
        events: tuple[Event, ...], ctx: Context, new: list[LinearRun], done: list[Done],
    ) -> None:  # fmt: skip
        """``followedByAny``: the successor (or match) under ``rid``, then the run under a fresh id."""
        if completes:
            done.append((run.inst, events))
        else:
            succ = LinearRun(run.start_id, rid, run.stage + 1, run.start_ts, t, run.inst, events)
            new.append(succ)
            self._fresh(state, succ, ctx)
        keep = state.next_rid
        state.next_rid = keep + 1
        run.rid = keep
        new.append(run)
        self._fresh(state, run, ctx)

    def _start(
        self, state: LinearState, event: Event, ctx: Context, new: list[LinearRun], done: list[Done]
    ) -> None:
        """The event takes the first stage: a new partial match (or a match of one stage)."""
        inst, rid = self._begin(state, ctx)
        t = event.time
        if ctx.tracing:
            ctx.trace(TraceKind.STARTED, inst, self.stage[0], event.seq, {"state": self.targets[0]})
        if self.n == 1:
            done.append((inst, (event,)))
        else:
            run = LinearRun((t, event.seq), rid, 1, t, t, inst, (event,))
            new.append(run)
            self._fresh(state, run, ctx)

    def _finish(self, state: LinearState, done: list[Done], t: Time, ctx: Context) -> None:
        """Emit (or hold back) the completed matches, then apply ``max_partial_matches``."""
        if self.skip.holds:
            self._release(state, done, t, ctx)
        else:
            for inst, events in done:
                self._emit(inst, "match", t, events, ctx)
        cap = self.cap
        if cap is not None and len(state.runs) > cap:
            self._cap(state, ctx, cap)

    def _step_guarded(
        self, state: LinearState, run: LinearRun, event: Event, ctx: Context, new: list[LinearRun],
        done: list[Done],
    ) -> None:  # fmt: skip
        """Step a partial match whose stage has notFollowedBy checks, edge by edge like the NFA.

        The general plan evaluates the stage's edges in order (TAKE, IGNORE, each PROCEED to a
        STOP state), then the STOP states' TAKE edges last-pushed first; a STOP reached kills the
        partial match's other successors, but a match completed by the same event is still emitted.
        """
        i = run.stage
        seq = event.seq
        take = self.preds[i](event, None)
        hit = [check for check in self.stops[i] if check[0](event, None)]
        stopped = [check for check in reversed(hit) if check[1](event, None)]
        keep: list[LinearRun] = []
        if take:
            if ctx.tracing:
                ctx.trace(TraceKind.EXTENDED, run.inst, self.stage[i], seq, {"state": self.targets[i]})
            rid = state.next_rid
            state.next_rid = rid + 1
            events = (*run.events, event)
            if i == self.n - 1:
                done.append((run.inst, events))
            else:
                keep.append(LinearRun(run.start_id, rid, i + 1, run.start_ts, event.time, run.inst, events))
        kind = self.kinds[i]
        if kind == ANY or (kind == RELAXED and not take):
            if take or stopped:  # the version changes: a new partial match
                rid = state.next_rid
                state.next_rid = rid + 1
                keep.append(run.copy(rid))
            else:
                keep.append(run)
        for _, _, stop_state, stop_stage in stopped:
            state.next_rid += 1
            if ctx.tracing:
                ctx.trace(TraceKind.EXTENDED, run.inst, stop_stage, seq, {"state": stop_state})
        if stopped:
            if ctx.tracing:
                ctx.trace(TraceKind.VIOLATED, run.inst, None, seq)
                ctx.trace(TraceKind.PRUNED, run.inst, None, seq, negation_detail(seq))
            return
        if not take and not keep and ctx.tracing:
            ctx.trace(TraceKind.PRUNED, run.inst, None, seq, strict_detail(seq, self.stage[i]))
        for r in keep:
            new.append(r)
            if r is not run:
                self._fresh(state, r, ctx)

    # ------------------------------------------------------------------ time
    def _fresh(self, state: LinearState, run: Run, ctx: Context) -> None:
        """A new partial match asks for a timer at its window deadline.

        When nothing observes the end of a window (no timeouts, no trace, no held-back matches),
        expiry only releases memory: the key then keeps one timer, at its earliest deadline
        (:meth:`on_timer` re-arms it), instead of one per partial match. A partial match whose
        window passed is still dropped before the key's next event is stepped, as always.
        """
        window = self.window
        if window is None or run.prev_ts != run.start_ts:
            return
        if self.emit_timeouts or self.skip.holds or ctx.tracing:
            super()._fresh(state, run, ctx)
        elif state.scheduled is None:
            state.scheduled = run.start_ts + window
            ctx.schedule(state.scheduled, WINDOW_TIMER)

    def on_timer(self, state: LinearState, time: Time, token: object, ctx: Context) -> None:
        """A window deadline passed with no event: advance time to it (and re-arm a key's timer)."""
        self.advance(state, time, ctx, timer=True)
        scheduled, window = state.scheduled, self.window
        if scheduled is not None and scheduled <= time:
            state.scheduled = None
            if state.runs and window is not None:  # why: the partial matches left have no timer
                state.scheduled = state.runs[0].start_ts + window
                ctx.schedule(state.scheduled, WINDOW_TIMER)

    def advance(self, state: LinearState, t: Time, ctx: Context, *, timer: bool = False) -> None:
        """Advance the key's time to ``t``: partial matches whose window passed time out.

        Held-back matches this releases carry ``t``, or by a ``timer`` the watermark that passed.
        """
        if state.time is None or t > state.time:
            state.time = t
        runs, window = state.runs, self.window
        if window is None or not runs or runs[0].start_ts + window > t:
            return
        k, n = 1, len(runs)
        while k < n and runs[k].start_ts + window <= t:
            k += 1
        timeouts: list[Run] = []
        if self.emit_timeouts or ctx.tracing:  # why: else nothing reports the expired
            timeouts = self._expire(runs[:k], ctx)
        del runs[:k]
        if state.held:  # why: a held match may have waited behind the expired
            self._release(state, [], ctx.release_time() if timer else t, ctx)
        if timeouts:
            self._time_out(timeouts, window, ctx)

    # ------------------------------------------------------------------ matches
    def _path(self, events: tuple[Event, ...]) -> list[Step]:
        stage = self.stage
        return [(stage[j], (e.time, e.seq)) for j, e in enumerate(events)]

    def _hold(self, state: LinearState, done: list[Done]) -> list[HeldMatch]:
        """Add the completed matches to the held ones, in emission order; return the new ones."""
        held = state.held
        index = self.stage_index
        new = []
        for inst, events in done:
            path = self._path(events)
            start = (events[0].time, events[0].seq)
            new.append(HeldMatch(completion_key(start, path[-1][1], path, index), inst, events, path))
        held.extend(new)
        if len(held) > 1:
            held.sort(key=_completion)
        return new

    def _release(self, state: LinearState, done: list[Done], t: Time, ctx: Context) -> None:
        """Under a skip strategy: emit held-back matches once no earlier partial match is alive.

        The order is the general plan's (:func:`~workbench.engine.nfa.skip.completion_key`); each
        emitted match prunes the partial matches (and held matches) that its skip rule discards.
        """
        runs, held = state.runs, state.held
        if len(done) == 1 and not held:  # why: one match and nothing waiting: no order to keep
            inst, events = done[0]
            if not runs or runs[0].start_id >= (events[0].time, events[0].seq):
                self._discharge(state, inst, events, self._path(events), t, ctx)
                return
        new = self._hold(state, done) if done else []
        while held:
            match = held[0]
            if runs and runs[0].start_id < match.start:
                break  # why: an earlier partial match may still complete first
            del held[0]
            self._discharge(state, match.inst, match.events, match.path, t, ctx)
        if new and held and ctx.tracing:  # why: only this event's matches still held
            fresh = {id(h) for h in new}
            behind = runs[0].inst if runs else None
            trace_held(ctx, [h.inst for h in held if id(h) in fresh], behind, self.skip.kind)

    def _discharge(
        self,
        state: LinearState,
        inst: int,
        events: tuple[Event, ...],
        path: list[Step],
        t: Time,
        ctx: Context,
    ) -> None:
        """Emit a released match after pruning what its skip rule discards (partial and held)."""
        runs, held, skip = state.runs, state.held, self.skip
        pruning = skip.pruning_id([path])
        assert pruning is not None
        k = 0
        while k < len(runs) and skip.prunes(runs[k].start_id, pruning):
            k += 1
        if k:
            if ctx.tracing:
                for run in runs[:k]:
                    ctx.trace(TraceKind.PRUNED, run.inst, None, ctx.cause, skip_detail(skip.kind))
            del runs[:k]
        if held:
            if ctx.tracing:
                for h in held:
                    if skip.prunes(h.start, pruning):
                        ctx.trace(TraceKind.PRUNED, h.inst, None, ctx.cause, skip_detail(skip.kind))
            held[:] = [h for h in held if not skip.prunes(h.start, pruning)]
        self._emit(inst, "match", t, events, ctx)

    def _emit(self, inst: int, kind: str, t: Time, events: tuple[Event, ...], ctx: Context) -> None:
        order, channels = self.layout[len(events)]
        if order != tuple(range(len(events))):
            events = tuple(events[j] for j in order)
        self._detect(inst, kind, t, events, channels, ctx)

    def _cap(self, state: LinearState, ctx: Context, cap: int) -> None:
        runs = state.runs
        excess = len(runs) - cap
        dropped = runs[:excess]
        del runs[:excess]
        self._drop(state, dropped, ctx, cap, stacklevel=4)


def _completion(held: HeldMatch) -> CompletionKey:
    return held.key
