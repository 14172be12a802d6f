"""Which fast plan's shape a compiled NFA has, recognised state by state and edge by edge.

Recognising the *compiled* graph (not the pattern) keeps the fast plans honest: anything the
compiler adds (greedy guards, ``until``, optional branches, negations, ``consecutive``,
``allowCombinations``, bounded ``times``) changes the graph, and the general plan runs it.
"""

from __future__ import annotations

from workbench.engine.nfa.conditions import TRUE, Cond, Not, needs_context
from workbench.engine.nfa.graph import Action, CompiledNFA, Kind, StateDef, Transition

__all__ = ["linear_chain", "loop_shape"]


def linear_chain(nfa: CompiledNFA) -> list[str] | None:
    """The states of a chain of single-event stages, start first (``None``: not a chain).

    State ``i`` has one event-only ``TAKE`` to state ``i + 1``, then maybe an ``IGNORE`` loop on
    ``NOT where`` or ``TRUE``, then ``PROCEED`` edges to ``notFollowedBy`` STOP states.
    """
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
            stop = _stop_check(nfa, tr) if chain else None
            if stop is None:
                return None
            stops.add(stop)
        chain.append(name)
        name = take.target
    if not chain or len(states) != len(chain) + 1 + len(stops):
        return None
    return chain


def _stop_check(nfa: CompiledNFA, tr: Transition) -> str | None:
    """The STOP state of an event-only ``PROCEED`` edge to a plain ``notFollowedBy`` check."""
    if tr.action != Action.PROCEED or needs_context(tr.cond):
        return None
    stop = nfa.states[tr.target]
    if stop.kind != Kind.STOP or len(stop.transitions) != 1:
        return None
    stop_take = stop.transitions[0]
    if stop_take.action != Action.TAKE or stop_take.target != stop.name or needs_context(stop_take.cond):
        return None
    return stop.name


def loop_shape(nfa: CompiledNFA) -> tuple[list[str], tuple[str, str, str, str]] | None:
    """The entry states and the (loop, gap, last, final) states of ``a, b{n,}, c`` (``None``: other)."""
    found = _entry(nfa)
    if found is None:
        return None
    entry, name, cond = found
    states = nfa.states
    names = _loop_names(nfa, states[name], cond)
    if names is None:
        return None
    start, b = states[nfa.start], states[name].stage
    gap, last = states[names[1]], states[names[2]]
    if any(states[s].stage != b for s in entry) or gap.stage != b or len({start.stage, b, last.stage}) != 3:
        return None
    if len(states) != len(entry) + 5:
        return None
    return entry, names


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


def _entry(nfa: CompiledNFA) -> tuple[list[str], str, Cond | None] | None:
    """The entry states ``b:k .. b:1`` after the start (each ``TAKE b / IGNORE not b``), the next
    state's name and the loop condition; ``None`` when the start is not a single plain TAKE."""
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
    return entry, name, cond


def _loop_names(nfa: CompiledNFA, loop: StateDef, cond: Cond | None) -> tuple[str, str, str, str] | None:
    """The loop, gap, last and final states' names when ``loop`` has exactly the plan's shape."""
    states = nfa.states
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
    if last.kind != Kind.NORMAL or not _take_ignore(last, None) or needs_context(last.transitions[0].cond):
        return None
    final = states.get(last.transitions[0].target)
    if final is None or final.kind != Kind.FINAL:
        return None
    return loop.name, gap.name, last.name, final.name
