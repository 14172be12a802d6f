"""The timeline's values: states, row ids, bands, markers, instances, views; the state rule.

:mod:`workbench.widgets.model` builds them from trace records and detections; the figure draws them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import StrEnum

from workbench.engine.detection import TraceKind, TraceRecord
from workbench.engine.events import Event

__all__ = [
    "LEVELS",
    "Band",
    "DetectionMark",
    "Instance",
    "Marker",
    "RowId",
    "RowState",
    "State",
    "TimeText",
    "View",
    "bin_markers",
    "describe",
    "next_state",
    "shows_paused",
    "subject",
]


TimeText = Callable[[float], str]
"""How a time is written in texts (the input's dates, or the number)."""


class State(StrEnum):
    """The state of a channel, stage or instance over an interval."""

    # in legend order: the ways to go on, the good endings, then the bad ones
    WAITING = "waiting"
    ACTIVE = "active"
    PAUSED = "paused"
    COUNTED = "counted"
    NEGATED = "negated"
    DETECTED = "detected"
    STOPPED = "stopped"
    TIMED_OUT = "timed_out"
    VIOLATED = "violated"
    FAILED = "failed"
    PRUNED = "pruned"
    HELD = "held"


_SET_STATE: dict[TraceKind, State] = {
    kind: State(kind.value)
    for kind in (
        TraceKind.STOPPED,
        TraceKind.NEGATED,
        TraceKind.VIOLATED,
        TraceKind.TIMED_OUT,
        TraceKind.DETECTED,
        TraceKind.FAILED,
        TraceKind.PRUNED,
        TraceKind.HELD,
    )
}
LEVELS = ("element", "instance", "key", "pattern")
"""Aggregation levels of a :class:`View`, finest first."""


@dataclass(frozen=True, slots=True)
class RowId:
    """A row: an instance (``element is None``) or one of its channels or stages."""

    pattern: str
    key: Hashable
    instance: int
    element: str | None = None

    def label(self) -> str:
        """``key · pattern#instance · element`` (the instance row says ``(instance)``)."""
        return f"{self.key} · {self.pattern}#{self.instance} · {self.element or '(instance)'}"


@dataclass(frozen=True, slots=True)
class RowState:
    """A row's state at one time: ``live`` is False once its instance has ended."""

    row: RowId
    state: State
    label: str
    live: bool


@dataclass(frozen=True, slots=True)
class Band:
    """A state segment ``[start, end)`` on a row (``label`` is ``k/n`` for counted states)."""

    row: str
    start: float
    end: float
    state: State
    label: str = ""


@dataclass(frozen=True, slots=True)
class Marker:
    """A trace record (or ``count`` records binned together) at a point of a row."""

    row: str
    time: float
    kind: str
    text: str
    seq: int | None = None
    count: int = 1


@dataclass(frozen=True, slots=True)
class DetectionMark:
    """A detection on its instance's row; ``index`` is its position in the model's detections."""

    row: str
    time: float
    index: int
    kind: str
    text: str


@dataclass(slots=True)
class Instance:
    """Everything the model knows about one instance (mutable: the live mode appends)."""

    pattern: str
    key: Hashable
    instance: int
    start: float
    end: float | None = None
    last: float = -math.inf
    elements: list[str] = field(default_factory=list)
    records: list[TraceRecord] = field(default_factory=list)
    # per row (None = the instance): [(time, state, label)], the state from that time on
    changes: dict[str | None, list[tuple[float, State, str]]] = field(default_factory=dict)
    paused_from: dict[str | None, tuple[State, str]] = field(default_factory=dict)

    def row(self, element: str | None = None) -> RowId:
        """The :class:`RowId` of the instance (or one of its elements)."""
        return RowId(self.pattern, self.key, self.instance, element)

    def ended_by(self, t: float) -> bool:
        """Whether the instance has ended at time ``t``."""
        return self.end is not None and self.end <= t


@dataclass(frozen=True, slots=True)
class View:
    """What the figure draws: row labels (top to bottom) and columnar glyph data."""

    rows: list[str]
    bands: list[Band]
    markers: list[Marker]
    detections: list[DetectionMark]
    level: str
    time: float
    hidden_instances: int
    binned: bool
    page: int = 0  # the page of rows shown (paged views), 0-based
    pages: int = 1  # how many pages of rows the selection fills
    extent: tuple[float, float] | None = None  # the times of the rows drawn (paged views)


def next_state(
    current: tuple[State, str], paused_from: tuple[State, str] | None, record: TraceRecord
) -> tuple[State, str]:
    """The state (and label) a row moves to when ``record`` applies to it.

    >>> from workbench.engine import TraceRecord, TraceKind
    >>> next_state((State.ACTIVE, ""), None, TraceRecord(1, "p", "k", 1, TraceKind.COUNTED, "c",
    ...            detail={"count": 2, "of": 3}))
    (<State.COUNTED: 'counted'>, '2/3')
    """
    kind = record.kind
    if kind in (TraceKind.STARTED, TraceKind.EXTENDED):
        return State.ACTIVE, ""
    if kind is TraceKind.ACCEPTED:
        return current if current[0] is State.COUNTED else (State.ACTIVE, "")
    if kind is TraceKind.COUNTED:
        k, n = record.detail.get("count"), record.detail.get("of")
        return State.COUNTED, (f"{k}/{n}" if n is not None else f"{k}") if k is not None else ""
    if kind is TraceKind.PAUSED:
        return State.PAUSED, ""
    if kind is TraceKind.RESUMED:
        return paused_from if paused_from is not None else (State.ACTIVE, "")
    if kind in _SET_STATE:
        return _SET_STATE[kind], ""
    if kind is TraceKind.IGNORED and record.detail.get("paused"):
        return State.PAUSED, ""  # an event ignored because the channel is paused
    return current  # IGNORED, LATE: markers only


def subject(record: TraceRecord) -> str | None:
    """The row a record applies to: its element, except that ``failed`` is about the whole instance.

    A ``failed`` record's element names the cause (the channel whose timeout or ``@stop`` ended the
    group), so it lands on the instance's row.
    """
    return None if record.kind is TraceKind.FAILED else record.element


def shows_paused(record: TraceRecord) -> bool:
    """A first record that proves its channel was paused before it (a channel declared paused)."""
    if record.kind is TraceKind.RESUMED:
        return True
    return record.kind is TraceKind.IGNORED and bool(record.detail.get("paused"))


def describe(record: TraceRecord, events: dict[int, Event], show: TimeText = str) -> str:
    parts = [str(record.kind)]
    if record.element is not None:
        parts.append(f"on {record.element}")
    if record.event_seq is not None:
        e = events.get(record.event_seq)
        parts.append(e.describe() if e is not None else f"event #{record.event_seq}")
    if record.detail:
        parts.append(", ".join(f"{k}={v}" for k, v in record.detail.items()))
    return " ".join(parts) + f" @ {show(record.time)}"


def bin_markers(markers: list[Marker], limit: int, show: TimeText = str) -> list[Marker]:
    """Fold markers into per (row, kind, time bucket) bins so that at most about ``limit`` remain."""
    groups = {(m.row, m.kind) for m in markers}
    buckets = max(1, limit // max(1, len(groups)))
    lo = min(m.time for m in markers)
    hi = max(m.time for m in markers)
    width = (hi - lo) / buckets or 1.0
    bins: dict[tuple[str, str, int], list[Marker]] = {}
    for m in markers:
        b = min(buckets - 1, int((m.time - lo) / width))
        bins.setdefault((m.row, m.kind, b), []).append(m)
    out = []
    for (row, kind, _), ms in bins.items():
        if len(ms) == 1:
            out.append(ms[0])
            continue
        t0, t1 = ms[0].time, ms[-1].time
        text = f"{len(ms)} × {kind} between {show(t0)} and {show(t1)}"
        out.append(Marker(row, sum(m.time for m in ms) / len(ms), kind, text, None, len(ms)))
    return out
