"""Where partial matches can be, per key and row: the NFA's stages chained over whole columns.

:mod:`~workbench.backends.columnar.prune` feeds a row that some waiting partial match reacts to. A
partial match waiting at a later stage exists only when rows that could take the earlier stages
came in order, within the window, before it. :func:`occupancy` computes, for every NFA state and
every row (key order), the start time of the newest partial match that could be waiting there
(``-inf``: none could), from which edge each row *could* take (:func:`edge_bounds`: the type tests
and the conditions that read only the current event, evaluated on columns by
:mod:`~workbench.backends.columnar.vector`). Each step over-approximates (every row that could take
an edge is assumed to take it, negations and strictness kill nothing), so a row left out is one
that no partial match of the full replay reacts to.

:func:`completion` runs the same chain backwards: the earliest time a partial match waiting in a
state after a row could complete. A start row whose partial match cannot complete within the
window is a *dead end*; :mod:`~workbench.backends.columnar.replay` may leave it out when nothing
else could show that partial match (see :func:`workbench.backends.columnar.prune.start_rows`).

States are grouped into strongly connected parts (loops), entered and left by ``TAKE`` edges;
a ``PROCEED`` edge needs no row, so a partial match that lands in a state is also in every state
its ``PROCEED`` edges reach.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from workbench.backends.columnar.vector import ColumnSource, event_mask
from workbench.engine.expr import compile_expr
from workbench.engine.nfa.conditions import And, Cond, Const, Leaf, Not, Or, TypeIn
from workbench.engine.nfa.graph import Action, CompiledNFA, Kind, Transition
from workbench.errors import CepError

__all__ = ["Bounds", "Chain", "edge_bounds"]

Mask = npt.NDArray[np.bool_]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Bounds:
    """The rows where a condition is surely true (``low``) and possibly true (``high``).

    ``exact``: ``low == high`` and evaluating the condition per event can raise nothing.
    """

    low: Mask
    high: Mask
    exact: bool


def edge_bounds(
    cond: Cond, types: dict[frozenset[str], Mask], type_mask: object, column: ColumnSource, rows: int
) -> Bounds:
    """:class:`Bounds` of an edge condition over every row (``type_mask(types)`` -> rows of those types)."""
    if isinstance(cond, Const):
        full = np.full(rows, cond.value, dtype=bool)
        return Bounds(full, full, True)
    if isinstance(cond, TypeIn):
        m = types.get(cond.types)
        if m is None:
            m = types[cond.types] = type_mask(cond.types)  # type: ignore[operator]
        return Bounds(m, m, True)
    if isinstance(cond, Leaf):
        got = _leaf_mask(cond, column, rows)
        if got is not None:
            return Bounds(got, got, True)
        high = np.ones(rows, dtype=bool) if cond.types is None else type_mask(cond.types)  # type: ignore[operator]
        return Bounds(np.zeros(rows, dtype=bool), high, False)
    if isinstance(cond, Not):
        b = edge_bounds(cond.inner, types, type_mask, column, rows)
        return Bounds(~b.high, ~b.low, b.exact)
    if isinstance(cond, And | Or):
        a = edge_bounds(cond.left, types, type_mask, column, rows)
        b = edge_bounds(cond.right, types, type_mask, column, rows)
        if isinstance(cond, And):
            return Bounds(a.low & b.low, a.high & b.high, a.exact and b.exact)
        return Bounds(a.low | b.low, a.high | b.high, a.exact and b.exact)
    full = np.ones(rows, dtype=bool)
    return Bounds(np.zeros(rows, dtype=bool), full, False)


def _leaf_mask(leaf: Leaf, column: ColumnSource, rows: int) -> Mask | None:
    """An event-only expression condition on whole columns (``None``: per event only)."""
    if leaf.pure is None:
        return None  # why: it reads other stages or aggregates, or is a Python callable
    try:
        tree = compile_expr(leaf.label).tree
    except CepError:
        return None
    return event_mask(tree, column, rows)


class Chain:
    """The NFA's states grouped into parts (loops), with the ``TAKE`` edges between them.

    Attributes:
        order: the parts in topological order (a part before every part it can reach).
        part: each waiting state's part.
        land: per moving edge (``TAKE``, or ``IGNORE`` to another state), the waiting states a
            partial match is in after it, and whether it completes the match there.
    """

    def __init__(self, nfa: CompiledNFA) -> None:
        self.nfa = nfa
        states = nfa.states
        self.waiting = [
            n for n, st in states.items() if st.kind not in (Kind.FINAL, Kind.STOP) and n != nfa.start
        ]
        # the edges that move a partial match on a row (an IGNORE edge may lead on, e.g. to FINAL)
        self.edges: list[tuple[str, Transition]] = [
            (n, tr)
            for n, st in states.items()
            if st.kind != Kind.STOP
            for tr in st.transitions
            if tr.action == Action.TAKE or (tr.action == Action.IGNORE and tr.target != n)
        ]
        self.land: dict[int, tuple[frozenset[str], bool]] = {}
        for _, tr in self.edges:
            self.land[id(tr)] = self.closure(tr.target)
        graph: dict[str, set[str]] = {n: set() for n in self.waiting}
        for n in self.waiting:
            graph[n] |= self.closure(n)[0]
        for src, tr in self.edges:
            if src in graph:
                graph[src] |= self.land[id(tr)][0]
        reach = {n: _reach(graph, n) for n in self.waiting}
        self.part = {n: frozenset(m for m in reach[n] if n in reach[m]) | {n} for n in self.waiting}
        parts = {p for p in self.part.values()}
        self.order = sorted(parts, key=lambda p: (-len(reach[next(iter(p))]), sorted(p)))

    def closure(self, name: str) -> tuple[frozenset[str], bool]:
        """The waiting states reached from ``name`` through ``PROCEED`` edges, and whether FINAL is."""
        seen = self.closure_all(name)
        final = any(self.nfa.states[s].kind == Kind.FINAL for s in seen)
        return frozenset(seen) & self.part_names(), final

    def strict(self, part: frozenset[str]) -> bool:
        """Whether a partial match in ``part`` (one state, no loop) must take the key's very next row."""
        if len(part) != 1:
            return False
        (name,) = part
        for s in self.closure_all(name):
            for tr in self.nfa.states[s].transitions:
                if tr.action == Action.IGNORE or (
                    tr.action == Action.TAKE and s == name and tr.target == name
                ):
                    return False
        return True

    def closure_all(self, name: str) -> set[str]:
        """Every state reached from ``name`` through ``PROCEED`` edges (``name`` included)."""
        seen: set[str] = set()
        stack = [name]
        while stack:
            s = stack.pop()
            if s not in seen:
                seen.add(s)
                stack.extend(
                    tr.target for tr in self.nfa.states[s].transitions if tr.action == Action.PROCEED
                )
        return seen

    def pending(self, name: str) -> bool:
        """Whether a partial match in ``name`` may wait in a trailing ``notFollowedBy`` (PENDING),
        which completes when its window ends."""
        return any(self.nfa.states[s].kind == Kind.PENDING for s in self.closure_all(name))

    def part_names(self) -> frozenset[str]:
        return frozenset(self.waiting)


