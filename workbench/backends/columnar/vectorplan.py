"""Deterministic sequence patterns replayed with numpy: detections without feeding any event.

A pattern that the engine runs with its linear plan (:mod:`workbench.engine.nfa.linear`), whose
stages each take one event with ``next``, ``followed by`` or ``followed by any`` contiguity, with
``not followed by`` checks between them, exactly vectorisable conditions, no timeouts or trace,
and skip strategy ``no_skip`` or ``skip past last event`` (then with no ``followed by any``), has
partial matches whose paths are found by a handful of lookups: from its start row, the stage
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

from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.prune import order_reason
from workbench.backends.columnar.vectorbuild import build_detections
from workbench.backends.columnar.vectorloop import loop_matches, loop_reason
from workbench.backends.columnar.vectorrows import Found, Index, Mask, Matches, Rows, since, within
from workbench.engine.matcher import Matcher
from workbench.engine.matchtable import LazyDetections
from workbench.engine.nfa.linear import ANY, STRICT, LinearPlan
from workbench.engine.nfa.loop import LoopPlan
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
    pattern = matcher.pattern
    if pattern.emit_timeouts:
        return "it emits timeouts"
    if isinstance(plan, LoopPlan):
        return loop_reason(plan)
    if not isinstance(plan, LinearPlan):
        return "not a chain of single-event stages or a, b{n,}, c (groups, optional stages, not next, ...)"
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
        plan = m.plan if isinstance(m, NFAMatcher) else None
        if until is not None and isinstance(plan, LinearPlan) and plan.skip.holds:
            return f"pattern {m.name}: a flush until a time releases held matches at that time"
    return None


def input_reason(engine: Engine, cols: EventColumns) -> str | None:
    """Why the rows cannot be replayed by the plan (``None``: clean, in order, in event time)."""
    why = order_reason(engine, cols)
    if why is not None:
        return why
    times = cols.attrs["time"].to_numpy(dtype=np.float64)
    if len(times) and float(np.abs(times).max()) >= _EXACT_TIME:
        return "times too large for exact float arithmetic"
    return None


def _stage_masks(plan: LinearPlan, rows: Rows) -> tuple[list[Mask], list[Mask]] | None:
    """Per stage: the rows taking it and the rows meeting one of its ``not followed by`` checks."""
    types: dict[frozenset[str], Mask] = {}

    takes: list[Mask] = []
    stops: list[Mask] = []
    for i, cond in enumerate(plan.conds):
        take = rows.exact(cond, types)
        if take is None:
            return None
        stop = np.zeros(len(rows.times), dtype=bool)
        for proceed, stop_take in plan.stop_conds[i]:
            a = rows.exact(proceed, types)
            b = rows.exact(stop_take, types)
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
    inst = rows.instances(takes[0])
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
    rows_taking = np.flatnonzero(take)[np.repeat(lo, counts) + within(counts)].astype(np.int64)
    return parent, rows_taking


def _caps_bind(engine: Engine, rows: Rows, found: list[Matches]) -> bool:
    """Whether a partial-match cap could bind: counted as every start still inside its window live
    (with its weight: a loop run and the prefixes it leaves waiting), and with ``followed by any``
    before the last stage, every combination of a key's rows in one window."""
    times = rows.times
    budget = engine.shedder.limit
    spans: list[tuple[npt.NDArray[np.float64], Index]] = []
    windows = []
    branched = 0.0  # a bound on the branching patterns' partial matches at any one time
    for m, f in zip(engine.matchers, found, strict=True):
        assert isinstance(m, NFAMatcher)
        plan, cap, s = m.plan, m.pattern.max_partial_matches, f.all_start
        assert isinstance(plan, LinearPlan | LoopPlan)
        forks = plan.forks if isinstance(plan, LinearPlan) else 0
        if forks:  # why: a partial match is its start and one row per branching stage
            bound = _per_key_most(rows.keys.codes, times, plan.window).astype(np.float64) ** (1 + forks)
            if cap is not None and len(bound) and float(bound.max()) > cap:
                return True
            branched += float(bound.sum())
            continue
        weights = f.weights if f.weights is not None else np.ones(len(s), dtype=np.int64)
        windows.append(plan.window)
        spans.append((times[s], weights))
        if (
            cap is not None
            and len(s)
            and _most_live(rows.keys.codes[s], times[s], plan.window, weights) > cap
        ):
            return True  # why: one key's partial matches could reach the pattern's cap
    if budget is None:
        return False
    if not spans:
        return branched > budget
    every = np.concatenate([t for t, _ in spans])
    weight = np.concatenate([w for _, w in spans])
    if any(w is None for w in windows):
        return float(weight.sum()) + branched > budget
    widest = max(float(w) for w in windows if w is not None)
    by_time = np.argsort(every, kind="stable")
    every, total = every[by_time], np.cumsum(weight[by_time])
    gone = np.searchsorted(every, every - widest, side="left")
    alive = since(total, gone)
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


def _most_live(codes: Index, times: npt.NDArray[np.float64], window: float | None, weights: Index) -> int:
    """The most starts of one key inside one window, by weight (key order, times sorted per key)."""
    q = np.empty(len(codes), dtype=np.complex128)
    q.real, q.imag = codes, times
    low = q.copy()
    low.imag = times - (np.inf if window is None else window)
    # why "right": a start's own row first expires the partial matches with t_start + W <= t
    return int(since(np.cumsum(weights), np.searchsorted(q, low, side="right")).max())


def vector_detections(engine: Engine, cols: EventColumns) -> LazyDetections | None:
    """The detections of replaying ``cols`` through ``engine`` and finishing, or ``None`` (use the engine).

    The caller has checked :func:`engine_reason`; the input must be clean and in order (in event time,
    without reordering), else ``None``.
    """
    if input_reason(engine, cols) is not None:
        return None
    rows = Rows.of(cols)
    found: list[Matches] = []
    for m in engine.matchers:
        assert isinstance(m, NFAMatcher)
        plan = m.plan
        if isinstance(plan, LoopPlan):
            got = loop_matches(plan, rows)
            if got is None:
                return None  # why: some condition or aggregate is decided event by event
            found.append(got)
            continue
        assert isinstance(plan, LinearPlan)
        masks = _stage_masks(plan, rows)
        if masks is None:
            return None  # why: some condition is evaluated event by event (it may raise)
        path = _follow(plan, rows, *masks)
        found.append(_as_matches(plan, path, _past_last(path) if plan.skip.holds else None))
    if _caps_bind(engine, rows, found):
        return None
    return build_detections([m.name for m in engine.matchers], rows, cols, found)


def _as_matches(plan: LinearPlan, f: Found, kept: Index | None) -> Matches:
    """A linear plan's paths (those ``kept``: ``None``, all) in the common form."""
    pick = np.arange(len(f.done)) if kept is None else kept
    positions, channels = plan.layout[plan.n]
    width = len(positions)
    flat = np.stack([f.stages[s][pick] for s in positions], axis=1).reshape(-1) if width else _NONE
    bounds = np.arange(len(pick) + 1, dtype=np.int64) * width
    # One start's branches completed on one row: by the row each last changed on, then the one
    # before (least significant first).
    ties = [f.stages[len(f.stages) - 1 - back][pick] for back in range(len(f.stages) - 2, 0, -1)]
    return Matches(
        done=f.done[pick], start=f.start[pick], inst=f.inst[pick], ties=ties, flat=flat, bounds=bounds,
        channels=lambda _n: channels, all_start=f.all_start,
    )  # fmt: skip


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


_NONE = np.zeros(0, dtype=np.int64)
