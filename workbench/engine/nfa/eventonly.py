"""The event-only plan: Flink's NFA for patterns whose conditions read only the current event.

When no condition reads the partial match (no ``matched``, no aggregate, no previous-event
window), every partial match waiting in the same NFA state reacts to an event in the same way.
The plan therefore works out, once per state and event, which edges fire (the general plan's
``computeNextStates``, Dewey counts included) and applies that *template* to every partial match
waiting there. This is the shape of ``followedByAny`` with ``allowCombinations`` loops (P3any),
where one event can branch every partial match of a key; the general plan pays for run ids,
versions, index sets and heaps on each of them.

A partial match is a tuple ``(code, events, channels, prev_ts, inst)``; the partial matches with
the same first event form a :class:`Group` kept in the general plan's ``(start id, run id)``
order without run ids: in a visited group the ones that stay as they are keep their place, and
the new ones follow in creation order (they get the newest run ids there). Everything observable
is the general plan's: detections and their order, instance ids, emit times, timeouts, traces,
timers, the ``max_partial_matches`` cap and condition faults. Recognised on the compiled NFA
(:meth:`EventOnlyPlan.build`); anything else runs in the general plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.engine.detection import TraceKind, new_match
from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.nfa.analysis import Analysis
from workbench.engine.nfa.buffer import EventId, Time
from workbench.engine.nfa.chain import WINDOW_TIMER
from workbench.engine.nfa.conditions import (
    Cond,
    Const,
    Junction,
    Not,
    TypeIn,
    compile_predicate,
    needs_context,
)
from workbench.engine.nfa.general import final_after_proceed
from workbench.engine.nfa.graph import Action, CompiledNFA, Kind
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.trace import cap_detail, strict_detail, warn_cap

__all__ = ["EventOnlyPlan", "EventOnlyState", "Group"]

#: one partial match: (state code, events, channels, time of its last event, instance)
ERun = tuple[int, tuple[Event, ...], tuple[str, ...], Time, int]
#: what one fired edge does to a partial match: (op, target code, stage, target name, Final reached
#: after it through PROCEED edges, ``(stage,)``)
Op = tuple[int, int, str, str, bool, tuple[str]]
#: the partial match stays as it is / moves to the target unchanged / takes the event / takes the
#: event into Final
KEEP, MOVE, TAKE, DONE = 0, 1, 2, 3
_TAKE, _IGNORE, _PROCEED = int(Action.TAKE), int(Action.IGNORE), int(Action.PROCEED)
#: the most event types whose templates a plan keeps (others are worked out per event)
_MAX_TYPES = 256


def _by_type(cond: Cond) -> bool:
    """Whether the event's type alone decides ``cond`` (type filters and constants; cannot fail)."""
    if isinstance(cond, Const | TypeIn):
        return True
    if isinstance(cond, Not):
        return _by_type(cond.inner)
    if isinstance(cond, Junction):
        return _by_type(cond.left) and _by_type(cond.right)
    return False


@dataclass(slots=True, eq=False)
class Group:
    """The partial matches that share a first event, in the general plan's run-id order.

    Attributes:
        start_id / start_ts: id and time of the first event.
        runs: the partial matches.
        mask: bit ``code`` set when some partial match waits in NFA state ``code``.
    """

    start_id: EventId
    start_ts: Time
    runs: list[ERun]
    mask: int


@dataclass(slots=True, eq=False)
class EventOnlyState:
    """Everything one key holds for an event-only pattern.

    Attributes:
        groups: the groups of partial matches, in start order.
        live: number of partial matches.
        dropped: partial matches dropped because of ``max_partial_matches``.
        time: the latest time the state was advanced to.
        scheduled: the latest window deadline a timer was requested for.
    """

    groups: list[Group] = field(default_factory=list)
    live: int = 0
    dropped: int = 0
    time: Time | None = None
    scheduled: Time | None = None

    @property
    def partial_matches(self) -> int:
        """Number of live partial matches."""
        return self.live


