"""The loop plan (``begin a, followed by b{n,}, followed by c``) replayed with numpy.

The engine runs the P3/P5 shape with :class:`~workbench.engine.nfa.loop.LoopPlan`: each start row
opens a run that walks its key's later rows inside its window, taking every row that passes the
loop stage's condition (which may read running aggregates of the rows taken so far, ``count``,
``sum`` and ``avg``, with or without the row being tested). Each prefix of ``k >= n`` taken rows
waits for the first row after its ``k``-th row that takes the last stage; that row completes it if
it lies inside the run's window. Runs never interact (no skip strategy), so:

* without aggregates, a run takes every candidate row of its window (a few array lookups);
* with aggregates, all runs are stepped together, one candidate row each per step: step ``j``
  tests every run's ``j``-th candidate with the condition evaluated on arrays (the aggregates as
  arrays of running totals), so the number of numpy passes is the most candidates one window holds.

Matches completed on one row go out in the engine's order of its partial matches: by start, then
by run id. The partial match holding prefix ``k`` got its id on the row where it last changed:
the run itself, still in the loop, when the completing row is the first row after its ``k``-th
that can wake it (its id dates from that ``k``-th row); else the waiter the run left behind on
that first waking row (one id later than the run's on that row).

Declined (``None``, the engine runs): a condition that is not exactly vectorisable, an aggregate
of another kind or stage or over a NULL or non-numeric input, an integer total that a float
cannot hold exactly, a row that could both extend the loop and complete a match.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from workbench.backends.columnar.chain import edge_bounds
from workbench.backends.columnar.vector import EXACT, Unsupported, Vec, _column, _truth, _Vectoriser
from workbench.backends.columnar.vectorrows import Index, Mask, Matches, Rows, within
from workbench.engine.aggregates import Avg, Count, Sum, make_aggregate
from workbench.engine.expr.ir import Name
from workbench.engine.nfa.conditions import And, Cond, Const, Leaf, Not, Or, TypeIn
from workbench.engine.nfa.loop import LoopPlan

__all__ = ["loop_matches", "loop_reason"]

Floats = npt.NDArray[np.float64]

_KINDS: dict[type, str] = {Count: "count", Sum: "sum", Avg: "avg"}
#: a step (a dozen numpy passes over the active runs) costs about as much as the engine testing this
#: many candidate rows one by one
_STEP_COST = 40
#: so many steps cost little whatever the runs (a few milliseconds)
_FEW_STEPS = 256


def loop_reason(plan: LoopPlan) -> str | None:
    """Why the loop plan's aggregates keep it out of the vectorised replay (``None``: they don't)."""
    loop_stage = plan.stages[1]
    for spec in plan.aggs.specs:
        if spec.stage != loop_stage:
            return f"aggregate {spec.name!r} is over stage {spec.stage!r}, not the loop stage"
        if type(make_aggregate(spec.function, **dict(spec.params))) not in _KINDS:
            return f"aggregate {spec.name!r} is {spec.function}, not count, sum or avg"
    return None


@dataclass(slots=True)
class _Totals:
    """One aggregate's running state per run: count of inputs and their total (key order runs)."""

    name: str
    kind: str
    include: bool
    inputs: Vec | None  # the input per row (row order); None for count(*)
    n: Index
    total: Floats | Index


