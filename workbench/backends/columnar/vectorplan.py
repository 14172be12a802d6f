"""Deterministic sequence patterns replayed with numpy: detections without feeding any event.

A pattern that the engine runs with its linear plan (:mod:`workbench.engine.nfa.linear`), whose
stages each take one event with ``next``, ``followed by`` or ``followed by any`` contiguity, with
``not followed by`` checks between them, exactly vectorisable conditions, no timeouts, measures or
trace, and skip strategy ``no_skip`` or ``skip past last event`` (then with no ``followed by any``),
has partial matches whose paths are found by a handful of lookups: from its start row, the stage
waiting at position ``p`` of the key's rows is decided by the key's first later row that takes the
stage, meets a ``not followed by`` check, or (``next``) is simply the next row. So every start's
fate is a few "next true index" lookups over the rows regrouped by key
(:class:`~workbench.backends.columnar.prune.KeyOrder`), all starts at once:

* it **advances** on a row that takes the stage (unless a check is met on the same row and the
  stage is not the last: the check kills the partial match; a completed match is still emitted);
* it **dies** on a row that meets a check or, under ``next``, any other row;
* it **expires** on the first row with ``t - t_start >= W`` (``within W``).

A ``followed by any`` stage branches: the partial match stays, and a copy advances on every taking
row before the first check met (that row too for the last stage, where a completed match still goes
out) within the window; the branches are enumerated with ``np.repeat``. One start's matches that
complete on one row go out in the engine's order of its partial matches: by the row each last
changed on, then the row before (:func:`_recent_first`).

The engine emits a completed match at its last row, after the matches of earlier patterns at that
row and, within a pattern, by start row; instance ids are a start row's rank among its key's start
rows. Under ``skip past last event`` nothing is ever held back either: of two live partial matches
of one key, the earlier-started one is at the same stage or a later one (both see the same rows;
at the same stage they fare alike, and an earlier start's window ends no later), so when a match
completes, every earlier partial match still alive completes on the same row. The first of them
goes out and discards every partial match that started at or before that row; what is left is a
greedy walk over the matches in start order (:func:`_past_last`).

Whenever the per-pattern ``max partial matches`` or the engine-wide budget (``max_live``) could
bind, counted generously (every start still inside its window is live), the plan declines and the
engine runs as before. :func:`plan_reason` says why a pattern does not qualify.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from workbench.backends.columnar.chain import edge_bounds
from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.prune import order_reason
from workbench.backends.columnar.vectorrows import Found, Index, Mask, Rows
from workbench.engine.detection import Detection, new_match
from workbench.engine.matcher import Matcher
from workbench.engine.nfa.conditions import Cond
from workbench.engine.nfa.linear import ANY, STRICT, LinearPlan
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.runtime import Engine

__all__ = ["engine_reason", "input_reason", "plan_reason", "vector_detections"]

#: times beyond this may not survive float arithmetic exactly (``t_start + W``)
_EXACT_TIME = 2.0**52


def plan_reason(matcher: Matcher) -> str | None:
    """Why ``matcher`` is outside the vectorised plan's class (``None``: it qualifies, data permitting)."""
    if not isinstance(matcher, NFAMatcher):
        return "not a sequence pattern"
    plan = matcher.plan
    if not isinstance(plan, LinearPlan):
        return "not a chain of single-event stages (quantifiers, groups, optional stages, not next, ...)"
    pattern = matcher.pattern
    if matcher.measures is not None:
        return "it has measures"
    if pattern.emit_timeouts:
        return "it emits timeouts"
    if pattern.skip.kind not in ("no_skip", "skip_past_last_event"):
        return f"skip strategy {pattern.skip.kind}"
    if pattern.skip.kind != "no_skip" and ANY in plan.kinds:
        return f"skip strategy {pattern.skip.kind} with followed by any"
    if pattern.skip.kind != "no_skip" and plan.window is not None and plan.window <= 0:
        return f"skip strategy {pattern.skip.kind} with an empty window"
    return None


