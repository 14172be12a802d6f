"""What a session's runs produce: one replay's outcome, what its input held, and the kept run.

>>> RunOutcome([], [], [], {}).errors
[]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from workbench.engine.clock import stamp
from workbench.engine.detection import Detection, TraceRecord
from workbench.engine.events import Event
from workbench.engine.faults import ConditionFault
from workbench.engine.matchtable import LazyDetections
from workbench.engine.result import RunResult
from workbench.session.times import NUMBERS, TimeFormat

if TYPE_CHECKING:
    from workbench.session.shown import Partition

if TYPE_CHECKING:
    import pandas as pd

    from workbench.backends.columnar.frame import EventColumns
    from workbench.engine.runtime import Engine

__all__ = [
    "Progress",
    "Replay",
    "RunOutcome",
    "RunSettings",
    "Seen",
    "dropped_note",
    "kept",
    "reporting",
    "result_of",
    "stamped",
    "to_frame",
]

Progress = Callable[[int, int], None]
"""``progress(done, total)``: a replay's progress callback."""


class RunSettings(TypedDict, total=False):
    """How a replay runs each partition group (the keywords it passes on to every run)."""

    trace: bool
    out_of_orderness: int | float
    strict: bool
    order_by: Sequence[str]


@dataclass(frozen=True)
class Seen:
    """What one partition group's input held: event types, fields, rows, and whether it had keys."""

    types: frozenset[str]
    fields: frozenset[str]
    rows: int
    keyed: bool

    @classmethod
    def of_events(cls, events: Sequence[Event]) -> Seen:
        types = frozenset(e.type for e in events)
        fields = frozenset(f for e in events for f in e.fields)
        return cls(types, fields, len(events), any(e.key is not None for e in events))

    @classmethod
    def of_columns(cls, cols: EventColumns) -> Seen:
        return cls(cols.types_present(), cols.fields_present(), cols.rows, cols.keyed())


def to_frame(
    detections: Sequence[Detection],
    times: TimeFormat = NUMBERS,
    partitions: Mapping[str, Partition] | None = None,
    measures: Sequence[str] = (),
) -> pd.DataFrame:
    """Detections as a DataFrame (the single place that picks the conversion); with ``times`` of a
    datetime input, ``time``/``first_time``/``last_time`` are Timestamps in the input's zone, and so
    are the keys of patterns that ``partitions`` (pattern name: its partition fields) says are
    partitioned by a datetime field. ``measures``: the measure columns the run's patterns declare,
    there (all missing) even when no detection has them, so a run's columns do not depend on what
    it found."""
    import pandas as pd

    from workbench.results import detections_to_frame
    from workbench.session.shown import keys_as_dates

    frame = keys_as_dates(times.frame(detections_to_frame(detections)), times, partitions or {})
    absent = [name for name in dict.fromkeys(measures) if name not in frame.columns]
    if absent:
        attrs = dict(frame.attrs)
        blank = {name: pd.Series([None] * len(frame), index=frame.index, dtype=object) for name in absent}
        frame = pd.concat([frame, pd.DataFrame(blank, index=frame.index)], axis=1)
        frame.attrs.update(attrs)
    return frame


@dataclass
class RunOutcome:
    """What one replay produced."""

    detections: Sequence[Detection]  # a replay's own (lazy) list when one pattern group ran
    trace: list[TraceRecord]
    late: list[Event]
    events: Mapping[int, Event]  # by seq (a replay of a DataFrame builds them on first read)
    errors: list[ConditionFault] = field(default_factory=list)
    dropped: int = 0  # partial matches and group instances dropped by caps (``RunResult.dropped``)


def dropped_note(dropped: int) -> str:
    """What every front end says when a run dropped partial matches to stay within its caps.

    >>> dropped_note(3).split(" dropped ")[0]
    '3 partial match(es) or group instance(s)'
    """
    return (
        f"{dropped} partial match(es) or group instance(s) dropped to stay within max_partial_matches "
        "(per key) or the engine's max_live budget; the oldest went first"
    )


@dataclass
class Replay:
    """What :meth:`CepSession.replay` produced: the outcome, and what the input held."""

    outcome: RunOutcome
    types: frozenset[str]  # the event types of the input
    fields: frozenset[str]  # the fields at least one event has
    rows: int  # the number of events
    keyed: bool = True  # False: no event had a key, so every event was in one partition
    missing_keys: int = 0  # events without a value in their 'partition by' column (allowed: NULL key)


@dataclass
class _Run:
    detections: Sequence[Detection] = field(default_factory=list)
    trace: list[TraceRecord] = field(default_factory=list)
    events: Mapping[int, Event] = field(default_factory=dict)
    times: TimeFormat = NUMBERS  # how the input gave its times (dates for a datetime column)


def reporting(events: Sequence[Event], progress: Progress | None) -> Iterator[Event]:
    """The events, calling ``progress(done, total)`` about every 1% of the way."""
    total = len(events)
    step = max(total // 100, 1)
    for i, e in enumerate(events):
        if progress is not None and i % step == 0:
            progress(i, total)
        yield e


def result_of(engine: Engine) -> RunResult:
    """What an engine has produced so far, as a replay returns it."""
    return RunResult(
        engine.detections,
        engine.reactions,
        engine.late,
        engine.trace_records,
        engine.errors,
        engine.stats["dropped"],
    )


def stamped(events: Sequence[Event]) -> list[Event]:
    """The events as the engine numbered them (arrival positions 0..n-1)."""
    return [stamp(e, i) for i, e in enumerate(events)]


def kept(detections: Sequence[Detection]) -> Sequence[Detection]:
    """A run's detections to keep: a replay's lazy list as it is (built when read), else a copy."""
    return detections if isinstance(detections, LazyDetections) else list(detections)
