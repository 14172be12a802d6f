"""The fast path for linear patterns of single-event stages (an implementation detail of the matcher).

A pattern whose stages each take exactly one event (no quantifier, group, negation, ``until``,
per-stage previous-event window or aggregate), with conditions that read only the event, after-match
skip ``no_skip``, ``skip_to_next`` or ``skip_past_last_event`` and the default (indexed) order,
compiles to an NFA that is a chain: state ``i``
has one ``TAKE`` edge to state ``i + 1`` and, depending on the stage's contiguity, no ``IGNORE``
edge (``next``: any other event kills the partial match), ``IGNORE`` on ``NOT where``
(``followedBy``) or ``IGNORE`` always (``followedByAny``). Every partial match then has exactly one
path, so the shared buffer and Dewey versions are not needed: a partial match is the tuple of the
events it took. :class:`LinearPlan` steps such partial matches directly and reproduces the general
matcher's observable behaviour exactly: the same detections in the same order (instance ids,
timeouts), trace records, timer requests, ``max_partial_matches`` pruning and warnings.

Partial matches live in ``NFAState.linear`` as lists ``[start_id, rid, stage index, start_ts,
prev_ts, instance, events]``, kept sorted by ``(start_id, rid)`` -- the general matcher's visiting
and expiry order -- so plain list comparison sorts them. Under a skip strategy, completed matches
held back until no earlier partial match is alive wait in ``NFAState.linear_done`` as
``(completion key, instance, events)``, in the general matcher's emission order.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

from workbench.engine.detection import Detection, TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.nfa.compiler import Action, CompiledNFA, Kind
from workbench.engine.nfa.conditions import TRUE, Not, compile_predicate, needs_context
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.state import NFAState
from workbench.engine.nfa.trace import cap_detail, negation_detail, skip_detail, strict_detail

__all__ = ["LinearPlan"]

STRICT, RELAXED, ANY = 0, 1, 2
_TIMER = "nfa-window"
_SKIPS = ("no_skip", "skip_to_next", "skip_past_last_event")

#: one partial match: [start_id, rid, stage index, start_ts, prev_ts, instance, events]
LinearRun = list[Any]


class LinearPlan:
    """The compiled chain of a linear pattern; steps ``NFAState.linear`` for one key.

    Attributes:
        n: number of stages.
        window: first-and-last window (``None``: none).
    """

    def __init__(
        self,
        pattern: SequencePattern,
        nfa: CompiledNFA,
        chain: list[str],
        wakes: Mapping[str, frozenset[str] | None],
        start_wakes: frozenset[str] | None,
    ) -> None:
        self.name = pattern.name
        self.emit_timeouts = pattern.emit_timeouts
        self.cap = pattern.max_partial_matches
        self.window = nfa.window_ms
        self.skip = pattern.skip.kind
        self.n = len(chain)
        states = nfa.states
        self.stage = [states[s].stage for s in chain]
        self.preds: list[Callable[..., Any]] = []
        self.kinds: list[int] = []
        self.targets: list[str] = []
        #: per stage: the notFollowedBy checks as (PROCEED predicate, STOP take predicate, STOP state,
        #: its stage) -- a partial match that meets one dies (trace VIOLATED)
        self.stops: list[tuple[tuple[Callable[..., Any], Callable[..., Any], str, str], ...]] = []
        for s in chain:
            take = next(tr for tr in states[s].transitions if tr.action == Action.TAKE)
            ignore = [tr for tr in states[s].transitions if tr.action == Action.IGNORE]
            self.preds.append(compile_predicate(take.cond))
            self.targets.append(take.target)
            self.kinds.append(STRICT if not ignore else ANY if ignore[0].cond is TRUE else RELAXED)
            checks = []
            for tr in states[s].transitions:
                if tr.action == Action.PROCEED:
                    stop = states[tr.target]
                    checks.append(
                        (
                            compile_predicate(tr.cond),
                            compile_predicate(stop.transitions[0].cond),
                            stop.name,
                            stop.stage,
                        )
                    )
            self.stops.append(tuple(checks))
        #: per prefix length: positions grouped stage by stage (a detection lists each stage's events
        #: together, in the order stages first appear: groups repeat stage names) and their channels
        self.layout: list[tuple[tuple[int, ...], tuple[str, ...]]] = []
        for k in range(self.n + 1):
            groups: dict[str, list[int]] = {}
            for j in range(k):
                groups.setdefault(self.stage[j], []).append(j)
            order = tuple(j for js in groups.values() for j in js)
            self.layout.append((order, tuple(self.stage[j] for j in order)))
        index = {name: i for i, name in enumerate(nfa.stage_names)}
        #: per position: the stage's index in pattern order (completion keys under a skip strategy)
        self.stage_index = [index[s] for s in self.stage]
        #: per stage: event types that can change a partial match waiting there (None: all)
        self.wakes = [wakes[s] for s in chain]
        self.start_wakes = start_wakes

    @classmethod
    def build(
        cls,
        pattern: SequencePattern,
        nfa: CompiledNFA,
        wakes: Mapping[str, frozenset[str] | None],
        start_wakes: frozenset[str] | None,
    ) -> LinearPlan | None:
        """The plan, or ``None`` when the pattern is not a plain chain (the general NFA runs it)."""
        if pattern.skip.kind not in _SKIPS or pattern.flink_order or pattern.aggregates or nfa.window_times:
            return None
        states = nfa.states
        chain: list[str] = []
        name = nfa.start
        stops: set[str] = set()
        while states[name].kind != Kind.FINAL:
            st = states[name]
            if st.kind != (Kind.START if not chain else Kind.NORMAL) or name in chain:
                return None
            trs = st.transitions
            if not trs or trs[0].action != Action.TAKE or needs_context(trs[0].cond):
                return None
            take, rest = trs[0], list(trs[1:])
            if rest and rest[0].action == Action.IGNORE:
                ign = rest.pop(0)
                if not chain or ign.target != name:
                    return None
                if ign.cond is not TRUE and not (isinstance(ign.cond, Not) and ign.cond.inner is take.cond):
                    return None
            for tr in rest:  # notFollowedBy before this stage: PROCEED to a STOP state
                if tr.action != Action.PROCEED or not chain or needs_context(tr.cond):
                    return None
                stop = states[tr.target]
                if stop.kind != Kind.STOP or len(stop.transitions) != 1:
                    return None
                stop_take = stop.transitions[0]
                if stop_take.action != Action.TAKE or stop_take.target != stop.name:
                    return None
                if needs_context(stop_take.cond):
                    return None
                stops.add(stop.name)
            chain.append(name)
            name = take.target
        if not chain or len(states) != len(chain) + 1 + len(stops):
            return None
        return cls(pattern, nfa, chain, wakes, start_wakes)

    # ------------------------------------------------------------------ per event
    def process(self, state: NFAState, event: Event, ctx: Context) -> None:
        """Expire windows, then step every partial match the event can change, then start one."""
        t = event.time
        runs = state.linear
        window = self.window
        if runs and window is not None and runs[0][3] + window <= t:
            self.advance(state, t, ctx)
        elif state.time is None or t > state.time:
            state.time = t
        typ = event.type
        sw = self.start_wakes
        starts = sw is None or typ in sw
        if not runs and not starts:
            return
        preds, kinds, wakes, stops = self.preds, self.kinds, self.wakes, self.stops
        last = self.n - 1
        tracing = ctx.tracing
        new: list[LinearRun] = []
        done: list[tuple[int, tuple[Event, ...]]] = []
        for run in runs:
            i = run[2]
            w = wakes[i]
            if w is not None and typ not in w:
                new.append(run)
                continue
            if stops[i]:
                self._step_guarded(state, run, event, ctx, new, done)
                continue
            if preds[i](event, None):
                rid = state.next_rid
                events = (*run[6], event)
                if tracing:
                    ctx.trace(
                        TraceKind.EXTENDED, run[5], self.stage[i], event.seq, {"state": self.targets[i]}
                    )
                if i == last:
                    done.append((run[5], events))
                    state.next_rid = rid + 1
                else:
                    succ = [run[0], rid, i + 1, run[3], t, run[5], events]
                    state.next_rid = rid + 1
                    new.append(succ)
                    self._fresh(state, succ, ctx)
                if kinds[i] == ANY:
                    rid = state.next_rid
                    state.next_rid = rid + 1
                    copy = [run[0], rid, i, run[3], run[4], run[5], run[6]]
                    new.append(copy)
                    self._fresh(state, copy, ctx)
            elif kinds[i] != STRICT:
                new.append(run)
            elif tracing:
                ctx.trace(TraceKind.PRUNED, run[5], None, event.seq, strict_detail(event.seq, self.stage[i]))
        if starts and preds[0](event, None):
            inst = ctx.new_instance()
            rid = state.next_rid
            state.next_rid = rid + 1
            if tracing:
                ctx.trace(TraceKind.STARTED, inst, self.stage[0], event.seq, {"state": self.targets[0]})
            if last == 0:
                done.append((inst, (event,)))
            else:
                run = [(t, event.seq), rid, 1, t, t, inst, (event,)]
                new.append(run)
                self._fresh(state, run, ctx)
        new.sort()
        state.linear = new
        if self.skip != "no_skip":
            self._release(state, done, t, ctx)
        else:
            for inst, events in done:
                self._emit(inst, "match", t, events, ctx)
        cap = self.cap
        if cap is not None and len(new) > cap:
            self._cap(state, ctx, cap)

    def _step_guarded(
        self,
        state: NFAState,
        run: LinearRun,
        event: Event,
        ctx: Context,
        new: list[LinearRun],
        done: list[tuple[int, tuple[Event, ...]]],
    ) -> None:
        """Step a partial match whose stage has notFollowedBy checks, edge by edge like the NFA.

        The general matcher evaluates the stage's edges in order (TAKE, IGNORE, each PROCEED to a
        STOP state), then the STOP states' TAKE edges last-pushed first; a STOP reached kills the
        partial match's other successors, but a match completed by the same event is still emitted.
        """
        i = run[2]
        seq = event.seq
        take = self.preds[i](event, None)
        hit = [check for check in self.stops[i] if check[0](event, None)]
        stopped = [check for check in reversed(hit) if check[1](event, None)]
        keep: list[LinearRun] = []
        t = event.time
        if take:
            if ctx.tracing:
                ctx.trace(TraceKind.EXTENDED, run[5], self.stage[i], seq, {"state": self.targets[i]})
            rid = state.next_rid
            state.next_rid = rid + 1
            events = (*run[6], event)
            if i == self.n - 1:
                done.append((run[5], events))
            else:
                keep.append([run[0], rid, i + 1, run[3], t, run[5], events])
        kind = self.kinds[i]
        if kind == ANY or (kind == RELAXED and not take):
            if take or stopped:  # the version changes: a new partial match
                rid = state.next_rid
                state.next_rid = rid + 1
                keep.append([run[0], rid, i, run[3], run[4], run[5], run[6]])
            else:
                keep.append(run)
        for _, _, stop_state, stop_stage in stopped:
            state.next_rid += 1
            if ctx.tracing:
                ctx.trace(TraceKind.EXTENDED, run[5], stop_stage, seq, {"state": stop_state})
        if stopped:
            if ctx.tracing:
                ctx.trace(TraceKind.VIOLATED, run[5], None, seq)
                ctx.trace(TraceKind.PRUNED, run[5], None, seq, negation_detail(seq))
            return
        if not take and not keep and ctx.tracing:
            ctx.trace(TraceKind.PRUNED, run[5], None, seq, strict_detail(seq, self.stage[i]))
        for r in keep:
            new.append(r)
            if r is not run:
                self._fresh(state, r, ctx)

    def _fresh(self, state: NFAState, run: LinearRun, ctx: Context) -> None:
        """A new partial match: request a timer at its window deadline, as the general matcher does."""
        window = self.window
        if window is not None and run[4] == run[3]:
            deadline = run[3] + window
            if state.scheduled != deadline:
                state.scheduled = deadline
                ctx.schedule(deadline, _TIMER)

    def advance(self, state: NFAState, t: int | float, ctx: Context) -> None:
        """Advance the key's time to ``t``: partial matches whose window passed time out."""
        if state.time is None or t > state.time:
            state.time = t
        runs, window = state.linear, self.window
        if window is None or not runs or runs[0][3] + window > t:
            return
        k = 0
        while k < len(runs) and runs[k][3] + window <= t:
            k += 1
        expired = runs[:k]
        del runs[:k]
        timeouts = []
        for run in expired:
            if self.emit_timeouts:
                timeouts.append(run)
            elif ctx.tracing:
                ctx.trace(TraceKind.TIMED_OUT, run[5])
        if self.skip != "no_skip":
            self._release(state, [], t, ctx)
        for run in timeouts:
            self._emit(run[5], "timeout", run[3] + window, run[6], ctx)

    def _release(
        self, state: NFAState, done: list[tuple[int, tuple[Event, ...]]], t: int | float, ctx: Context
    ) -> None:
        """Under a skip strategy: emit held-back matches once no earlier partial match is alive.

        The order is the general matcher's: earliest start, earliest last event, then the smallest
        ``(event id, stage index)`` sequence; each emitted match prunes the partial matches (and held
        matches) that start at or before its first (``skip_to_next``) or last
        (``skip_past_last_event``) event.
        """
        held = state.linear_done
        if done:
            for inst, events in done:
                seq = tuple(((e.time, e.seq), self.stage_index[j]) for j, e in enumerate(events))
                held.append((((events[0].time, events[0].seq), seq[-1][0], seq), inst, events))
            held.sort(key=_first)
        runs = state.linear
        while held:
            key, inst, events = held[0]
            if runs and runs[0][0] < key[0]:
                break
            del held[0]
            ids = [eid for eid, _ in key[2]]
            pruning = max(ids) if self.skip == "skip_past_last_event" else min(ids)
            k = 0
            while k < len(runs) and runs[k][0] <= pruning:
                k += 1
            if k:
                if ctx.tracing:
                    for run in runs[:k]:
                        ctx.trace(TraceKind.PRUNED, run[5], None, None, skip_detail(self.skip))
                del runs[:k]
            if ctx.tracing:
                for h in held:
                    if h[0][0] <= pruning:
                        ctx.trace(TraceKind.PRUNED, h[1], None, None, skip_detail(self.skip))
            held[:] = [h for h in held if not h[0][0] <= pruning]
            self._emit(inst, "match", t, events, ctx)

    def _emit(self, inst: int, kind: str, t: int | float, events: tuple[Event, ...], ctx: Context) -> None:
        order, channels = self.layout[len(events)]
        if order != tuple(range(len(events))):
            events = tuple(events[j] for j in order)
        ctx.emit(Detection(self.name, ctx.key, inst, kind, t, events, channels))
        if ctx.tracing:
            ctx.trace(TraceKind.DETECTED if kind == "match" else TraceKind.TIMED_OUT, inst)

    def _cap(self, state: NFAState, ctx: Context, cap: int) -> None:
        runs = state.linear
        excess = len(runs) - cap
        dropped = runs[:excess]
        del runs[:excess]
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


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]