def engine_reason(engine: Engine, until: int | float | None) -> str | None:
    """Why a replay through ``engine`` cannot use the vectorised plan (``None``: every pattern may)."""
    if engine.tracing:
        return "trace is on"
    if engine.derive is not None:
        return "a pattern emits into a stream"
    if not engine.matchers:
        return "no patterns"
    for m in engine.matchers:
        why = plan_reason(m)
        if why is not None:
            return f"pattern {m.name}: {why}"
        if until is not None and isinstance(m, NFAMatcher) and m.plan.skip.holds:  # type: ignore[union-attr]
            return f"pattern {m.name}: a flush until a time releases held matches at that time"
    return None


def input_reason(engine: Engine, cols: EventColumns) -> str | None:
    """Why the rows cannot be replayed by the plan (``None``: clean, in order, in event time)."""
    why = order_reason(engine, cols)
    if why is not None:
        return why
    times = cols.columns["time"].to_numpy(dtype=np.float64)
    if len(times) and float(np.abs(times).max()) >= _EXACT_TIME:
        return "times too large for exact float arithmetic"
    return None


def _mask(
    cond: Cond, rows: Rows, n: int, types: dict[frozenset[str], Mask], type_mask: object
) -> Mask | None:
    """A condition on every row, key order (``None``: not exactly vectorisable)."""
    b = edge_bounds(cond, types, type_mask, rows.column, n)
    return rows.keys.sort(b.low) if b.exact else None


def _stage_masks(plan: LinearPlan, rows: Rows) -> tuple[list[Mask], list[Mask]] | None:
    """Per stage: the rows taking it and the rows meeting one of its ``not followed by`` checks."""
    n = len(rows.times)
    types: dict[frozenset[str], Mask] = {}
    type_mask = rows.types_mask

    takes: list[Mask] = []
    stops: list[Mask] = []
    for i, cond in enumerate(plan.conds):
        take = _mask(cond, rows, n, types, type_mask)
        if take is None:
            return None
        stop = np.zeros(n, dtype=bool)
        for proceed, stop_take in plan.stop_conds[i]:
            a = _mask(proceed, rows, n, types, type_mask)
            b = _mask(stop_take, rows, n, types, type_mask)
            if a is None or b is None:
                return None
            stop |= a & b
        takes.append(take)
        stops.append(stop)
    return takes, stops


def _follow(plan: LinearPlan, rows: Rows, takes: list[Mask], stops: list[Mask]) -> Found:
    """Every start's paths through the stages (key order positions); ``followed by any`` branches."""
    n = len(rows.times)
    start = np.flatnonzero(takes[0]).astype(np.int64)
    before: Index = np.cumsum(takes[0], dtype=np.int64) - takes[0]
    key_first = np.maximum.accumulate(np.where(rows.keys.first, np.arange(n), 0))
    inst = (before - before[key_first])[start] + 1
    end = rows.window_end(start, plan.window)
    first, cur, taken = start, start, [start]
    last = plan.n - 1
    for i in range(1, plan.n):
        take, stop = takes[i], stops[i]
        if plan.kinds[i] == ANY:  # why: every taking row before the first check met is a branch
            parent, cur = _branch(rows, take, stop, cur, end, through_stop=i == last)
            first, inst, end = first[parent], inst[parent], end[parent]
            taken = [t[parent] for t in taken] + [cur]
            continue
        event = take | stop if plan.kinds[i] != STRICT else np.ones(n, dtype=bool)
        q = rows.next_true(event)[cur]
        qc = np.minimum(q, n - 1)
        ok = (q < end) & take[qc] & ((i == last) | ~stop[qc])
        first, inst, end, cur = first[ok], inst[ok], end[ok], q[ok]
        taken = [t[ok] for t in taken] + [cur]
    return Found(cur, first, taken, inst, start)