def loop_matches(plan: LoopPlan, rows: Rows) -> Matches | None:
    """Every match of ``plan`` over the rows (``None``: not exactly vectorisable on this input)."""
    n = len(rows.times)
    types: dict[frozenset[str], Mask] = {}
    tm = rows.types_mask
    start, last = rows.exact(plan.start_cond, types), rows.exact(plan.last_cond, types)
    if start is None or last is None:
        return None
    take = edge_bounds(plan.take_cond, types, tm, rows.column, n)
    high = rows.keys.sort(take.high)
    if bool((high & last).any()):
        return None  # why: a row that may extend the loop and complete a match (order subtleties)
    w = plan.wakes[0]  # LOOP
    wake = (np.ones(n, dtype=bool) if w is None else rows.keys.sort(tm(w))) | last

    s = np.flatnonzero(start).astype(np.int64)
    inst = rows.instances(start)
    end = rows.window_end(s, plan.window)
    cand = np.flatnonzero(high).astype(np.int64)
    lo = np.searchsorted(cand, s, side="right").astype(np.int64)
    hi = np.maximum(np.searchsorted(cand, end, side="left").astype(np.int64), lo)
    if take.exact:  # why: no aggregates decide: each run takes every candidate of its window
        counts = hi - lo
        run = np.repeat(np.arange(len(s), dtype=np.int64), counts)
        offsets = within(counts)
        took_pos = cand[np.repeat(lo, counts) + offsets]
        got = (run, took_pos, offsets + 1)
    else:
        spans = hi - lo
        steps = int(spans.max()) if len(spans) else 0
        if steps > _FEW_STEPS and steps * _STEP_COST > int(spans.sum()):
            return None  # why: a few long runs: one numpy pass per step would cost more than the engine
        stepped = _step(plan, rows, cand, lo, hi, types)
        if stepped is None:
            return None
        got = stepped
    return _prefixes(plan, rows, s, inst, end, last, wake, got)


def _step(
    plan: LoopPlan, rows: Rows, cand: Index, lo: Index, hi: Index, types: dict[frozenset[str], Mask]
) -> tuple[Index, Index, Index] | None:
    """The takes of every run (run, key-order position, count after), stepping all runs together."""
    totals = _totals(plan, rows, cand, len(lo))
    if totals is None:
        return None
    runs_out: list[Index] = []
    pos_out: list[Index] = []
    k_out: list[Index] = []
    taken = np.zeros(len(lo), dtype=np.int64)
    active = np.flatnonzero(hi > lo).astype(np.int64)
    j = 0
    while len(active):
        idx = lo[active] + j
        alive = idx < hi[active]
        if not alive.all():  # why: runs whose window holds no more candidates are done
            active, idx = active[alive], idx[alive]
            if not len(active):
                break
        pos = cand[idx]
        try:
            took = _decide(plan.take_cond, rows, rows.keys.order[pos], active, totals, types)
        except Unsupported:
            return None  # why: some value (a NULL, a division by zero) the engine must see itself
        hit = active[took]
        if len(hit):
            row = rows.keys.order[pos[took]]
            for t in totals:
                t.n[hit] += 1
                if t.inputs is not None:
                    t.total[hit] += t.inputs.values[row]  # type: ignore[operator]  # numbers
            taken[hit] += 1
            runs_out.append(hit)
            pos_out.append(pos[took])
            k_out.append(taken[hit].copy())
        j += 1
    if not runs_out:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(runs_out), np.concatenate(pos_out), np.concatenate(k_out)


def _totals(plan: LoopPlan, rows: Rows, cand: Index, runs: int) -> list[_Totals] | None:
    """Each aggregate's zero state per run, with its inputs checked on every candidate row."""
    out = []
    at = rows.keys.order[cand]
    for spec in plan.aggs.specs:
        kind = _KINDS[type(make_aggregate(spec.function, **dict(spec.params)))]
        inputs = None
        total: Floats | Index = np.zeros(runs, dtype=np.int64)
        if spec.field is not None:
            s = rows.column(spec.field)
            if s is None:
                return None
            try:
                inputs = _column(s, len(s))
            except Unsupported:
                return None
            if inputs.kind != "num" or bool(inputs.null[at].any()):
                return None  # why: a NULL skips the update; text raises in the engine
            if inputs.integral:
                most = float(np.abs(inputs.values[at]).max()) if len(at) else 0.0
                if most * (len(cand) + 1) > EXACT:
                    return None  # why: a total that a float cannot hold exactly
            else:
                total = np.zeros(runs, dtype=np.float64)
        elif kind != "count":
            return None
        out.append(
            _Totals(spec.name, kind, spec.include_current, inputs, np.zeros(runs, dtype=np.int64), total)
        )
    return out


