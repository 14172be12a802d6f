"""The records the engine emits: detections, channel reactions and trace entries.

One :class:`Detection` type serves every pattern family. A reaction-group detection lists the events
in the order the group recorded them, each with the channel it came on, plus the ``@not`` channels
proved absent; a sequence match lists its events stage by stage (``by_stage()`` gives Flink's
``stage name -> [events]`` view). ``kind`` is ``"match"`` or ``"timeout"`` (a timed-out partial
match or a group that timed out without success).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from workbench.engine.events import Event
from workbench.engine.native import MODULE

if TYPE_CHECKING:
    from workbench.engine.expr.ir import Node

__all__ = [
    "DETECTION_COLUMNS",
    "Detection",
    "MeasureValues",
    "Reaction",
    "TraceKind",
    "TraceRecord",
    "new_match",
    "renumber",
    "with_measures",
]

DETECTION_COLUMNS: tuple[str, ...] = (
    "pattern",
    "key",
    "instance",
    "kind",
    "emit_time",
    "n_events",
    "events",
    "types",
    "channels",
    "negated",
    "initiator",
    "first_time",
    "last_time",
    "extra",
)
"""Columns of :func:`workbench.results.detections_to_frame`, in order (a measure cannot take one)."""

MATCH = "match"
TIMEOUT = "timeout"


class MeasureValues(Mapping[str, object]):
    """A detection's measures: name -> value, in declared order.

    ``kinds`` (shared by every detection of one pattern) says which are event times (``"time"``)
    and differences of times (``"duration"``), so results can show them as dates; ``exprs`` (shared
    too, possibly empty) are the measures' expressions, so results can tell which read a field
    that held datetimes in the input.

    >>> m = MeasureValues({"entry": 10.5, "at": 7}, {"entry": "value", "at": "time"})
    >>> dict(m), m.kinds["at"]
    ({'entry': 10.5, 'at': 7}, 'time')
    """

    __slots__ = ("data", "exprs", "kinds")

    def __init__(
        self, values: Mapping[str, object], kinds: Mapping[str, str], exprs: Mapping[str, Node] | None = None
    ) -> None:
        self.data = dict(values)
        self.kinds = kinds
        self.exprs: Mapping[str, Node] = exprs if exprs is not None else {}

    def __getitem__(self, name: str) -> object:
        return self.data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self.data == dict(other)

    def __hash__(self) -> int:
        # why: immutable, so one shared empty instance can be every detection's default (no
        # allocation per detection); equal mappings have equal lengths
        return len(self.data)

    def __repr__(self) -> str:
        return f"MeasureValues({self.data!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (MeasureValues, (self.data, dict(self.kinds), dict(self.exprs)))


#: the measures of a detection whose pattern has none (shared: nothing is allocated per detection)
NO_MEASURES = MeasureValues({}, {})


@dataclass(frozen=True, slots=True)
class Detection:
    """One detection (a match, or a timeout) of one pattern instance.

    Attributes:
        pattern: the pattern's name.
        key: the partition key the instance belongs to.
        instance: the instance id (unique per pattern within one engine run).
        kind: ``"match"`` or ``"timeout"``.
        time: emit time (event time, ms).
        events: the contributing events, in the order the pattern lists them.
        channels: for each event, the channel or stage it came on (parallel to ``events``).
        negated: ids of the ``@not`` channels satisfied by absence.
        initiator: the event that started the instance (reaction groups), if any.
        extra: family-specific data: ``"tree"`` for nested groups, ``"aggregate"`` for window
            accumulators, ``"exit"`` (``"and"``/``"or"``), ...
        measures: the pattern's measures, name -> value in declared order (empty without any).
    """

    pattern: str
    key: Hashable
    instance: int
    kind: str
    time: int | float
    events: tuple[Event, ...]
    channels: tuple[str, ...]
    negated: tuple[str, ...] = ()
    initiator: Event | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    measures: Mapping[str, object] = NO_MEASURES

    def by_stage(self) -> dict[str, list[Event]]:
        """Flink's view: stage (or channel) name -> its events, in order of first appearance."""
        out: dict[str, list[Event]] = {}
        for name, event in zip(self.channels, self.events, strict=True):
            out.setdefault(name, []).append(event)
        return out

    @property
    def seqs(self) -> tuple[int, ...]:
        """Arrival positions of the events."""
        return tuple(e.seq for e in self.events)


#: the slot setters of :class:`Detection`, in field order (they bypass the frozen ``__setattr__``)
_SETTERS = tuple(Detection.__dict__[name].__set__ for name in Detection.__slots__)


_new = object.__new__


