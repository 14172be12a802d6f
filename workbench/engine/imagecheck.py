"""What a restored per-key state means, checked against the matcher that will run it.

The types of every slot are checked while a snapshot is read (:mod:`workbench.engine.slotcheck`).
What types cannot say is checked here, once per key and pattern, before the engine adopts the
image: a loop partial match's ``code`` in its plan's range and in the list that holds that code, a
linear one's stage inside the chain, the general plan's index of runs by NFA state agreeing with
its runs, shared-buffer nodes that exist, a reaction channel that is a channel of its group,
counters that are not negative, aggregates of the kind the pattern makes, and each queued timer's
token of a shape its matcher schedules (:func:`check_timer`).

A matcher's plan (or the matcher itself) may offer its own ``check_image(state)`` hook that raises
:class:`~workbench.errors.CepError`; otherwise the checks here are found by the state's class (the
engine has checked that the state is of the class the matcher makes, so its plan is the one that
makes that class).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from typing import NoReturn

from workbench.engine.aggregates.base import Aggregate
from workbench.engine.aggregates.registry import make_aggregate
from workbench.engine.nfa.absence import AbsenceMatcher, AbsenceState
from workbench.engine.nfa.buffer import NodeId, SharedBuffer
from workbench.engine.nfa.eventonly import EventOnlyPlan, EventOnlyState
from workbench.engine.nfa.general import GeneralPlan
from workbench.engine.nfa.linear import LinearPlan, LinearState
from workbench.engine.nfa.loop import GAP, LAST, LOOP, LoopPlan, LoopRun, LoopState
from workbench.engine.nfa.state import FlinkState, NFAState, Run
from workbench.engine.nfa.store import BufferStore
from workbench.engine.nfa.streamed import StreamMatcher, StreamState
from workbench.engine.reactions.compiled import CChannel, CGroup
from workbench.engine.reactions.state import GroupState, InstanceState
from workbench.engine.slotcheck import matches
from workbench.errors import CepError

__all__ = ["check_state", "check_timer"]


def check_state(matcher: object, state: object, where: str) -> None:
    """Refuse ``state`` (restored for ``matcher``) unless its parts mean something to it."""
    for owner in (getattr(matcher, "plan", None), matcher):
        hook = getattr(owner, "check_image", None)
        if callable(hook):
            hook(state)
            return
    plan, group = getattr(matcher, "plan", None), getattr(matcher, "group", None)
    # why ``type(state) is``: a class not named here has no checks of its own
    if type(state) is AbsenceState and isinstance(matcher, AbsenceMatcher):
        if (state.inner is None) != (matcher.inner is None):
            _bad(where, "a silence's continuation")
        if state.inner is not None:
            check_state(matcher.inner, state.inner, where)
    elif type(state) is StreamState and isinstance(matcher, StreamMatcher):
        check_state(matcher.inner, state.inner, where)
    elif type(state) is EventOnlyState and isinstance(plan, EventOnlyPlan):
        _event_only(plan, state, where)
    elif type(state) is LinearState and isinstance(plan, LinearPlan):
        _linear(plan, state, where)
    elif type(state) is LoopState and isinstance(plan, LoopPlan):
        _loop(plan, state, where)
    elif (type(state) is NFAState or type(state) is FlinkState) and isinstance(plan, GeneralPlan):
        _general(plan, state, where)
    elif type(state) is GroupState and isinstance(group, CGroup):
        _group(group, state, where)


def check_timer(matcher: object, token: object, where: str) -> None:
    """Refuse a queued timer's ``token`` unless it is one ``matcher`` schedules (its ``on_timer``
    reads the token's parts without further checks)."""
    inner = getattr(matcher, "inner", None)
    if isinstance(matcher, AbsenceMatcher):
        if token == ("silence",):
            return
        if not (isinstance(token, tuple) and len(token) == 3 and token[0] == "then" and _count(token[1])):
            _bad(where, f"a silence's timer {token!r}")
        if inner is not None:
            check_timer(inner, token[2], where)
        return
    group = getattr(matcher, "group", None)
    if isinstance(group, CGroup):
        _group_timer(matcher, token, where)
    elif inner is not None and inner is not matcher:  # why: a wrapper (the key's stream) passes it on
        check_timer(inner, token, where)


#: a reaction group's timers: kind -> the token's length
_GROUP_TIMERS = {"start": 2, "gt": 3, "ct": 4, "tick": 4, "hop": 4}


def _group_timer(matcher: object, token: object, where: str) -> None:
    size = _GROUP_TIMERS.get(token[0], 0) if isinstance(token, tuple) and token else 0
    if not (isinstance(token, tuple) and len(token) == size and _count(token[1])):
        _bad(where, f"a group's timer {token!r}")
    if token[0] == "start":
        if token[1] >= len(getattr(getattr(matcher, "pattern", None), "instances", ())):
            _bad(where, f"a start-up timer {token!r} (the pattern declares no instance {token[1]})")
        return
    path = token[2]
    if not (isinstance(path, tuple) and all(isinstance(name, str) for name in path)):
        _bad(where, f"a group's timer {token!r} (its nested-group path)")
    if size == 4 and not _count(token[3]):
        _bad(where, f"a group's timer {token!r} (its channel)")


