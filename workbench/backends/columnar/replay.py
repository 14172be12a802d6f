"""Replay a DataFrame through the engine without building an event for rows no pattern can use.

A replay of an in-order input is processed as it arrives, so an event of a type that no pattern
reads does exactly one thing: it moves the clock, and the clock only matters when a timer is due.
The engine fires due timers before the next event it dispatches anyway, and a timer's detection
carries the timer's own time, so skipping such a row changes nothing in the output: the same
detections in the same order, the same trace. :func:`replay_frame` therefore builds
:class:`~workbench.engine.events.Event` objects only for the rows whose type some pattern reads
(stamped with their row position, as the engine would stamp them) and feeds those.

When every pattern is a deterministic sequence the vectorised plan handles exactly
(:mod:`~workbench.backends.columnar.vectorplan`: single stages, ``next``/``followed by``, ``not followed
by``, no timeouts or trace, ...), no event is fed at all: numpy finds the same detections.

Where the pruning argument does not hold it feeds every row, as :func:`~workbench.results.frame_to_events`
would: when a pattern can use events of any type (strict contiguity: ``next``), when times go
backwards (a skipped row could make a later one late), or with ``out_of_orderness`` (rows are
buffered and released by the clock).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.prune import (
    KeyOrder,
    StageChain,
    dead_ends_allowed,
    matcher_mask,
    nfa_rules,
    order_reason,
)
from workbench.backends.columnar.vectorplan import engine_reason, vector_detections
from workbench.engine.detection import Detection
from workbench.engine.detection import renumber as set_instance
from workbench.engine.gcpause import gc_paused
from workbench.engine.matcher import Matcher, Pattern
from workbench.engine.matchtable import LazyDetections
from workbench.engine.nfa.graph import Action
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.runtime import Engine, RunResult
from workbench.errors import CepError

__all__ = ["replay_chunks", "replay_columns", "replay_frame", "rows_to_feed"]


def replay_frame(
    patterns: Sequence[Pattern | Matcher],
    frame: pd.DataFrame,
    *,
    type_column: str = "type",
    time_column: str | None = None,
    key_column: str | None = "key",
    out_of_orderness: int | float = 0,
    until: int | float | None = None,
    trace: bool = False,
    strict: bool = False,
) -> RunResult:
    """Run ``patterns`` over the rows of ``frame``, then flush (as :func:`~workbench.engine.runtime.run`).

    Raises :class:`~workbench.errors.EventError` for a bad row exactly as
    :func:`~workbench.results.frame_to_events` does, before anything runs.

    >>> from workbench.engine.nfa import SequencePattern, Stage
    >>> p = SequencePattern("p", (Stage("a", types=("login",)), Stage("b", types=("trade",))))
    >>> df = pd.DataFrame({"type": ["login", "view", "trade"], "time": [1, 2, 3], "key": "k"})
    >>> [d.seqs for d in replay_frame([p], df).detections]
    [(0, 2)]
    """
    cols = EventColumns.from_frame(
        frame, type_column=type_column, time_column=time_column, key_column=key_column
    )
    return replay_columns(
        patterns, cols, out_of_orderness=out_of_orderness, until=until, trace=trace, strict=strict
    )


def replay_columns(
    patterns: Sequence[Pattern | Matcher],
    cols: EventColumns,
    *,
    out_of_orderness: int | float = 0,
    until: int | float | None = None,
    trace: bool = False,
    strict: bool = False,
    progress: Callable[[int, int], None] | None = None,
    order_by: Sequence[str] = (),
) -> RunResult:
    """:func:`replay_frame` over converted columns; ``progress(done, total)`` about every 1%."""
    engine = Engine(
        patterns,
        out_of_orderness=out_of_orderness,
        trace=trace,
        strict=strict,
        order_by=list(order_by) or None,
    )
    fast = _vectorised(engine, cols, until)
    if fast is not None:  # why: every pattern qualifies: numpy found the detections, nothing is fed
        if progress is not None:
            progress(cols.rows, cols.rows)
        return RunResult(_measured(engine, fast), [], [], [], engine.errors, 0)
    rows, renumber = feed_plan(engine, cols)
    # every row when rows is None: that also validates each row, with the row's own message
    events = cols.events() if rows is None else cols.events_at(rows)
    if progress is None:
        engine.process_many(events)
    else:
        step = max(len(events) // 100, 1)
        for start in range(0, len(events), step):
            progress(start, len(events))
            engine.process_many(events[start : start + step])
        progress(len(events), len(events))
    if rows is not None and cols.rows:  # why: rows left out at the end still moved the input's time
        engine.pass_time(float(cols.attrs["time"].iloc[-1]))
    engine.finish(until)
    if renumber:
        for d in engine.detections:  # why in place: this engine's detections are not out yet
            _true_instance(d, renumber)
    return RunResult(
        engine.detections, engine.reactions, engine.late, engine.trace_records, engine.errors,
        engine.stats["dropped"],
    )  # fmt: skip


def _measured(engine: Engine, found: LazyDetections) -> LazyDetections:
    """``found`` with the measures of the patterns that have some, added now (in order: a measure's
    error is recorded as the engine would record it, at the detection's turn); the table still gives
    the other columns of a DataFrame. ``found`` itself without any."""
    measures = {m.name: e for m in engine.matchers if (e := getattr(m, "measures", None)) is not None}
    if not measures:
        return found
    with gc_paused():  # why: a burst of acyclic records (values, detections) over a large live heap
        done = [measures[d.pattern].apply(d) if d.pattern in measures else d for d in found]
    return LazyDetections(found.table, lambda: done, measured=True)


def _vectorised(engine: Engine, cols: EventColumns, until: int | float | None) -> LazyDetections | None:
    """The detections by the vectorised plan (:mod:`.vectorplan`), or ``None`` when it does not apply."""
    if engine_reason(engine, until) is not None:
        return None
    return vector_detections(engine, cols)


def replay_chunks(
    patterns: Sequence[Pattern | Matcher],
    frames: Iterable[pd.DataFrame],
    *,
    type_column: str = "type",
    time_column: str | None = None,
    key_column: str | None = "key",
) -> Iterator[list[Detection]]:
    """Replay consecutive slices of one in-order input through one engine; yield each slice's detections.

    The engine's state carries over from slice to slice, so the detections are those of one
    replay of the whole input (the last list also holds the final flush). Each slice is pruned on
    its own, feeding in addition every row that a partial match from an earlier slice could still
    react to (within the window of the slice's start, and each key's first row). Memory stays
    bounded by one slice plus the live partial matches. Raises :class:`~workbench.errors.CepError`
    when times go backwards (a pruned replay cannot tell which rows a full one would find late).
    """
    engine = Engine(patterns, collect=False)
    offset, newest = 0, -np.inf
    for frame in frames:
        if frame.empty:
            continue
        cols = EventColumns.from_frame(
            frame, type_column=type_column, time_column=time_column, key_column=key_column
        )
        times = cols.attrs["time"].to_numpy(dtype=np.float64)
        if times[0] < newest or bool((np.diff(times) < 0).any()):
            msg = (
                f"rows {offset}..{offset + len(times) - 1}: times go backwards; replay the input in one piece"
            )
            raise CepError(msg)
        rows = rows_to_feed(engine, cols, carried=offset > 0)
        events = cols.events() if rows is None else cols.events_at(rows)
        if offset:
            events = [
                e.with_seq(e.seq + offset if rows is not None else i + offset) for i, e in enumerate(events)
            ]
        yield engine.process_many(events)
        offset += cols.rows
        newest = times[-1]
    if np.isfinite(newest):  # why: rows left out at the end still moved the input's time
        engine.pass_time(float(newest))
    yield engine.finish()


def rows_to_feed(
    engine: Engine, cols: EventColumns, *, carried: bool = False
) -> npt.NDArray[np.int64] | None:
    """The row positions the engine needs (:mod:`~workbench.backends.columnar.prune`), or ``None`` for all.

    ``carried``: the engine may hold partial matches from earlier rows (a later slice of the input).
    """
    return feed_plan(engine, cols, carried=carried, dead_ends=False)[0]


#: per pattern name and key: the true instance id of each instance the pruned replay starts
Renumber = dict[str, dict[object, list[int]]]


def feed_plan(
    engine: Engine, cols: EventColumns, *, carried: bool = False, dead_ends: bool = True
) -> tuple[npt.NDArray[np.int64] | None, Renumber]:
    """:func:`rows_to_feed`, and how to renumber the instances when dead-end starts are left out.

    Dead-end starts (:class:`~workbench.backends.columnar.prune.StageChain`) of the patterns where
    only the instance ids could show them (:func:`~workbench.backends.columnar.prune.dead_ends_allowed`)
    are not fed; every start row that is fed anyway (for another reason or pattern) is fed as a
    start, so the feeding is recomputed until it settles.
    """
    # why derive: derived events can complete what the rows alone cannot
    if engine.derive is not None or order_reason(engine, cols) is not None:
        return None, {}
    times = cols.attrs["time"].to_numpy(dtype=np.float64)
    type_codes, type_uniques = cols.type_codes()
    keys = KeyOrder(cols.key_codes())
    sorted_times = keys.sort(times)
    chains: list[StageChain | None] = []
    for m in engine.matchers:
        chain = None
        if not carried and isinstance(m, NFAMatcher) and nfa_rules(m) is not None and _start_free(m):
            chain = StageChain(m, keys.sort(type_codes), type_uniques, sorted_times, keys, cols.column)
        chains.append(chain)
    pruned = [
        dead_ends and c is not None and c.exact and dead_ends_allowed(m, engine.tracing)
        for m, c in zip(engine.matchers, chains, strict=True)
    ]
    fed_sorted = np.zeros(cols.rows, dtype=bool)
    while True:
        fed = np.zeros(cols.rows, dtype=bool)
        for m, c, p in zip(engine.matchers, chains, pruned, strict=True):
            starts = None if c is None else (c.viable | (c.startable & fed_sorted)) if p else c.startable
            fed |= matcher_mask(
                m, type_codes, type_uniques, times, keys, carried=carried, stages=c, starts=starts
            )
        again = keys.sort(fed)
        if not any(p for p in pruned) or bool((again == fed_sorted).all()):
            break
        fed_sorted = again
    renumber = _renumber(engine.matchers, chains, pruned, keys, keys.sort(fed), cols)
    if fed.all() and not renumber:
        return None, {}
    return np.flatnonzero(fed).astype(np.int64), renumber


def _true_instance(d: Detection, renumber: Renumber) -> None:
    """Give ``d`` its instance id of a replay that fed every start row."""
    table = renumber.get(d.pattern)
    if table is not None:
        set_instance(d, table[d.key][d.instance - 1])


def _key_of(value: object) -> object:
    return None if value is None or (isinstance(value, float) and value != value) or value is pd.NA else value


def _start_free(matcher: NFAMatcher) -> bool:
    """Whether partial matches begin only by taking a row at the start state, never wait there."""
    nfa = matcher.nfa
    if any(tr.action != Action.TAKE for tr in nfa.states[nfa.start].transitions):
        return False  # why: an optional first stage starts partial matches at later states' rows
    return all(tr.target != nfa.start for st in nfa.states.values() for tr in st.transitions)


def _renumber(
    matchers: Sequence[Matcher], chains: list[StageChain | None], pruned: list[bool],
    keys: KeyOrder, fed: npt.NDArray[np.bool_], cols: EventColumns,
) -> Renumber:  # fmt: skip
    """Per pruned pattern with a left-out start: the true instance ids of the starts that are fed."""
    out: Renumber = {}
    key_values = cols.attr_values("key") if "key" in cols.names else None
    for m, c, p in zip(matchers, chains, pruned, strict=True):
        if not p or c is None:
            continue
        taken = c.startable & fed
        if bool((taken == c.startable).all()):
            continue
        # the instance id of a start row: its rank among its key's start rows
        rank = np.cumsum(c.startable) - np.maximum.accumulate(
            np.where(keys.first, np.cumsum(c.startable) - c.startable, 0)
        )
        table: dict[object, list[int]] = {}
        for pos in np.flatnonzero(taken).tolist():
            row = int(keys.order[pos])
            key = None if key_values is None else _key_of(key_values[row])
            table.setdefault(key, []).append(int(rank[pos]))
        out[m.name] = table
    return out