def _decide(
    cond: Cond,
    rows: Rows,
    row: Index,
    active: Index,
    totals: list[_Totals],
    types: dict[frozenset[str], Mask],
) -> Mask:
    """``cond`` for each active run on its candidate row (``row``: row order)."""
    if isinstance(cond, Const):
        return np.full(len(row), cond.value, dtype=bool)
    if isinstance(cond, TypeIn):
        m = types.get(cond.types)
        if m is None:
            m = types[cond.types] = rows.types_mask(cond.types)
        return m[row]
    if isinstance(cond, Not):
        return ~_decide(cond.inner, rows, row, active, totals, types)
    if isinstance(cond, And | Or):
        a = _decide(cond.left, rows, row, active, totals, types)
        b = _decide(cond.right, rows, row, active, totals, types)
        return a & b if isinstance(cond, And) else a | b
    if isinstance(cond, Leaf) and cond.tree is not None:
        v = _Runs(rows, row, active, totals, cond.stage).build(cond.tree)
        t = _truth(v)
        return t.values.astype(bool) & ~t.null
    raise Unsupported


class _Runs(_Vectoriser):
    """The vectoriser over the active runs' candidate rows, with aggregate names as arrays."""

    def __init__(self, rows: Rows, row: Index, active: Index, totals: list[_Totals], stage: str) -> None:
        column = rows.column

        def subset(name: str) -> object:
            s = column(name)
            return None if s is None else s.iloc[row]

        super().__init__(subset, len(row))  # type: ignore[arg-type]
        self.row, self.active, self.totals, self.stage = row, active, totals, stage
        self.names = {t.name: i for i, t in enumerate(totals)}

    def _Name(self, node: Name) -> Vec:
        i = self.names.get(node.name)
        if i is None:
            raise Unsupported  # the engine reports the unknown name
        t = self.totals[i]
        n = t.n[self.active]
        total = t.total[self.active]
        if t.include:  # why: the row being tested counts (the stage's own condition)
            n = n + 1
            if t.inputs is not None:
                total = total + t.inputs.values[self.row]  # type: ignore[operator]  # numbers
        if t.kind == "count":
            return Vec("num", n, np.zeros(len(n), dtype=bool), float(len(self.row) + 1), True)
        integral = total.dtype == np.int64
        if t.kind == "sum":
            return _checked(total, integral)
        with np.errstate(all="ignore"):
            avg = total / np.where(n == 0, 1, n)
        v = _checked(avg.astype(np.float64), False)
        return Vec("num", v.values, v.null | (n == 0))


def _checked(values: Floats | Index, integral: bool) -> Vec:
    """A numeric array as a value: NaN (infinities cancelled) is NULL, as a name reads it."""
    null = np.isnan(values) if values.dtype == np.float64 else np.zeros(len(values), dtype=bool)
    bound = float(np.abs(values).max()) if integral and len(values) else math.inf
    return Vec("num", np.where(null, 1.0, values) if null.any() else values, null, bound, integral)


def _prefixes(
    plan: LoopPlan, rows: Rows, s: Index, inst: Index, end: Index, last: Mask, wake: Mask,
    got: tuple[Index, Index, Index],
) -> Matches:  # fmt: skip
    """The matches of the takes ``got`` (run, position, count after): one per prefix that completes."""
    run, pos, k = got
    order = np.lexsort((k, run))
    run, pos, k = run[order], pos[order], k[order]
    off = np.searchsorted(run, np.arange(len(s), dtype=np.int64)).astype(np.int64)
    c = rows.next_true(last)[pos]
    ok = (k >= plan.n) & (c < end[run])
    m_run, m_pos, m_k, m_c = run[ok], pos[ok], k[ok], c[ok]
    y = rows.next_true(wake)[m_pos]
    # why: the run itself completes when the last row is the first to wake it after its k-th row
    tie_row = np.where(y == m_c, m_pos, y)
    tie_sub = (y != m_c).astype(np.int64)
    lens = m_k + 2
    bounds = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=bounds[1:])
    flat = np.empty(int(bounds[-1]), dtype=np.int64)
    flat[bounds[:-1]] = s[m_run]
    flat[bounds[1:] - 1] = m_c
    inner = within(m_k)
    flat[np.repeat(bounds[:-1] + 1, m_k) + inner] = pos[np.repeat(off[m_run], m_k) + inner]
    weights = 1 + np.bincount(run, minlength=len(s)).astype(np.int64)
    return Matches(
        done=m_c, start=s[m_run], inst=inst[m_run], ties=[tie_sub, tie_row], flat=flat, bounds=bounds,
        channels=plan.match_channels, all_start=s, weights=weights,
    )  # fmt: skip