def _bad(where: str, what: str) -> NoReturn:
    msg = f"snapshot: {what} in {where} is not what an engine writes (a damaged or forged blob)"
    raise CepError(msg)


def _counts(where: str, **counts: int) -> None:
    for name, value in counts.items():
        if value < 0:
            _bad(where, f"a negative {name} ({value})")


# ---------------------------------------------------------------------------------- sequence plans
def _aggregates(aggs: tuple[Aggregate, ...], fresh: tuple[Aggregate, ...], where: str) -> None:
    """A partial match's aggregates: none yet, or one of each kind the pattern declares."""
    if aggs and len(aggs) != len(fresh):
        _bad(where, "a partial match's aggregates")
    for agg, new in zip(aggs, fresh, strict=False):
        _aggregate(agg, new, where)


#: the slots that say what an aggregate is (set when it is made, never changed by values)
_SETTINGS = ("mode", "ddof", "keep_nulls", "name", "params", "window_size", "period", "gap", "largest")


def _aggregate(agg: object, fresh: object, where: str) -> None:
    """An aggregate of the kind (class and settings) ``fresh`` is, with counters that are not negative."""
    if type(agg) is not type(fresh) or any(
        getattr(agg, s, None) != getattr(fresh, s, None) for s in _SETTINGS
    ):
        _bad(where, f"an aggregate ({type(agg).__name__}, not a {type(fresh).__name__} as the pattern makes)")
    if hasattr(fresh, "largest") and getattr(agg, "n", None) != getattr(fresh, "n", None):
        _bad(where, "a top-n aggregate's n")  # why: TopN's n is a setting, Count's a counter
    for name in _COUNTERS[1:] if hasattr(fresh, "largest") else _COUNTERS:
        value = getattr(agg, name, None)
        if isinstance(value, int) and value < 0:
            _bad(where, f"an aggregate's {name} ({value})")
    mode = getattr(agg, "mode", None)
    if mode is not None:
        window, counts = getattr(agg, "_window", None), getattr(agg, "_counts", False)
        if (window is None) != (mode != "fifo") or (
            counts is not False and (counts is None) != (mode != "any")
        ):
            _bad(where, f"an aggregate's tables for mode {mode!r}")
    if any(v < 0 for v in getattr(agg, "counts", {}).values()):
        _bad(where, "a negative count in an aggregate")
    if hasattr(fresh, "largest"):  # why: a top-n aggregate orders its values
        try:
            sorted(getattr(agg, "counts", {}))
        except TypeError:
            _bad(where, "a top-n aggregate's values, which cannot be ordered")
    for name in ("agg", "fresh"):
        inner = getattr(agg, name, None)
        if inner is not None:
            _aggregate(inner, getattr(fresh, "agg", None), where)
    groups = getattr(agg, "groups", None)
    if groups:
        new = make_aggregate(getattr(agg, "name", ""), **getattr(agg, "params", {}))
        for inner in groups.values():
            _aggregate(inner, new, where)


_COUNTERS = ("n", "_n", "_pushed", "_popped")


def _chain(state: LinearState | LoopState, where: str) -> None:
    _counts(where, next_rid=state.next_rid, dropped=state.dropped)


def _linear(plan: LinearPlan, state: LinearState, where: str) -> None:
    _chain(state, where)
    n = plan.n
    for run in state.runs:
        if not 0 < run.stage < n or run.rid >= state.next_rid or len(run.events) != run.stage:
            _bad(where, f"a partial match waiting for stage {run.stage} of {n}")


def _loop(plan: LoopPlan, state: LoopState, where: str) -> None:
    _chain(state, where)
    fresh = plan.aggs.fresh()
    lists: Iterable[tuple[str, list[LoopRun], Callable[[int], bool]]] = (
        ("hot", state.hot, lambda c: c == LOOP),
        ("cold", state.cold, lambda c: c == GAP or 0 < c <= plan.n),
        ("last", state.last, lambda c: c == LAST),
    )
    for name, runs, fits in lists:
        for run in runs:
            if not fits(run.code) or run.rid >= state.next_rid or not run.events:
                _bad(where, f"a partial match with code {run.code} among the {name} ones")
            if fresh and run.code != LAST and not run.aggs:
                _bad(
                    where, "a partial match in the loop without its aggregates"
                )  # why: the loop updates them
            _aggregates(run.aggs, fresh, where)


