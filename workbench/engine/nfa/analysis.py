"""What the compiled NFA tells before any event: which event types can change which state.

:func:`analyse` walks the graph once per pattern. The plans use the result as the event-type
index (only the partial matches an event can change are visited) and to decide the contiguity
reason of a dead end in traces.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from workbench.engine.nfa.conditions import type_profile
from workbench.engine.nfa.graph import Action, CompiledNFA, Kind, StateDef

__all__ = ["Analysis", "analyse"]

States = Mapping[str, StateDef]


@dataclass(frozen=True, slots=True)
class Analysis:
    """Facts about one compiled NFA.

    Attributes:
        wakes: state -> event types that can change a partial match waiting there (``None``: all).
        start_wakes: event types that can start a partial match (``None``: all).
        always: states every event type can change.
        woken: event type -> states an event of that type can change (other types: ``always``).
        relevant: every event type that can start or change a partial match (``None``: all).
        final_reach: state -> Final may be reachable through PROCEED edges.
        strict: state -> no IGNORE edge is reachable through PROCEED edges (a dead end there is
            strict contiguity).
        proceed_cycle: some state reaches itself through PROCEED edges alone (a repeated group
            whose stages are all optional): an event's closure must then not go round for ever.
    """

    wakes: Mapping[str, frozenset[str] | None]
    start_wakes: frozenset[str] | None
    always: frozenset[str]
    woken: Mapping[str, frozenset[str]]
    relevant: frozenset[str] | None
    final_reach: Mapping[str, bool]
    strict: Mapping[str, bool]
    proceed_cycle: bool


def analyse(nfa: CompiledNFA) -> Analysis:
    """Analyse ``nfa`` (see :class:`Analysis`)."""
    states = nfa.states
    wakes = {name: wakes_of(states, name) for name in states}
    always = frozenset(n for n, w in wakes.items() if w is None)
    by_type: dict[str, set[str]] = {}
    for n, w in wakes.items():
        for typ in w or ():
            by_type.setdefault(typ, set()).add(n)
    start = start_wakes(nfa)
    return Analysis(
        wakes,
        start,
        always,
        {t: always | frozenset(s) for t, s in by_type.items()},
        _relevant(nfa, wakes, start),
        {name: _reaches_final(states, name) for name in states},
        {name: _no_ignore(states, name) for name in states},
        _proceed_cycle(states),
    )


def _reaches_final(states: States, name: str) -> bool:
    """Whether Final may be reachable from ``name`` through PROCEED edges."""
    return any(st.kind == Kind.FINAL for st in _proceed_reach(states, name))


def _proceed_reach(states: States, name: str, *, into_stop: bool = True) -> Iterator[StateDef]:
    """The states reachable from ``name`` through PROCEED edges, ``name`` first, each once.

    ``into_stop=False`` does not follow an edge into a STOP state.
    """
    seen, stack = set(), [name]
    while stack:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        st = states[s]
        yield st
        for tr in st.transitions:
            if tr.action == Action.PROCEED and (into_stop or states[tr.target].kind != Kind.STOP):
                stack.append(tr.target)


def _proceed_cycle(states: States) -> bool:
    """Whether a PROCEED edge leads to a state from which PROCEED edges lead back to its source."""
    return any(
        tr.action == Action.PROCEED and any(st.name == name for st in _proceed_reach(states, tr.target))
        for name, st in states.items()
        for tr in st.transitions
    )


def _no_ignore(states: States, name: str) -> bool:
    """Whether no ``IGNORE`` edge is reachable from ``name`` through PROCEED edges."""
    reach = _proceed_reach(states, name, into_stop=False)
    return all(tr.action != Action.IGNORE for st in reach for tr in st.transitions)


def start_wakes(nfa: CompiledNFA) -> frozenset[str] | None:
    """Event types that can start a partial match (``None``: all).

    The start run never ignores; for any other type every reachable TAKE/IGNORE/PROCEED edge
    is certainly false, so it neither branches nor changes its version.
    """
    out: set[str] = set()
    start, states = nfa.start, nfa.states
    for st in _proceed_reach(states, start):
        for tr in st.transitions:
            if tr.action == Action.IGNORE and tr.target == start:
                continue
            prof = type_profile(tr.cond)
            if prof is None or prof[1]:
                return None
            out |= prof[0]
    return frozenset(out)


def _relevant(
    nfa: CompiledNFA, wakes: Mapping[str, frozenset[str] | None], start_types: frozenset[str] | None
) -> frozenset[str] | None:
    """Every event type that can start or change a partial match (``None``: all types)."""
    if start_types is None:
        return None
    out = set(start_types)
    start = nfa.start
    targeted = {tr.target for st in nfa.states.values() for tr in st.transitions}
    for name, st in nfa.states.items():
        if st.kind in (Kind.FINAL, Kind.STOP) or (name == start and start not in targeted):
            continue
        w = wakes[name]
        if w is None:
            return None
        out |= w
    return frozenset(out)


def wakes_of(states: States, name: str) -> frozenset[str] | None:
    """Event types that can change a partial match waiting in state ``name`` (``None``: all).

    For any other type, every edge reachable from the state is certainly false except its own
    ``IGNORE`` loop, which is certainly true, so the partial match stays exactly as it is.
    """
    out: set[str] = set()
    stays = False  # some IGNORE loop keeps the run in place (else a non-matching event kills it)
    for st in _proceed_reach(states, name):
        for tr in st.transitions:
            prof = type_profile(tr.cond)
            if prof is None:
                return None
            types, value = prof
            self_ignore = tr.action == Action.IGNORE and tr.target == name
            if value is not self_ignore:
                return None
            stays = stays or self_ignore
            out |= types
    return frozenset(out) if stays else None