def _new_match_python(
    pattern: str, key: Hashable, instance: int, kind: str, time: int | float,
    events: tuple[Event, ...], channels: tuple[str, ...],
) -> Detection:  # fmt: skip
    """``Detection(pattern, key, instance, kind, time, events, channels)`` with the default optional
    fields, without the frozen dataclass ``__init__`` (an ``object.__setattr__`` call per field
    and a default-factory call): each slot is stored by its own descriptor.

    (Not faster tricks such as building a slot-compatible object and assigning its ``__class__``:
    that assignment is an ``object.__setattr__`` audit event, the mark of a sandbox escape, on
    every detection.)

    >>> _new_match_python("p", "k", 1, "match", 5, (), ()) == Detection("p", "k", 1, "match", 5, (), ())
    True
    """
    d = _new(Detection)
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10 = _SETTERS
    s0(d, pattern)
    s1(d, key)
    s2(d, instance)
    s3(d, kind)
    s4(d, time)
    s5(d, events)
    s6(d, channels)
    s7(d, ())
    s8(d, None)
    s9(d, {})
    s10(d, NO_MEASURES)
    return d


def _bound_new_match() -> Callable[
    [str, Hashable, int, str, int | float, tuple[Event, ...], tuple[str, ...]], Detection
]:
    """The native core's ``new_match`` (the same result, built in C, several times faster), else the
    pure-Python one (:mod:`workbench.engine.native`)."""
    native = MODULE
    if native is None:
        return _new_match_python
    try:
        built: Callable[
            [str, Hashable, int, str, int | float, tuple[Event, ...], tuple[str, ...]], Detection
        ] = native.bind_detection(Detection, NO_MEASURES)
    except TypeError:  # why: a native core built for other Detection slots: the twin still works
        return _new_match_python
    return built


#: ``Detection(pattern, key, instance, kind, time, events, channels)`` with the default optional
#: fields, without the frozen dataclass ``__init__`` (see :func:`_new_match_python`, its reference)
new_match = _bound_new_match()


def with_measures(d: Detection, measures: Mapping[str, object]) -> Detection:
    """``dataclasses.replace(d, measures=measures)``, slot by slot (a generic ``replace`` reads the
    fields and calls the frozen ``__init__``: several times slower, once per detection).

    >>> d = with_measures(Detection("p", "k", 1, "match", 5, (), ()), {"n": 1})
    >>> d == Detection("p", "k", 1, "match", 5, (), (), measures={"n": 1})
    True
    """
    out = _new(Detection)
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10 = _SETTERS
    s0(out, d.pattern)
    s1(out, d.key)
    s2(out, d.instance)
    s3(out, d.kind)
    s4(out, d.time)
    s5(out, d.events)
    s6(out, d.channels)
    s7(out, d.negated)
    s8(out, d.initiator)
    s9(out, d.extra)
    s10(out, measures)
    return out


def renumber(d: Detection, instance: int) -> None:
    """Give ``d`` another instance id in place: only for detections their maker still holds alone
    (a pruned replay's own engine, before it returns them).

    >>> d = Detection("p", "k", 1, "match", 5, (), ())
    >>> renumber(d, 7)
    >>> d.instance
    7
    """
    _SETTERS[2](d, instance)


@dataclass(frozen=True, slots=True)
class Reaction:
    """A channel accepted an event (what a Prova channel continuation such as ``println`` sees).

    ``counter``: the counter the continuation incremented (the channel's ``counts``), if any.
    """

    pattern: str
    key: Hashable
    instance: int
    channel: str
    event: Event
    time: int | float
    status: str = "accepted"
    counter: str | None = None


class TraceKind(StrEnum):
    """What happened to an instance, a channel or a partial match."""

    STARTED = "started"
    ACCEPTED = "accepted"
    COUNTED = "counted"
    PAUSED = "paused"
    RESUMED = "resumed"
    STOPPED = "stopped"
    NEGATED = "negated"
    VIOLATED = "violated"
    TIMED_OUT = "timed_out"
    DETECTED = "detected"
    FAILED = "failed"
    EXTENDED = "extended"
    PRUNED = "pruned"
    HELD = "held"
    IGNORED = "ignored"
    LATE = "late"
    REJECTED = "rejected"  # a near miss: the event reached a stage or channel, its condition failed


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One state change, at event time ``time``.

    ``element`` is the channel or stage concerned (``None`` for the whole instance); ``event_seq``
    the event that caused it (``None`` for timers); ``detail`` free data such as ``{"count": 2,
    "of": 3}``.
    """

    time: int | float
    pattern: str
    key: Hashable
    instance: int
    kind: TraceKind
    element: str | None = None
    event_seq: int | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)
