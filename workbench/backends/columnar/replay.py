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

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.prune import KeyOrder, matcher_mask
from workbench.engine.matcher import Matcher, Pattern
from workbench.engine.runtime import Engine, RunResult

__all__ = ["replay_columns", "replay_frame", "rows_to_feed"]


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


def rows_to_feed(engine: Engine, cols: EventColumns) -> npt.NDArray[np.int64] | None:
    """The row positions the engine needs (:mod:`~workbench.backends.columnar.prune`), or ``None`` for all."""
    if engine.out_of_orderness or engine.time_mode != "event" or not cols.clean():
        return None
    times = cols.columns["time"].to_numpy(dtype=np.float64)
    if len(times) > 1 and bool((np.diff(times) < 0).any()):
        return None  # why: a skipped newer row could make a later row late
    type_codes, type_uniques = cols.type_codes()
    keys = KeyOrder(cols.key_codes())
    fed = np.zeros(cols.rows, dtype=bool)
    for m in engine.matchers:
        fed |= matcher_mask(m, type_codes, type_uniques, times, keys)
        if fed.all():
            return None
    return np.flatnonzero(fed).astype(np.int64)