def _branch(
    rows: Rows, take: Mask, stop: Mask, cur: Index, end: Index, *, through_stop: bool
) -> tuple[Index, Index]:
    """``followed by any``: per partial match at ``cur``, every later row taking the stage before its
    window ``end`` and its first check met (that row too for the last stage, where a completed match
    still goes out). Returns each branch's partial match index and its row."""
    first_stop = rows.next_true(stop)[cur]
    limit = np.minimum(first_stop + 1 if through_stop else first_stop, end)
    count_to = np.concatenate(([0], np.cumsum(take)))
    lo, hi = count_to[cur + 1], count_to[np.maximum(limit, cur + 1)]
    counts = np.maximum(hi - lo, 0)
    parent = np.repeat(np.arange(len(cur)), counts)
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    rows_taking = np.flatnonzero(take)[np.repeat(lo, counts) + offsets].astype(np.int64)
    return parent, rows_taking


def _caps_bind(engine: Engine, rows: Rows, starts: list[Index]) -> bool:
    """Whether a partial-match cap could bind: counted as every start still inside its window live,
    and with ``followed by any`` before the last stage, every combination of a key's rows in one window."""
    times = rows.times
    budget = engine.shedder.limit
    totals: list[npt.NDArray[np.float64]] = []
    windows = []
    branched = 0.0  # a bound on the branching patterns' partial matches at any one time
    for m, s in zip(engine.matchers, starts, strict=True):
        assert isinstance(m, NFAMatcher)
        plan, cap = _linear(m), m.pattern.max_partial_matches
        forks = plan.forks
        if forks:  # why: a partial match is its start and one row per branching stage
            bound = _per_key_most(rows.keys.codes, times, plan.window).astype(np.float64) ** (1 + forks)
            if cap is not None and len(bound) and float(bound.max()) > cap:
                return True
            branched += float(bound.sum())
            continue
        windows.append(plan.window)
        totals.append(np.sort(times[s]))  # the same values in row order: times never go back
        if cap is not None and len(s) and _most_live(rows.keys.codes[s], times[s], plan.window) > cap:
            return True
    if budget is None:
        return False
    if not totals:
        return branched > budget
    every = np.sort(np.concatenate(totals))
    if any(w is None for w in windows):
        return len(every) + branched > budget
    widest = max(float(w) for w in windows if w is not None)
    alive = np.arange(1, len(every) + 1) - np.searchsorted(every, every - widest, side="left")
    return (int(alive.max()) if len(alive) else 0) + branched > budget