class EventOnlyPlan:
    """A compiled NFA whose conditions read only the event; steps one key's :class:`EventOnlyState`."""

    def __init__(self, pattern: SequencePattern, nfa: CompiledNFA, facts: Analysis) -> None:
        self.name = pattern.name
        self.emit_timeouts = pattern.emit_timeouts
        self.cap = pattern.max_partial_matches
        self.window = nfa.window_ms
        self.facts = facts
        names = list(nfa.states)
        self.names = names
        self.code = {name: i for i, name in enumerate(names)}
        states = nfa.states
        self.final = [states[n].kind == Kind.FINAL for n in names]
        self.stage = [states[n].stage for n in names]
        self.edges = [
            tuple(
                (int(tr.action), tr.target, compile_predicate(tr.cond), states[tr.source].stage)
                for tr in st.transitions
            )
            for st in states.values()
        ]
        self.start = self.code[nfa.start]
        self.edges_of = {name: self.edges[i] for i, name in enumerate(names)}
        self.finals = frozenset(n for n in names if states[n].kind == Kind.FINAL)
        self.start_wakes = facts.start_wakes
        self._masks: dict[str, int] = {}
        #: every condition is decided by the event's type: templates are kept per type
        self.by_type = all(_by_type(tr.cond) for st in states.values() for tr in st.transitions)
        self._templates: dict[str, list[list[Op] | None]] = {}
        self._always = self._mask(facts.always)

    @classmethod
    def build(cls, pattern: SequencePattern, nfa: CompiledNFA, facts: Analysis) -> EventOnlyPlan | None:
        """The plan, or ``None`` when some condition reads more than the event (or the pattern
        holds matches back, has negations, aggregates or previous-event windows)."""
        if pattern.skip.kind != "no_skip" or pattern.flink_order or nfa.window_times or pattern.aggregates:
            return None
        states = nfa.states
        order = {name: i for i, name in enumerate(nfa.stage_names)}
        for st in states.values():
            if st.kind not in (Kind.START, Kind.NORMAL, Kind.FINAL) or (st.kind == Kind.START) != (
                st.name == nfa.start
            ):
                return None
            for tr in st.transitions:
                target = states[tr.target]
                if needs_context(tr.cond) or (tr.action == Action.IGNORE and target.kind == Kind.FINAL):
                    return None
                # why: a match lists its events stage by stage; in path order only if stages never go back
                if target.kind != Kind.FINAL and order.get(target.stage, -1) < order.get(st.stage, -1):
                    return None
        return cls(pattern, nfa, facts)

    def _mask(self, names: frozenset[str]) -> int:
        return sum(1 << self.code[n] for n in names)

    def new_state(self) -> EventOnlyState:
        """A fresh per-key state."""
        return EventOnlyState()

    def is_idle(self, state: EventOnlyState) -> bool:
        """Nothing in flight."""
        return not state.groups

    # ------------------------------------------------------------------ templates
    def _fired(self, code: int, event: Event) -> tuple[list[tuple[int, str, str]], int, int]:
        """The edges that fire from state ``code`` (through PROCEED edges), and the TAKE and IGNORE
        counts of Flink's version arithmetic."""
        fired: list[tuple[int, str, str]] = []
        here = self.names[code]
        stack = [here]
        takes = ignores = 0
        edges, index = self.edges, self.code
        while stack:
            for action, target, pred, stage in edges[index[stack.pop()]]:
                if pred(event, None):
                    if action == _PROCEED:
                        stack.append(target)
                    else:
                        fired.append((action, target, stage))
                        if action == _TAKE:
                            takes += 1
                        elif target != here:
                            ignores += 1
        return fired, takes, ignores

    def template(self, code: int, event: Event, is_start: bool = False) -> list[Op]:
        """What ``event`` does to a partial match waiting in state ``code`` (the general plan's
        ``_branch``: an IGNORE loop that leaves the version as it is keeps the partial match);
        ``is_start``: to the start run (which never ignores)."""
        fired, takes, ignores = self._fired(code, event)
        unchanged = takes == 0 and ignores == 0
        here = self.names[code]
        ops: list[Op] = []
        kept = False
        for action, target, stage in fired:
            if action == _IGNORE:
                if is_start:
                    continue  # why: the start run never ignores
                if target == here and unchanged and not kept:
                    kept = True
                    ops.append((KEEP, code, stage, target, False, (stage,)))
                else:
                    ops.append((MOVE, self.code[target], stage, target, False, (stage,)))
            else:
                to = self.code[target]
                op = DONE if self.final[to] else TAKE
                ops.append((op, to, stage, target, self._final_after(target, event), (stage,)))
        return ops

    def _final_after(self, target: str, event: Event) -> bool:
        """Final is reached from ``target`` through PROCEED edges that hold for ``event``."""
        if not self.facts.final_reach[target]:
            return False
        return final_after_proceed(self.edges_of, self.finals, target, event, None) is not None

    # ------------------------------------------------------------------ per event
    def process(self, state: EventOnlyState, event: Event, ctx: Context) -> None:
        """Advance time to the event, step the partial matches it can change, then the start."""
        t, typ = event.time, event.type
        groups = self._catch_up(state, t, ctx)
        starts = self.start_wakes is None or typ in self.start_wakes
        if not starts and not groups:
            return  # why: nothing to visit and the event cannot start a partial match
        woken = self._masks.get(typ)
        if woken is None:
            woken = self._masks[typ] = self._mask(self.facts.woken.get(typ, self.facts.always))
        templates = self._templates.get(typ) if self.by_type else None
        if templates is None:
            templates = [None] * (len(self.names) + 1)  # the last one: the start run's
            if self.by_type and len(self._templates) < _MAX_TYPES:
                self._templates[typ] = templates  # why: the type alone decides every condition
        done: list[tuple[int, tuple[Event, ...], tuple[str, ...]]] = []
        if groups and woken:
            kept: list[Group] = []
            for g in groups:
                if g.mask & woken:  # why: some partial match of the group can change
                    self._step_group(state, g, event, woken, templates, done, ctx)
                    if not g.runs:
                        continue
                kept.append(g)
            state.groups = kept
        if starts:
            self._start(state, event, templates, done, ctx)
        for inst, events, channels in done:
            ctx.emit(new_match(self.name, ctx.key, inst, "match", t, events, channels))
            if ctx.tracing:
                ctx.trace(TraceKind.DETECTED, inst, None, event.seq)
        if self.cap is not None and state.live > self.cap:
            self._cap(state, ctx, self.cap)

    def _catch_up(self, state: EventOnlyState, t: Time, ctx: Context) -> list[Group]:
        """Advance time to ``t`` before an event at ``t``; the groups left."""
        groups = state.groups
        if groups and self.window is not None and groups[0].start_ts + self.window <= t:
            self.advance(state, t, ctx)  # why: the oldest group's window has passed
            return state.groups
        if state.time is None or t > state.time:
            state.time = t
        return groups

    def _step_group(
        self, state: EventOnlyState, g: Group, event: Event, woken: int, templates: list[list[Op] | None],
        done: list[tuple[int, tuple[Event, ...], tuple[str, ...]]], ctx: Context,
    ) -> None:  # fmt: skip
        """Step the woken partial matches of one group, in order; the unchanged ones keep their place."""
        old: list[ERun] = []
        new: list[ERun] = []
        t, start_ts, tracing = event.time, g.start_ts, ctx.tracing
        timers = self.window is not None
        one = (event,)
        before = len(g.runs)
        for run in g.runs:
            code = run[0]
            if not (woken >> code) & 1:
                old.append(run)  # why: this event type cannot change it
                continue
            ops = templates[code]
            if ops is None:
                ops = templates[code] = self.template(code, event)
            if not ops:
                if tracing:
                    self._trace_dead_end(run, event, ctx)
                continue
            for op, target, stage, name, final, chan in ops:
                if op == KEEP:
                    old.append(run)
                    continue
                if op == MOVE:
                    new.append((target, run[1], run[2], run[3], run[4]))
                    if timers and run[3] == start_ts:  # why: the general plan's timer per new run
                        self._fresh(state, start_ts, ctx)
                    continue
                # why: TAKE: the successor that took the event, a match if it reached Final
                taken, channels = run[1] + one, run[2] + chan
                if op == DONE:
                    done.append((run[4], taken, channels))
                else:
                    new.append((target, taken, channels, t, run[4]))
                    if timers and t == start_ts:
                        self._fresh(state, start_ts, ctx)
                if tracing:
                    ctx.trace(TraceKind.EXTENDED, run[4], stage, event.seq, {"state": name})
                if final:
                    done.append((run[4], taken, channels))
        runs = g.runs = old + new if new else old
        state.live += len(runs) - before
        mask = 0
        for run in runs:
            mask |= 1 << run[0]
        g.mask = mask

    def _start(
        self, state: EventOnlyState, event: Event, templates: list[list[Op] | None],
        done: list[tuple[int, tuple[Event, ...], tuple[str, ...]]], ctx: Context,
    ) -> None:  # fmt: skip
        """The start run: each TAKE from the start state begins a partial match (a new instance)."""
        ops = templates[-1]
        if ops is None:
            ops = templates[-1] = self.template(self.start, event, is_start=True)
        t = event.time
        runs: list[ERun] = []
        for op, target, stage, name, final, channels in ops:  # TAKE ops: the start run never ignores
            inst = ctx.new_instance()
            taken = (event,)
            if op == DONE:
                done.append((inst, taken, channels))
            else:
                runs.append((target, taken, channels, t, inst))
                if self.window is not None:
                    self._fresh(state, t, ctx)
            if ctx.tracing:
                ctx.trace(TraceKind.STARTED, inst, stage, event.seq, {"state": name})
            if final:
                done.append((inst, taken, channels))
        if runs:
            mask = 0
            for run in runs:
                mask |= 1 << run[0]
            groups = state.groups
            start_id = (t, event.seq)
            at = len(groups)
            while at and groups[at - 1].start_id > start_id:
                at -= 1  # why: an out-of-order event starts an earlier group (rare)
            groups.insert(at, Group(start_id, t, runs, mask))
            state.live += len(runs)

    def _fresh(self, state: EventOnlyState, start_ts: Time, ctx: Context) -> None:
        """A new partial match that took only its first event: a timer at its window deadline."""
        assert self.window is not None
        deadline = start_ts + self.window
        if state.scheduled != deadline:
            state.scheduled = deadline
            ctx.schedule(deadline, WINDOW_TIMER)

    def _trace_dead_end(self, run: ERun, event: Event, ctx: Context) -> None:
        """Trace a partial match that ``event`` left with no successor."""
        name = self.names[run[0]]
        stage = self.stage[run[0]]
        if self.facts.strict[name]:
            detail = strict_detail(event.seq, stage)
        else:
            detail = {"reason": f"no edge accepts event #{event.seq}", "event": event.seq, "waiting": stage}
        ctx.trace(TraceKind.PRUNED, run[4], None, event.seq, detail)

    # ------------------------------------------------------------------ time
    def on_timer(self, state: EventOnlyState, time: Time, token: object, ctx: Context) -> None:
        """A window deadline passed with no event: advance time to it."""
        self.advance(state, time, ctx)

    def advance(self, state: EventOnlyState, t: Time, ctx: Context) -> None:
        """Advance the key's time to ``t``: the groups whose window passed time out."""
        if state.time is None or t > state.time:
            state.time = t
        window = self.window
        groups = state.groups
        if window is None or not groups or groups[0].start_ts + window > t:
            return
        k = 0
        while k < len(groups) and groups[k].start_ts + window <= t:
            k += 1
        expired = groups[:k]
        del groups[:k]
        for g in expired:
            state.live -= len(g.runs)
        if self.emit_timeouts:
            for g in expired:
                for run in g.runs:
                    self._emit_timeout(run, g.start_ts + window, ctx)
        elif ctx.tracing:
            for g in expired:
                for run in g.runs:
                    ctx.trace(TraceKind.TIMED_OUT, run[4])

    def _emit_timeout(self, run: ERun, deadline: Time, ctx: Context) -> None:
        ctx.emit(new_match(self.name, ctx.key, run[4], "timeout", deadline, run[1], run[2]))
        if ctx.tracing:
            ctx.trace(TraceKind.TIMED_OUT, run[4])

    def _cap(self, state: EventOnlyState, ctx: Context, cap: int) -> None:
        """Drop the oldest partial matches over ``cap`` (start order, then creation)."""
        excess = state.live - cap
        if excess <= 0:
            return
        left = excess
        groups = state.groups
        while left:
            g = groups[0]
            if len(g.runs) <= left:
                dropped, left = g.runs, left - len(g.runs)
                del groups[0]
            else:
                dropped, g.runs = g.runs[:left], g.runs[left:]
                left = 0
                g.mask = 0
                for run in g.runs:
                    g.mask |= 1 << run[0]
            if ctx.tracing:
                for run in dropped:
                    ctx.trace(TraceKind.PRUNED, run[4], None, None, cap_detail(cap))
        state.live = cap
        state.dropped += excess
        warn_cap(ctx, self.name, cap, excess)
