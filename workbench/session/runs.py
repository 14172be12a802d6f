"""What a session's runs produce: one replay's outcome, what its input held, and the kept run.

>>> RunOutcome([], [], [], {}).errors
[]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.engine.detection import Detection, TraceRecord
from workbench.engine.events import Event
from workbench.engine.faults import ConditionFault
from workbench.session.times import NUMBERS, TimeFormat

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Replay", "RunOutcome", "to_frame"]


def to_frame(detections: Sequence[Detection], times: TimeFormat = NUMBERS) -> pd.DataFrame:
    """Detections as a DataFrame (the single place that picks the conversion); with ``times`` of a
    datetime input, ``time``/``first_time``/``last_time`` are Timestamps in the input's zone."""
    from workbench.results import detections_to_frame

    return times.frame(detections_to_frame(detections))


@dataclass
class RunOutcome:
    """What one replay produced."""

    detections: list[Detection]
    trace: list[TraceRecord]
    late: list[Event]
    events: Mapping[int, Event]  # by seq (a replay of a DataFrame builds them on first read)
    errors: list[ConditionFault] = field(default_factory=list)


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
    detections: list[Detection] = field(default_factory=list)
    trace: list[TraceRecord] = field(default_factory=list)
    events: Mapping[int, Event] = field(default_factory=dict)
    times: TimeFormat = NUMBERS  # how the input gave its times (dates for a datetime column)
