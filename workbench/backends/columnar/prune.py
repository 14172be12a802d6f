"""Which rows of an in-order replay can change some pattern's state: the rest are never fed.

A row is *fed* when some matcher could react to it; every other row is skipped, with results
identical to feeding every row (detections, their order and times, instance ids, traces, warnings,
condition errors). The rules, per sequence pattern (:class:`~workbench.engine.nfa.matcher.NFAMatcher`),
all computed on whole columns, per key:

* **starts**: a row whose type can start a partial match (``start_wakes``) is fed (it takes an
  instance id even when nothing comes of it).
* **live rows**: a partial match started at row ``s`` is gone by the time of a row ``r`` with
  ``t_r - t_s > W`` (``within W``): its window deadline ``t_s + W < t_r`` fired as a timer before
  ``r``. So a row of a type that some waiting partial match reacts to (the NFA states' ``wakes``) is
  fed only if a start row of its key lies at or before it within ``W`` (any start without ``within``).
  Otherwise the key holds no partial match, the row cannot start one, and processing it does nothing.
* **volatile states**: a state whose ``wakes`` is *all types* (strict contiguity, ``next``, or a
  loop that moves on every event) changes with the very next event of the key, whatever it is. A
  partial match only gets there by taking a row of the key, so the row after every fed row of a
  type that can lead there (``entering`` types) is fed too, as is the row after that one if it is
  again of such a type, and so on. After it, the partial match waits in a state with known wakes.

A pattern whose NFA does not fit these rules (a volatile state that stays volatile on an ignored
event, a start state woken by every type) and every other family (reaction groups, receives) get
the plain rule: rows of the types they use (``event_types()``; all rows when that is ``None``).
The whole replay feeds every row when times go backwards or with ``out_of_orderness`` (the caller
checks that, :func:`workbench.backends.columnar.replay.rows_to_feed`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from workbench.backends.columnar.chain import Chain, completion, edge_bounds, occupancy
from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.vector import ColumnSource
from workbench.engine.matcher import Matcher
from workbench.engine.nfa.conditions import type_profile
from workbench.engine.nfa.graph import Action, CompiledNFA, Kind, StateDef
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.runtime import Engine

__all__ = [
    "KeyOrder",
    "NFARules",
    "StageChain",
    "dead_ends_allowed",
    "matcher_mask",
    "nfa_rules",
    "order_reason",
]

Mask = npt.NDArray[np.bool_]
G = TypeVar("G", bound=np.generic)


@dataclass(frozen=True, slots=True)
class NFARules:
    """What :func:`matcher_mask` needs of one sequence pattern (``None`` types: every type).

    Attributes:
        starts: the types that can start a partial match.
        woken: the types some partial match waiting in a settled state reacts to.
        entering: the types whose rows can move a partial match into a volatile state.
        window: ``within`` in ms (``None``: no window).
    """

    starts: frozenset[str]
    woken: frozenset[str]
    entering: frozenset[str] | None
    window: int | float | None


def order_reason(engine: Engine, cols: EventColumns) -> str | None:
    """Why leaving rows of this replay out may change its results (``None``: the rows are clean, in
    order and in event time, so a row no pattern can use changes nothing by being skipped)."""
    if engine.out_of_orderness or engine.order_by is not None or engine.time_mode != "event":
        return "events are reordered (out_of_orderness, order_by or processing time)"
    if not cols.clean():
        return "a row has a missing or odd type, time or key (the engine reports it)"
    times = cols.attrs["time"].to_numpy(dtype=np.float64)
    if len(times) > 1 and bool((np.diff(times) < 0).any()):
        return "times go backwards"  # why: a skipped newer row could make a later row late
    return None


def nfa_rules(matcher: Matcher) -> NFARules | None:
    """The rules of a sequence pattern, or ``None`` when only the plain type rule is exact."""
    if not isinstance(matcher, NFAMatcher):
        return None
    nfa, facts = matcher.nfa, matcher.facts
    starts = facts.start_wakes
    if starts is None or nfa.window_times:
        return None  # why: per-stage windows expire partial matches at times we do not track
    targeted = {tr.target for st in nfa.states.values() for tr in st.transitions}
    waiting = [
        name
        for name, st in nfa.states.items()
        if st.kind not in (Kind.FINAL, Kind.STOP) and (name != nfa.start or name in targeted)
    ]
    volatile = {name for name in waiting if facts.wakes[name] is None}
    woken: set[str] = set()
    for name in waiting:
        woken |= facts.wakes[name] or frozenset()
    for name in volatile:  # why: an ignored event must leave the partial match in a settled state
        for st in _proceed_reach(nfa, name):
            if any(tr.action == Action.IGNORE and tr.target in volatile for tr in st.transitions):
                return None
    return NFARules(frozenset(starts), frozenset(woken), _entering(nfa, volatile), nfa.window_ms)


def _proceed_reach(nfa: CompiledNFA, name: str) -> list[StateDef]:
    """The states reachable from ``name`` through PROCEED edges (``name`` included)."""
    seen: set[str] = set()
    stack, out = [name], []
    while stack:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        st = nfa.states[s]
        out.append(st)
        stack.extend(tr.target for tr in st.transitions if tr.action == Action.PROCEED)
    return out


def _entering(nfa: CompiledNFA, volatile: set[str]) -> frozenset[str] | None:
    """The types of the TAKE/IGNORE edges that lead into a volatile state (``None``: any type)."""
    if not volatile:
        return frozenset()
    out: set[str] = set()
    for st in nfa.states.values():
        for tr in st.transitions:
            if tr.action == Action.PROCEED:
                continue
            if not any(s.name in volatile for s in _proceed_reach(nfa, tr.target)):
                continue
            profile = type_profile(tr.cond)
            if profile is None or profile[1]:
                return None  # why: some type we cannot name leads there
            out |= profile[0]
    return frozenset(out)


class KeyOrder:
    """The rows regrouped by key (stable), so that per-key scans are whole-array operations.

    ``order[j]`` is the row at sorted position ``j``; ``first[j]`` says whether it is its key's
    first row.
    """

    def __init__(self, codes: npt.NDArray[np.int64]) -> None:
        # why the narrow copy: numpy sorts 16-bit integers stably by radix, in linear time
        narrow = codes.astype(np.uint16) if len(codes) and codes.min() >= 0 and codes.max() < 2**16 else codes
        self.order = np.argsort(narrow, kind="stable")
        sorted_codes = codes[self.order]
        first = np.ones(len(codes), dtype=bool)
        first[1:] = sorted_codes[1:] != sorted_codes[:-1]
        self.first = first
        self.codes = sorted_codes
        self.index = np.arange(len(codes), dtype=np.int64)

    def sort(self, values: npt.NDArray[G]) -> npt.NDArray[G]:
        """Row-ordered values in key order."""
        return values[self.order]

    def unsort(self, mask: Mask) -> Mask:
        """A key-ordered mask back in row order."""
        out = np.empty_like(mask)
        out[self.order] = mask
        return out

    def live(self, start: Mask, times: npt.NDArray[np.float64], window: float | None) -> Mask:
        """Key-ordered: a start row of the same key lies at or before each row, within ``window``."""
        anchor = np.where(start | self.first, self.index, 0)
        np.maximum.accumulate(anchor, out=anchor)
        has = start[anchor]
        if window is None:
            return has
        return has & (times - times[anchor] <= window)

    def at_deadline(self, start: Mask, times: npt.NDArray[np.float64], window: float) -> Mask | None:
        """Key-ordered: a start row of the same key lies exactly ``window`` before each row.

        ``None`` when the times are too far apart to be compared exactly in one float array.
        """
        if not start.any():
            return np.zeros(len(times), dtype=bool)
        low = float(times.min())
        stride = float(times.max()) - low + window + 1.0
        if stride * (float(self.codes.max()) + 1.0) >= 2.0**52:
            return None
        # (key, time) as one sorted number: key-ordered rows have non-decreasing times per key
        place = self.codes.astype(np.float64) * stride + (times - low)
        starts = place[start]
        query = place - window
        at = np.searchsorted(starts, query).clip(max=len(starts) - 1)
        found: Mask = starts[at] == query
        return found

    def successors(self, seeds: Mask, entering: Mask) -> Mask:
        """Key-ordered: rows after a seed of an entering type, through entering rows and one more."""
        idx = self.index
        block = self.first.copy()  # a block: consecutive entering rows, then the row ending them
        block[1:] |= ~entering[:-1]
        block_start = np.where(block, idx, 0)
        np.maximum.accumulate(block_start, out=block_start)
        marked = np.where(seeds & entering, idx, -1)
        np.maximum.accumulate(marked, out=marked)
        before = np.empty_like(marked)
        before[0] = -1
        before[1:] = marked[:-1]
        return before >= block_start


def _woken(
    matcher: NFAMatcher, stages: StageChain, start: Mask, codes: npt.NDArray[np.int64], uniques: list[object],
    times: npt.NDArray[np.float64], keys: KeyOrder, window: float | None,
) -> Mask:  # fmt: skip
    """Key order: rows of a type that a state reacts to while a partial match could wait there."""
    before = occupancy(stages.chain, stages.high, start, times, keys.first, window)
    out = np.zeros(len(codes), dtype=bool)
    for name, since in before.items():
        wakes = matcher.facts.wakes[name]
        if wakes is None:
            continue  # why: a volatile state's rows are the successors of the rows entering it
        present = since > -np.inf if window is None else since >= times - window
        out |= present & _types_mask(codes, uniques, wakes)
    return out


def _types_mask(type_codes: npt.NDArray[np.int64], uniques: list[object], types: Iterable[str]) -> Mask:
    wanted = set(types)
    table = np.fromiter((u in wanted for u in uniques), dtype=bool, count=len(uniques))
    return table[type_codes]


class StageChain:
    """One sequence pattern's chained view of the rows (key order): which rows could take each
    edge, which rows start a partial match, and which starts can complete (:mod:`.chain`).

    Attributes:
        startable: the rows that may start a partial match (a superset, or exact with ``exact``).
        exact: the rows that take each edge are known exactly and no condition can raise, so a
            start row that is a dead end may be left out (:attr:`viable`) when nothing else shows it.
        viable: the start rows whose partial match could complete.
    """

    def __init__(self, matcher: NFAMatcher, codes: npt.NDArray[np.int64], uniques: list[object],
                 times: npt.NDArray[np.float64], keys: KeyOrder, column: ColumnSource) -> None:  # fmt: skip
        nfa = matcher.nfa
        self.chain = Chain(nfa)
        rows = len(codes)
        types: dict[frozenset[str], Mask] = {}
        order = keys.order

        def sorted_column(name: str) -> pd.Series | None:
            s = column(name)
            return None if s is None else s.iloc[order].reset_index(drop=True)

        self.high: dict[int, Mask] = {}
        exact = True
        for st in nfa.states.values():
            for tr in st.transitions:
                b = edge_bounds(
                    tr.cond, types, lambda ts: _types_mask(codes, uniques, ts), sorted_column, rows
                )
                exact = exact and b.exact
                self.high[id(tr)] = b.high
        start_edges = [tr for tr in nfa.states[nfa.start].transitions if tr.action == Action.TAKE]
        self.startable = np.zeros(rows, dtype=bool)
        for tr in start_edges:
            self.startable |= self.high[id(tr)]
        self.exact = exact and len(start_edges) == 1 and len(nfa.states[nfa.start].transitions) == 1
        self.viable = self.startable
        if self.exact:
            done = completion(self.chain, self.high, times, keys.first)
            lands, final = self.chain.land[id(start_edges[0])]
            soonest = times.copy() if final else np.full(rows, np.inf)
            for name in lands:
                np.minimum(soonest, done[name], out=soonest)
            window = nfa.window_ms
            self.viable = self.startable & (soonest <= (times + window if window is not None else np.inf))


def dead_ends_allowed(matcher: Matcher, tracing: bool) -> bool:
    """Whether a dead-end start of ``matcher`` shows nowhere but in the instance ids (renumbered).

    Not when tracing (every instance is traced), with timeouts (a dead end times out), with a
    partial-match cap (it holds a place) or a skip strategy (it holds back later matches).
    """
    if tracing or not isinstance(matcher, NFAMatcher):
        return False
    p = matcher.pattern
    return not p.emit_timeouts and p.max_partial_matches is None and p.skip.kind == "no_skip"


def matcher_mask(
    matcher: Matcher,
    type_codes: npt.NDArray[np.int64],
    type_uniques: list[object],
    times: npt.NDArray[np.float64],
    keys: KeyOrder,
    *,
    carried: bool = False,
    stages: StageChain | None = None,
    starts: Mask | None = None,
) -> Mask:
    """The rows (row order) ``matcher`` needs fed, by the rules of the module docstring.

    ``carried``: partial matches may come from before the first row (a later slice of the input):
    every key then counts as started at the first row's time, and its first row follows a fed row.
    ``stages``: the pattern's chained view (then ``starts``, key order: the start rows fed).
    """
    rules = nfa_rules(matcher)
    if rules is None:
        used = matcher.event_types()
        if used is None:
            return np.ones(len(type_codes), dtype=bool)
        return _types_mask(type_codes, type_uniques, used)
    codes = keys.sort(type_codes)
    start = _types_mask(codes, type_uniques, rules.starts) if starts is None else starts
    sorted_times = keys.sort(times)
    live = keys.live(start, sorted_times, rules.window)
    if carried:  # why: partial matches from earlier rows live up to the window past the first row
        live |= True if rules.window is None else sorted_times - times[0] <= rules.window
    if stages is None or carried or not isinstance(matcher, NFAMatcher):
        fed = start | (live & _types_mask(codes, type_uniques, rules.woken))
    else:
        fed = start | _woken(matcher, stages, start, codes, type_uniques, sorted_times, keys, rules.window)
    if carried:  # why: the row before a key's first one may have left a partial match volatile
        fed |= live & keys.first
    if rules.window is not None:
        # why: a routed event at a window's deadline expires it itself (trace, timeouts, held
        # matches), before the timer that would otherwise fire after the other events at that time
        deadline = keys.at_deadline(start, sorted_times, rules.window)
        if carried and deadline is not None:  # why: the starts before this slice are not here
            deadline |= sorted_times - times[0] <= rules.window
        routed = matcher.event_types()
        fed |= (live if deadline is None else deadline) & (
            np.ones(len(codes), dtype=bool) if routed is None else _types_mask(codes, type_uniques, routed)
        )
    if rules.entering is None:
        entering = np.ones(len(codes), dtype=bool)
    else:
        entering = _types_mask(codes, type_uniques, rules.entering)
    if entering.any():
        fed |= live & keys.successors(fed, entering)
    return keys.unsort(fed)