def _reach(graph: dict[str, set[str]], name: str) -> set[str]:
    seen: set[str] = set()
    stack = [name]
    while stack:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        stack.extend(graph.get(s, ()))
    return seen


def _latest(valid: Mask, values: Floats, first: Mask) -> Floats:
    """Key order: ``values`` at the last valid row at or before each row of its key (``-inf``: none).

    ``values`` must not decrease within a key along the valid rows.
    """
    idx = np.arange(len(valid))
    anchor = np.where(valid | first, idx, 0)
    np.maximum.accumulate(anchor, out=anchor)
    return np.where(valid[anchor], values[anchor], -np.inf)


def _earliest_after(valid: Mask, values: Floats, first: Mask) -> Floats:
    """Key order: ``values`` at the first valid row strictly after each row, in its key (``inf``: none)."""
    n = len(valid)
    last = np.empty(n, dtype=bool)
    last[:-1] = first[1:]
    last[-1:] = True
    idx = np.arange(n)
    anchor = np.where(valid | last, idx, n - 1)
    anchor = np.minimum.accumulate(anchor[::-1])[::-1]
    at = np.where(valid[anchor], values[anchor], np.inf)
    out = np.full(n, np.inf)
    out[:-1] = at[1:]
    return np.where(last, np.inf, out)


