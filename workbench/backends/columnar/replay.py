"""Replay a DataFrame through the engine without building an event for rows no pattern can use.

A replay of an in-order input is processed as it arrives, so an event of a type that no pattern
reads does exactly one thing: it moves the clock, and the clock only matters when a timer is due.
The engine fires due timers before the next event it dispatches anyway, and a timer's detection
carries the timer's own time, so skipping such a row changes nothing in the output: the same
detections in the same order, the same trace. :func:`replay_frame` therefore builds
:class:`~workbench.engine.events.Event` objects only for the rows whose type some pattern reads
(stamped with their row position, as the engine would stamp them) and feeds those.

Where that argument does not hold it feeds every row, as :func:`~workbench.results.frame_to_events`
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
from workbench.backends.columnar.prune import KeyOrder, matcher_mask
from workbench.engine.detection import Detection
from workbench.engine.matcher import Matcher, Pattern
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
) -> RunResult:
    """:func:`replay_frame` over converted columns; ``progress(done, total)`` about every 1%."""
    engine = Engine(patterns, out_of_orderness=out_of_orderness, trace=trace, strict=strict)
    rows = rows_to_feed(engine, cols)
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
    engine.finish(until)
    return RunResult(engine.detections, engine.reactions, engine.late, engine.trace_records, engine.errors)


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
        times = cols.columns["time"].to_numpy(dtype=np.float64)
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
    yield engine.finish()


def rows_to_feed(
    engine: Engine, cols: EventColumns, *, carried: bool = False
) -> npt.NDArray[np.int64] | None:
    """The row positions the engine needs (:mod:`~workbench.backends.columnar.prune`), or ``None`` for all.

    ``carried``: the engine may hold partial matches from earlier rows (a later slice of the input).
    """
    if engine.out_of_orderness or engine.time_mode != "event" or not cols.clean():
        return None
    times = cols.columns["time"].to_numpy(dtype=np.float64)
    if len(times) > 1 and bool((np.diff(times) < 0).any()):
        return None  # why: a skipped newer row could make a later row late
    type_codes, type_uniques = cols.type_codes()
    keys = KeyOrder(cols.key_codes())
    fed = np.zeros(cols.rows, dtype=bool)
    for m in engine.matchers:
        fed |= matcher_mask(m, type_codes, type_uniques, times, keys, carried=carried)
        if fed.all():
            return None
    return np.flatnonzero(fed).astype(np.int64)
