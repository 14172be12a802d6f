"""Deterministic sequence patterns replayed with numpy: detections without feeding any event.

A pattern that the engine runs with its linear plan (:mod:`workbench.engine.nfa.linear`), whose
stages each take one event with ``next`` or ``followed by`` contiguity (the last may be ``followed
by any``), with ``not followed by`` checks between them, exactly vectorisable conditions, no
timeouts, measures or trace and skip strategy ``no_skip``, has partial matches that each follow one
path: from its start row, the stage waiting at position ``p`` of the key's rows is decided by the
key's first later row that takes the stage, meets a ``not followed by`` check, or (``next``) is
simply the next row. So every start's fate is a handful of "next true index" lookups over the rows
regrouped by key (:class:`~workbench.backends.columnar.prune.KeyOrder`), all starts at once:

* it **advances** on a row that takes the stage (unless a check is met on the same row and the
  stage is not the last: the check kills the partial match; a completed match is still emitted);
* it **dies** on a row that meets a check or, under ``next``, any other row;
* it **expires** on the first row with ``t - t_start >= W`` (``within W``).

A last ``followed by any`` stage completes on every taking row up to the first check met (that
row included) within the window: the pairs are enumerated with ``np.repeat``.

The engine emits a completed match at its last row, after the matches of earlier patterns at that
row and, within a pattern, by start row; instance ids are a start row's rank among its key's start
rows. Whenever the per-pattern ``max partial matches`` or the engine-wide budget (``max_live``)
could bind, counted generously (every start still inside its window is live), the plan declines
and the engine runs as before. :func:`plan_reason` says why a pattern does not qualify.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from workbench.backends.columnar.chain import edge_bounds
from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.prune import KeyOrder
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.matcher import Matcher
from workbench.engine.nfa.conditions import Cond
from workbench.engine.nfa.linear import ANY, STRICT, LinearPlan
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.runtime import Engine

__all__ = ["engine_reason", "plan_reason", "vector_detections"]

Mask = npt.NDArray[np.bool_]
Index = npt.NDArray[np.int64]

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
    if pattern.skip.kind != "no_skip":
        return f"skip strategy {pattern.skip.kind}"
    if any(k == ANY for k in plan.kinds[1:-1]):
        return "followed by any before the last stage (branching partial matches)"
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
    return None


@dataclass(slots=True)
class _Rows:
    """The replay's rows regrouped by key, with what every pattern's lookups share."""

    keys: KeyOrder
    times: npt.NDArray[np.float64]  # key order
    key_end: Index  # per position: the first position of the next key
    keyed: npt.NDArray[np.complex128]  # (key code, time) per position, lexicographically sorted
    column: object  # ColumnSource over row order

    @classmethod
    def of(cls, cols: EventColumns) -> _Rows:
        keys = KeyOrder(cols.key_codes())
        times = keys.sort(cols.columns["time"].to_numpy(dtype=np.float64))
        n = len(times)
        firsts = np.flatnonzero(keys.first)
        ends = np.append(firsts[1:], n).astype(np.int64)
        key_end = ends[np.cumsum(keys.first) - 1] if n else np.zeros(0, dtype=np.int64)
        keyed = np.empty(n, dtype=np.complex128)
        keyed.real = keys.codes
        keyed.imag = times
        return cls(keys, times, key_end, keyed, cols.column)

    def next_true(self, mask: Mask) -> Index:
        """Per position ``p``: the first later position of the same key where ``mask`` holds (else n)."""
        n = len(mask)
        idx = np.where(mask, np.arange(n, dtype=np.int64), n)
        first_from = np.minimum.accumulate(idx[::-1])[::-1]
        out = np.full(n, n, dtype=np.int64)
        out[:-1] = first_from[1:]
        out[out >= self.key_end] = n
        return out

    def window_end(self, pos: Index, window: float | None) -> Index:
        """Per start position: the first position of its key with ``t >= t_start + window`` (else the key's end)."""
        if window is None:
            return self.key_end[pos]
        query = np.empty(len(pos), dtype=np.complex128)
        query.real = self.keys.codes[pos]
        query.imag = self.times[pos] + window
        return np.searchsorted(self.keyed, query, side="left").astype(np.int64)


def _mask(cond: Cond, rows: _Rows, n: int, types: dict[frozenset[str], Mask], type_mask: object) -> Mask | None:
    """A condition on every row, key order (``None``: not exactly vectorisable)."""
    b = edge_bounds(cond, types, type_mask, rows.column, n)  # type: ignore[arg-type]
    return rows.keys.sort(b.low) if b.exact else None


@dataclass(slots=True)
class _Found:
    """One pattern's matches: per match its completion position, start position and stage positions."""

    done: Index
    start: Index
    stages: list[Index]
    inst: Index


def _stage_masks(
    plan: LinearPlan, rows: _Rows, cols: EventColumns
) -> tuple[list[Mask], list[Mask]] | None:
    """Per stage: the rows taking it and the rows meeting one of its ``not followed by`` checks."""
    n = cols.rows
    codes, uniques = cols.type_codes()
    types: dict[frozenset[str], Mask] = {}

    def type_mask(ts: frozenset[str]) -> Mask:
        table = np.fromiter((u in ts for u in uniques), dtype=bool, count=len(uniques))
        return table[codes]

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


def _follow(plan: LinearPlan, rows: _Rows, takes: list[Mask], stops: list[Mask]) -> _Found:
    """Every start's path through the stages (key order positions)."""
    n = len(rows.times)
    start = np.flatnonzero(takes[0]).astype(np.int64)
    before = np.cumsum(takes[0]) - takes[0]
    key_first = np.maximum.accumulate(np.where(rows.keys.first, np.arange(n), 0))
    inst = (before - before[key_first])[start] + 1
    end = rows.window_end(start, plan.window)
    cur, keep, taken = start, np.ones(len(start), dtype=bool), [start]
    last = plan.n - 1
    for i in range(1, plan.n):
        take, stop = takes[i], stops[i]
        if i == last and plan.kinds[i] == ANY:
            return _enumerate_any(rows, take, stop, _Found(cur, start, taken, inst), keep, end)
        event = take | stop if plan.kinds[i] != STRICT else np.ones(n, dtype=bool)
        q = rows.next_true(event)[cur]
        ok = keep & (q < end)
        qc = np.minimum(q, n - 1)
        ok &= take[qc] & ((i == last) | ~stop[qc])
        keep, cur = ok, np.where(ok, q, cur)
        taken.append(cur)
    return _Found(cur[keep], start[keep], [t[keep] for t in taken], inst[keep])


def _enumerate_any(
    rows: _Rows, take: Mask, stop: Mask, found: _Found, keep: Mask, end: Index
) -> _Found:
    """A last ``followed by any`` stage: every taking row after ``cur`` up to the first check met."""
    cur = found.done[keep]
    first_stop = rows.next_true(stop)[cur]
    limit = np.minimum(np.minimum(first_stop + 1, len(take)), end[keep])
    count_to = np.concatenate(([0], np.cumsum(take)))
    lo, hi = count_to[cur + 1], count_to[np.maximum(limit, cur + 1)]
    counts = np.maximum(hi - lo, 0)
    which = np.repeat(np.arange(len(cur)), counts)
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    done = np.flatnonzero(take)[np.repeat(lo, counts) + offsets].astype(np.int64)
    picked = np.flatnonzero(keep)[which]
    stages = [t[picked] for t in found.stages] + [done]
    return _Found(done, found.start[picked], stages, found.inst[picked])


def _caps_bind(engine: Engine, rows: _Rows, starts: list[Index]) -> bool:
    """Whether a partial-match cap could bind: counted as every start still inside its window live."""
    times = rows.times
    budget = engine.shedder.limit
    totals: list[npt.NDArray[np.float64]] = []
    for m, s in zip(engine.matchers, starts, strict=True):
        assert isinstance(m, NFAMatcher)
        window = m.plan.window if isinstance(m.plan, LinearPlan) else None
        row_times = np.sort(times[s])  # the same values in row order: times never go back
        if budget is not None:
            totals.append(row_times)
        cap = m.pattern.max_partial_matches
        if cap is not None and len(s):
            if _most_live(rows.keys.codes[s], times[s], window) > cap:
                return True
    if budget is None or not totals:
        return False
    every = np.sort(np.concatenate(totals))
    windows = [m.plan.window if isinstance(m, NFAMatcher) else None for m in engine.matchers]
    if any(w is None for w in windows):
        return len(every) > budget
    widest = max(float(w) for w in windows if w is not None)
    alive = np.arange(1, len(every) + 1) - np.searchsorted(every, every - widest, side="left")
    return bool(len(alive)) and int(alive.max()) > budget


def _most_live(codes: Index, times: npt.NDArray[np.float64], window: float | None) -> int:
    """The most starts of one key inside one window (key order, times sorted per key)."""
    q = np.empty(len(codes), dtype=np.complex128)
    q.real, q.imag = codes, times
    low = q.copy()
    low.imag = times - (np.inf if window is None else window)
    alive = np.arange(1, len(q) + 1) - np.searchsorted(q, low, side="left")
    return int(alive.max())


def vector_detections(engine: Engine, cols: EventColumns) -> list[Detection] | None:
    """The detections of replaying ``cols`` through ``engine`` and finishing, or ``None`` (use the engine).

    The caller has checked :func:`engine_reason` and the input (in-order, clean, event time).
    """
    rows = _Rows.of(cols)
    if len(rows.times) and float(np.abs(rows.times).max()) >= _EXACT_TIME:
        return None
    found: list[_Found] = []
    starts: list[Index] = []
    for m in engine.matchers:
        assert isinstance(m, NFAMatcher) and isinstance(m.plan, LinearPlan)
        masks = _stage_masks(m.plan, rows, cols)
        if masks is None:
            return None  # why: some condition is evaluated event by event (it may raise)
        starts.append(np.flatnonzero(masks[0][0]).astype(np.int64))
        found.append(_follow(m.plan, rows, *masks))
    if _caps_bind(engine, rows, starts):
        return None
    return _build(engine, rows, cols, found)


def _build(engine: Engine, rows: _Rows, cols: EventColumns, found: list[_Found]) -> list[Detection]:
    """The detections in the engine's order: by last row, then pattern, then start row."""
    order = rows.keys.order
    done = np.concatenate([order[f.done] for f in found]) if found else np.zeros(0, dtype=np.int64)
    start = np.concatenate([order[f.start] for f in found]) if found else np.zeros(0, dtype=np.int64)
    pindex = np.concatenate([np.full(len(f.done), i) for i, f in enumerate(found)]) if found else done
    local = np.concatenate([np.arange(len(f.done)) for f in found]) if found else done
    sequence = np.lexsort((start, pindex, done))
    used = np.unique(np.concatenate([order[s] for f in found for s in f.stages])) if len(done) else done
    events: dict[int, Event] = dict(zip(used.tolist(), cols.events_at(used), strict=True))
    out: list[Detection] = []
    for k in sequence.tolist():
        p, j = int(pindex[k]), int(local[k])
        m, f = engine.matchers[p], found[p]
        assert isinstance(m, NFAMatcher) and isinstance(m.plan, LinearPlan)
        layout, channels = m.plan.layout[m.plan.n]
        path = [events[int(order[f.stages[s][j]])] for s in layout]
        key = events[int(start[k])].key
        out.append(Detection(m.name, key, int(f.inst[j]), "match", events[int(done[k])].time, tuple(path), channels))
    return out