def _general(plan: GeneralPlan, state: NFAState, where: str) -> None:
    names = plan.nfa.states
    _counts(where, next_rid=state.next_rid, dropped=state.dropped)
    if not state.start_version:
        _bad(where, "an empty start version")
    shared = isinstance(plan.store, BufferStore)
    fresh = plan.aggs.fresh()
    runs = [*state.runs.values(), *state.completed, *getattr(state, "pq", ())]
    stages = frozenset(plan.nfa.stage_names)
    for run in runs:
        _run(run, names, stages, state.buffer if shared else None, where)
        _aggregates(run.aggs, fresh, where)
    for rid, run in state.runs.items():
        if run.rid != rid or rid not in state.by_state.get(run.state, ()):
            _bad(where, f"partial match {rid} and the index of runs")
    for name, ids in state.by_state.items():
        if any(state.runs[i].state != name if i in state.runs else True for i in ids):
            _bad(where, f"the index of runs waiting in {name!r}")
    if shared:
        _buffer(state.buffer, stages, where)
    elif state.buffer.events or state.buffer.nodes:
        _bad(where, "a shared buffer (this pattern keeps paths)")


def _run(
    run: Run, names: Container[str], stages: Container[str], buffer: SharedBuffer | None, where: str
) -> None:
    if run.state not in names or not run.version or run.inst < 0:
        _bad(where, f"partial match {run.rid} (state {run.state!r})")
    node = run.node
    if node is None:
        return
    if buffer is not None:
        if not (len(node) == 2 and isinstance(node[1], str) and node in buffer.nodes):
            _bad(where, f"partial match {run.rid}'s buffer node")
    elif not all(isinstance(step, tuple) and len(step) == 3 and step[0] in stages for step in node):
        _bad(where, f"partial match {run.rid}'s path (a step of no stage of the pattern)")


def _buffer(buffer: SharedBuffer, stages: Container[str], where: str) -> None:
    """``events[id] = [event, refs]``, ``nodes[node] = [refs, edges]``, edge ``[node, version, refs]``.

    Reference counts are not negative and every node an edge or a partial match names is there.
    """
    from workbench.engine.events import Event

    for entry in buffer.events.values():
        if not (len(entry) == 2 and isinstance(entry[0], Event) and _count(entry[1])):
            _bad(where, "a shared-buffer event")
    for (eid, stage), node in buffer.nodes.items():
        if (
            eid not in buffer.events
            or stage not in stages
            or not (len(node) == 2 and _count(node[0]) and isinstance(node[1], list))
        ):
            _bad(where, "a shared-buffer node")
        for edge in node[1]:
            if not (isinstance(edge, list) and len(edge) == 3 and _count(edge[2]) and _version(edge[1])):
                _bad(where, "a shared-buffer edge")
            if edge[0] is not None and not (matches(edge[0], NodeId) and edge[0] in buffer.nodes):
                _bad(where, "a shared-buffer edge to no node")


def _count(value: object) -> bool:
    return type(value) is int and value >= 0


def _version(value: object) -> bool:
    return isinstance(value, tuple) and bool(value) and all(type(d) is int for d in value)


# ---------------------------------------------------------------------------------- reaction groups
def _group(group: CGroup, state: GroupState, where: str) -> None:
    _counts(where, next_cid=state.next_cid)
    for iid, inst in state.instances.items():
        if inst.id != iid:
            _bad(where, f"group instance {iid}")
        _instance(inst, group, state.next_cid, where)


def _instance(inst: InstanceState, group: CGroup, next_cid: int, where: str) -> None:
    members = group.members
    _counts(where, emitted=inst.emitted)
    for cid, ch in inst.channels.items():
        if ch.cid != cid or cid >= next_cid or not (0 <= ch.member < len(members)):
            _bad(where, f"channel {cid} of group {group.name!r}")
        if not isinstance(members[ch.member], CChannel):
            _bad(where, f"channel {cid} of group {group.name!r} (a nested group's place)")
        _counts(where, seen=ch.seen, target=ch.target, empty_windows=ch.empty_windows)
        window = members[ch.member].window  # type: ignore[union-attr]
        if (ch.hop is not None) != (members[ch.member].spec.hop is not None) or (  # type: ignore[union-attr]
            ch.hop is not None and ch.hop.panes.maxlen is not None
        ):
            _bad(where, f"the hopping windows of channel {cid} of group {group.name!r}")
        for acc in (ch.acc, *(p.acc for p in (ch.hop.panes if ch.hop else ()))):
            if acc is not None and window is None:
                _bad(where, f"an accumulator on channel {cid} of group {group.name!r}, which has none")
            if acc is not None and window is not None:
                _aggregate(acc, window.new(), where)
    for name, child in inst.children.items():
        index = group.index_of.get(name)
        sub = members[index] if index is not None and 0 <= index < len(members) else None
        if not isinstance(sub, CGroup):
            _bad(where, f"nested group {name!r} of group {group.name!r}")
        _instance(child, sub, next_cid, where)


def _event_only(plan: EventOnlyPlan, state: EventOnlyState, where: str) -> None:
    names = plan.names
    _counts(where, live=state.live, dropped=state.dropped)
    if state.live != sum(len(g.runs) for g in state.groups):
        _bad(where, "the count of live partial matches")
    for group in state.groups:
        for code, events, channels, _prev, _inst in group.runs:
            # why: the code indexes the plan's states and its bit routes the event to the group
            if not 0 <= code < len(names) or not group.mask >> code & 1:
                _bad(where, f"a partial match waiting in state {code}")
            if not events or len(channels) != len(events):
                _bad(where, "a partial match's events and channels")