def _next_only(valid: Mask, values: Floats, first: Mask) -> Floats:
    """Key order: ``values`` at the key's next row when it is valid (``inf``: not, or none)."""
    out = np.full(len(valid), np.inf)
    out[:-1] = np.where(valid[1:] & ~first[1:], values[1:], np.inf)
    return out


def _shift(values: Floats, first: Mask, fill: float) -> Floats:
    """Key order: each row gets the previous row's value of its key (``fill`` for a key's first row)."""
    out = np.empty_like(values)
    out[1:] = values[:-1]
    out[:1] = fill
    return np.where(first, fill, out)


def occupancy(
    chain: Chain, high: dict[int, Mask], starts: Mask, times: Floats, first: Mask, window: float | None
) -> dict[str, Floats]:
    """Key order: per waiting state, the newest start time of a partial match that could be waiting
    there just before each row (``-inf``: none).

    ``high[id(edge)]``: the rows that could take each ``TAKE`` edge; ``starts``: the rows that start
    a partial match.
    """
    before: dict[str, Floats] = {}
    start = chain.nfa.start
    for part in chain.order:
        after = np.full(len(times), -np.inf)
        for src, tr in chain.edges:
            lands, _ = chain.land[id(tr)]
            if src in part or not (lands & part):
                continue
            if src == start:
                source, valid = times, starts & high[id(tr)]
            elif src in before:
                source = before[src]
                valid = high[id(tr)] & (source > -np.inf)
                if window is not None:  # why: the partial match must still be alive to take it
                    valid &= source >= times - window
            else:
                continue  # a state no partial match reaches
            np.maximum(after, _latest(valid, source, first), out=after)
        shifted = _shift(after, first, -np.inf)
        for name in part:
            before[name] = shifted
    return before


def completion(chain: Chain, high: dict[int, Mask], times: Floats, first: Mask) -> dict[str, Floats]:
    """Key order: per waiting state, the earliest time a partial match waiting there just after
    each row could complete (``inf``: never), counting every row that could take an edge."""
    after: dict[str, Floats] = {}
    n = len(times)
    for part in reversed(chain.order):
        best = np.full(n, np.inf)
        strict = chain.strict(part)
        for src, tr in chain.edges:
            lands, final = chain.land[id(tr)]
            if src not in part or (lands <= part and not final):
                continue
            if final:
                done = times
            else:
                done = np.full(n, np.inf)
                for name in lands - part:
                    np.minimum(done, after[name], out=done)
            if strict:  # why: the key's next row takes this edge or ends the partial match
                np.minimum(best, _next_only(high[id(tr)], done, first), out=best)
            else:
                np.minimum(best, _earliest_after(high[id(tr)], done, first), out=best)
        for name in part:
            lands, final = chain.closure(name)
            # why: a PROCEED edge completes the match with no further row; a trailing
            # notFollowedBy (PENDING) completes when its window ends, with no further row either
            if final or chain.pending(name):
                np.minimum(best, times, out=best)
            for other in lands - part:
                np.minimum(best, after[other], out=best)
        for name in part:
            after[name] = best
    return after