def _per_key_most(codes: Index, times: npt.NDArray[np.float64], window: float | None) -> Index:
    """Per key: the most of its rows inside one window (key order; every row, not only starts)."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    q = np.empty(len(codes), dtype=np.complex128)
    q.real, q.imag = codes, times
    low = q.copy()
    low.imag = times - (np.inf if window is None else window)
    alive = np.arange(1, len(q) + 1) - np.searchsorted(q, low, side="left")
    firsts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    return np.maximum.reduceat(alive, firsts).astype(np.int64)


def _most_live(codes: Index, times: npt.NDArray[np.float64], window: float | None) -> int:
    """The most starts of one key inside one window (key order, times sorted per key)."""
    q = np.empty(len(codes), dtype=np.complex128)
    q.real, q.imag = codes, times
    low = q.copy()
    low.imag = times - (np.inf if window is None else window)
    # why "right": a start's own row first expires the partial matches with t_start + W <= t
    alive = np.arange(1, len(q) + 1) - np.searchsorted(q, low, side="right")
    return int(alive.max())


def vector_detections(engine: Engine, cols: EventColumns) -> list[Detection] | None:
    """The detections of replaying ``cols`` through ``engine`` and finishing, or ``None`` (use the engine).

    The caller has checked :func:`engine_reason`; the input must be clean and in order (in event time,
    without reordering), else ``None``.
    """
    if input_reason(engine, cols) is not None:
        return None
    rows = Rows.of(cols)
    found: list[Found] = []
    for m in engine.matchers:
        plan = _linear(m)
        masks = _stage_masks(plan, rows)
        if masks is None:
            return None  # why: some condition is evaluated event by event (it may raise)
        found.append(_follow(plan, rows, *masks))
    if _caps_bind(engine, rows, [f.all_start for f in found]):
        return None
    kept = [
        _past_last(f) if _linear(m).skip.holds else None for m, f in zip(engine.matchers, found, strict=True)
    ]
    return _build(engine, rows, cols, found, kept)


def _linear(m: Matcher) -> LinearPlan:
    assert isinstance(m, NFAMatcher)
    assert isinstance(m.plan, LinearPlan)
    return m.plan


def _past_last(f: Found) -> Index:
    """``skip past last event``: the matches the engine emits (the others are discarded).

    Partial matches of a key are ordered by start and stage alike (see the module docstring), so
    none is ever held back: a match goes out at its last row and discards every partial match
    that started at or before that row. Per key, in start order: the first match, then the first
    one starting after its last row, and so on (a later key's first match starts after it too).
    """
    after = np.searchsorted(f.start, f.done, side="right").tolist()
    kept, i, n = [], 0, len(after)
    while i < n:
        kept.append(i)
        i = after[i]
    return np.asarray(kept, dtype=np.int64)


def _build(
    engine: Engine, rows: Rows, cols: EventColumns, found: list[Found], kept: list[Index | None]
) -> list[Detection]:
    """The detections in the engine's order: by last row, then pattern, then start row."""
    order = rows.keys.order
    picks = [np.arange(len(f.done)) if k is None else k for f, k in zip(found, kept, strict=True)]
    done = np.concatenate([order[f.done[k]] for f, k in zip(found, picks, strict=True)] or [_NONE])
    start = np.concatenate([order[f.start[k]] for f, k in zip(found, picks, strict=True)] or [_NONE])
    pindex = np.concatenate([np.full(len(k), p) for p, k in enumerate(picks)] or [_NONE])
    which = np.concatenate(picks or [_NONE])
    sequence = np.lexsort((*_recent_first(found, picks), start, pindex, done))
    used = np.unique(
        np.concatenate([order[s[k]] for f, k in zip(found, picks, strict=True) for s in f.stages] or [_NONE])
    )
    events = dict(zip(used.tolist(), cols.events_at(used), strict=True))
    layouts = []
    for m, f in zip(engine.matchers, found, strict=True):
        plan = _linear(m)
        positions, channels = plan.layout[plan.n]
        layouts.append((m.name, channels, [order[f.stages[s]].tolist() for s in positions], f.inst.tolist()))
    out = []
    for p, j, d, s in zip(
        pindex[sequence].tolist(),
        which[sequence].tolist(),
        done[sequence].tolist(),
        start[sequence].tolist(),
        strict=True,
    ):
        name, channels, stage_rows, inst = layouts[p]
        path = tuple(events[r[j]] for r in stage_rows)
        out.append(new_match(name, events[s].key, inst[j], "match", events[d].time, path, channels))
    return out


def _recent_first(found: list[Found], picks: list[Index]) -> list[Index]:
    """Tie-breaks among one start's matches completed on one row (``followed by any`` branches):
    the engine keeps them by the row each partial match last changed on, then the one before.
    Least significant first, as ``np.lexsort`` reads them."""
    middle = max((len(f.stages) - 2 for f in found), default=0)
    out = []
    for back in range(middle, 0, -1):  # back = 1: the stage before the last
        parts = []
        for f, k in zip(found, picks, strict=True):
            j = len(f.stages) - 1 - back
            parts.append(f.stages[j][k] if j >= 1 else np.zeros(len(k), dtype=np.int64))
        out.append(np.concatenate(parts) if parts else _NONE)
    return out


_NONE = np.zeros(0, dtype=np.int64)
