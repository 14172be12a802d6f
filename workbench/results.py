"""Engine records as pandas DataFrames, and DataFrames back into events.

Every frame has a fixed, documented set of columns, in a fixed order, also when the input is empty
(typed column by column by :mod:`workbench.frame_columns`).

**One row per detection** (:func:`detections_to_frame`), columns :data:`DETECTION_COLUMNS`:

===============  =================================================================================
``pattern``      the pattern's name
``key``          the partition key (a tuple for ``partition by user, ip``: one column, as pandas
                 names the groups of ``groupby(["user", "ip"])``)
``instance``     instance id (unique per pattern and key within one run)
``kind``         ``"match"`` or ``"timeout"``
``emit_time``    emit time (event time, ms)
``n_events``     number of contributing events
``events``       tuple of the events' arrival positions (``seq``), in the detection's order; an
                 event derived from another pattern's detection (``emit into``) has a negative one
``types``        tuple of the events' types, parallel to ``events``
``channels``     tuple of the channel or stage of each event, parallel to ``events``
``negated``      tuple of the ``@not`` channels satisfied by absence
``initiator``    ``seq`` of the event that started the instance (``<NA>`` when there is none)
``first_time``   time of the earliest contributing event (``<NA>`` when there are none; integer input: int64)
``last_time``    time of the latest contributing event (likewise)
``extra``        the family-specific ``extra`` mapping (a dict; empty for most detections)
===============  =================================================================================

Then one column per **measure** (a sequence's ``measures``), in declared order, patterns in order
of first appearance; a detection of a pattern without that measure, or a timed-out one that could
not compute it, has a missing value. Integers stay integers (``Int64`` when some are missing),
numbers are ``float64``, truth values ``bool``/``boolean``, anything else Python objects. The frame's
``attrs["time_columns"]`` and ``attrs["duration_columns"]`` name the measures that are event times
and differences of times (a session shows them as Timestamps and Timedeltas for datetime input);
``attrs["measure_exprs"]`` holds each measure's expression as text, from which a session also tells
the measures that read a field that held datetimes in the input (attrs hold only plain values, so
``to_parquet`` can write them).

**One row per (detection, event)** (:func:`detection_events_to_frame`): ``detection`` (the row
number of the detection in :func:`detections_to_frame`), ``pattern``, ``key``, ``instance``,
``kind``, ``emit_time``, ``position`` (0-based index of the event in the detection), ``channel``,
``seq``, ``type``, ``time``, then one column per event field, in order of first appearance. A
field whose name collides with one of those columns is renamed ``field_<name>``. A field an event
does not have is missing (``NaN``/``None``) in its row.

Reactions (:func:`reactions_to_frame`) and trace records (:func:`trace_to_frame`) have their own
fixed columns, :data:`REACTION_COLUMNS` and :data:`TRACE_COLUMNS`.

The reverse direction, :func:`frame_to_events`, reads a DataFrame with columns ``type``, ``time``
(or ``t``), optionally ``key``, and one column per field.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Final

import pandas as pd

from workbench.engine.detection import DETECTION_COLUMNS, Detection, Reaction, TraceRecord
from workbench.engine.events import Event
from workbench.engine.expr import print_expr
from workbench.engine.expr.ir import Node
from workbench.engine.faults import ConditionFault
from workbench.engine.gcpause import gc_paused
from workbench.engine.matchtable import LazyDetections, MatchTable
from workbench.frame_columns import INT, SEQ_IS_POSITION, measure_series, objects, strings, time_spans, times

__all__ = [
    "DETECTION_COLUMNS",
    "DETECTION_EVENT_COLUMNS",
    "ERROR_COLUMNS",
    "EVENT_COLUMNS",
    "REACTION_COLUMNS",
    "TRACE_COLUMNS",
    "detection_events_to_frame",
    "detections_to_frame",
    "errors_to_frame",
    "events_to_frame",
    "frame_to_events",
    "reactions_to_frame",
    "trace_to_frame",
]


DETECTION_EVENT_COLUMNS: tuple[str, ...] = (
    "detection",
    "pattern",
    "key",
    "instance",
    "kind",
    "emit_time",
    "position",
    "channel",
    "seq",
    "type",
    "time",
)
"""Fixed leading columns of :func:`detection_events_to_frame`; event fields follow."""

REACTION_COLUMNS: tuple[str, ...] = (
    "pattern",
    "key",
    "instance",
    "channel",
    "status",
    "time",
    "seq",
    "type",
    "event_time",
)
"""Columns of :func:`reactions_to_frame` (event fields follow, as in the long detection form)."""

TRACE_COLUMNS: tuple[str, ...] = (
    "time",
    "pattern",
    "key",
    "instance",
    "kind",
    "element",
    "event_seq",
    "count",
    "of",
    "detail",
)
"""Columns of :func:`trace_to_frame`; ``count``/``of`` are read from ``detail`` (``<NA>`` otherwise)."""

EVENT_COLUMNS: tuple[str, ...] = ("seq", "type", "time", "key")
"""Fixed leading columns of :func:`events_to_frame`; event fields follow."""

_SEQ: Final = attrgetter("seq")
_TYPE: Final = attrgetter("type")
_TIME: Final = attrgetter("time")


def _identity(records: Sequence[Detection | Reaction]) -> dict[str, pd.Series]:
    """The ``pattern``, ``key`` and ``instance`` columns of detections or reactions."""
    return {
        "pattern": strings(list(map(attrgetter("pattern"), records))),
        "key": objects(list(map(attrgetter("key"), records))),
        "instance": pd.Series(list(map(attrgetter("instance"), records)), dtype="int64"),
    }


def detections_to_frame(detections: Iterable[Detection]) -> pd.DataFrame:
    """One row per detection, columns :data:`DETECTION_COLUMNS` (see the module docstring).

    Built column by column (``map`` over the detections, numpy for the time spans): no Python
    code runs per cell where a C-level pass gives the same values.

    >>> from workbench.engine import Detection, Event
    >>> d = Detection("p", "k", 1, "match", 9, (Event("a", 3, "k", seq=0),), ("a",))
    >>> detections_to_frame([d])[["pattern", "instance", "events", "first_time"]].to_dict("records")
    [{'pattern': 'p', 'instance': 1, 'events': (0,), 'first_time': 3}]
    """
    with gc_paused():  # why: tens of thousands of tuples per column, none in a cycle
        if isinstance(detections, LazyDetections):  # why: its table has the columns, no object is built
            frame = _table_frame(detections.table)
            return _add_measures(frame, detections.items()) if detections.measured else frame
        return _detections_frame(list(detections))


def _detections_frame(ds: list[Detection]) -> pd.DataFrame:
    """:func:`detections_to_frame` of a list of detections."""
    rows: list[tuple[Event, ...]] = list(map(attrgetter("events"), ds))
    initiators: list[Event | None] = list(map(attrgetter("initiator"), ds))
    seqs, types, flat_times = _event_columns(rows)
    table = MatchTable(
        pattern=list(map(attrgetter("pattern"), ds)),
        key=list(map(attrgetter("key"), ds)),
        instance=list(map(attrgetter("instance"), ds)),
        time=list(map(_TIME, ds)),
        seqs=seqs,
        types=types,
        channels=list(map(tuple, map(attrgetter("channels"), ds))),
        times=flat_times,
    )
    frame = _frame(
        table,
        kind=list(map(attrgetter("kind"), ds)),
        negated=list(map(tuple, map(attrgetter("negated"), ds))),
        initiator=(
            [None if i is None else i.seq for i in initiators]
            if initiators.count(None) < len(initiators)  # why: usually none has one
            else initiators
        ),
        extra=list(map(dict, map(attrgetter("extra"), ds))),
    )
    return _add_measures(frame, ds)


def _table_frame(table: MatchTable) -> pd.DataFrame:
    """:func:`detections_to_frame` of the plain matches a table holds (the same columns and values)."""
    n = len(table)
    return _frame(
        table, kind=["match"] * n, negated=[()] * n, initiator=[None] * n, extra=[{} for _ in range(n)]
    )


def _frame(
    table: MatchTable,
    *,
    kind: list[str],
    negated: list[tuple[str, ...]],
    initiator: Sequence[object],
    extra: list[dict[str, object]],
) -> pd.DataFrame:
    """The detections frame of a table's columns and the columns a table does not hold."""
    lens = list(map(len, table.seqs))
    firsts, lasts = time_spans(table.times, lens)
    data: dict[str, pd.Series] = {
        "pattern": strings(table.pattern),
        "key": objects(table.key),
        "instance": pd.Series(table.instance, dtype="int64"),
        "kind": strings(kind),
        "emit_time": times(table.time),
        "n_events": pd.Series(lens, dtype="int64"),
        "events": objects(table.seqs),
        "types": objects(table.types),
        "channels": objects(table.channels),
        "negated": objects(negated),
        "initiator": pd.Series(initiator, dtype=INT),
        "first_time": firsts,
        "last_time": lasts,
        "extra": objects(extra),
    }
    return pd.DataFrame(data, columns=list(DETECTION_COLUMNS))


def _event_columns(
    rows: Sequence[Sequence[Event]],
) -> tuple[list[tuple[int, ...]], list[tuple[str, ...]], list[int | float]]:
    """Each row's tuple of event ``seq`` and of event types, and every row's event times in one list."""
    seqs: list[tuple[int, ...]] = []
    types: list[tuple[str, ...]] = []
    flat: list[int | float] = []
    add_seqs, add_types, add_times = seqs.append, types.append, flat.extend
    for r in rows:  # why one loop: a row's events are read while they are in the CPU cache
        add_seqs(tuple(map(_SEQ, r)))
        add_types(tuple(map(_TYPE, r)))
        add_times(map(_TIME, r))
    return seqs, types, flat


def _add_measures(frame: pd.DataFrame, detections: Sequence[Detection]) -> pd.DataFrame:
    """The measure columns (see the module docstring), and the names of the time-valued ones."""
    kinds: dict[str, str] = {}
    exprs: dict[str, object] = {}
    for d in detections:  # why a pass: the columns are the union, in order of first appearance
        if d.measures:
            declared = getattr(d.measures, "kinds", {})
            written = getattr(d.measures, "exprs", {})
            for name in d.measures:
                kinds.setdefault(name, declared.get(name, "value"))
                if name in written:
                    exprs.setdefault(name, written[name])
    if not kinds:
        return frame
    columns = {name: measure_series([d.measures.get(name) for d in detections]) for name in kinds}
    out = pd.concat([frame, pd.DataFrame(columns, index=frame.index)], axis=1)
    out.attrs["time_columns"] = tuple(n for n, k in kinds.items() if k == "time")
    out.attrs["duration_columns"] = tuple(n for n, k in kinds.items() if k == "duration")
    # why text: attrs travel with the frame (to_parquet writes them as JSON), so they hold only
    # plain values; a session parses the text again to judge a measure against its input
    out.attrs["measure_exprs"] = {
        name: print_expr(expr) for name, expr in exprs.items() if isinstance(expr, Node)
    }
    return out


def _field_columns(fixed: Sequence[str], events: Iterable[Event], more: Iterable[str] = ()) -> dict[str, str]:
    """Field name -> column name, in order of first appearance (then the names of ``more`` no event
    has); clashes get a ``field_`` prefix."""
    taken = set(fixed)
    out: dict[str, str] = {}
    for fields in itertools.chain((e.fields for e in events), (more,)):
        for name in fields:
            if name not in out:
                col = name if name not in taken else f"field_{name}"
                while col in taken:
                    col = f"field_{col}"
                taken.add(col)
                out[name] = col
    return out


def _add_fields(
    frame: pd.DataFrame, events: Sequence[Event], fixed: Sequence[str], more: Iterable[str] = ()
) -> pd.DataFrame:
    columns = _field_columns(fixed, events, more)
    if not columns:
        return frame
    extra: dict[str, list[object]] = {col: [] for col in columns.values()}
    for e in events:
        for name, col in columns.items():
            extra[col].append(e.fields.get(name))
    # Let pandas infer each field column (numbers stay numeric; a missing value becomes NaN/None).
    fields = pd.DataFrame({col: pd.Series(vals) for col, vals in extra.items()}, index=frame.index)
    return pd.concat([frame, fields], axis=1)


def detection_events_to_frame(detections: Iterable[Detection]) -> pd.DataFrame:
    """One row per (detection, event): :data:`DETECTION_EVENT_COLUMNS`, then the events' fields.

    >>> from workbench.engine import Detection, Event
    >>> d = Detection("p", "k", 1, "match", 9, (Event("a", 3, "k", {"x": 1}, seq=0),), ("a",))
    >>> detection_events_to_frame([d])[["detection", "position", "channel", "seq", "x"]].to_dict("records")
    [{'detection': 0, 'position': 0, 'channel': 'a', 'seq': 0, 'x': 1}]
    """
    rows: list[tuple[int, Detection, int, str, Event]] = []
    for i, d in enumerate(detections):
        for pos, (channel, event) in enumerate(zip(d.channels, d.events, strict=True)):
            rows.append((i, d, pos, channel, event))
    events = [r[4] for r in rows]
    data: dict[str, pd.Series] = {
        "detection": pd.Series([r[0] for r in rows], dtype="int64"),
        "pattern": strings([r[1].pattern for r in rows]),
        "key": objects([r[1].key for r in rows]),
        "instance": pd.Series([r[1].instance for r in rows], dtype="int64"),
        "kind": strings([r[1].kind for r in rows]),
        "emit_time": times([r[1].time for r in rows]),
        "position": pd.Series([r[2] for r in rows], dtype="int64"),
        "channel": strings([r[3] for r in rows]),
        "seq": pd.Series([e.seq for e in events], dtype="int64"),
        "type": strings([e.type for e in events]),
        "time": times([e.time for e in events]),
    }
    frame = pd.DataFrame(data, columns=list(DETECTION_EVENT_COLUMNS))
    return _add_fields(frame, events, DETECTION_EVENT_COLUMNS)


def reactions_to_frame(reactions: Iterable[Reaction]) -> pd.DataFrame:
    """One row per channel reaction: :data:`REACTION_COLUMNS`, then the events' fields.

    ``time`` is when the channel accepted the event; ``event_time`` is the event's own time.
    """
    rs = list(reactions)
    events = [r.event for r in rs]
    data: dict[str, pd.Series] = {
        **_identity(rs),
        "channel": strings([r.channel for r in rs]),
        "status": strings([r.status for r in rs]),
        "time": times([r.time for r in rs]),
        "seq": pd.Series([e.seq for e in events], dtype="int64"),
        "type": strings([e.type for e in events]),
        "event_time": times([e.time for e in events]),
    }
    frame = pd.DataFrame(data, columns=list(REACTION_COLUMNS))
    return _add_fields(frame, events, REACTION_COLUMNS)


ERROR_COLUMNS: tuple[str, ...] = (
    "pattern",
    "where",
    "kind",
    "message",
    "count",
    "first_seq",
    "first_time",
    "first_key",
)


def errors_to_frame(errors: Iterable[ConditionFault]) -> pd.DataFrame:
    """One row per distinct runtime error of a condition: :data:`ERROR_COLUMNS`.

    ``count`` is how many events it happened on; ``first_*`` name the first of them.

    >>> errors_to_frame([]).columns.tolist()[:4]
    ['pattern', 'where', 'kind', 'message']
    """
    fs = list(errors)
    data: dict[str, pd.Series] = {
        "pattern": strings([f.pattern for f in fs]),
        "where": strings([f.where for f in fs]),
        "kind": strings([f.kind for f in fs]),
        "message": strings([f.message for f in fs]),
        "count": pd.Series([f.count for f in fs], dtype="int64"),
        "first_seq": pd.Series([f.first_seq for f in fs], dtype="int64"),
        "first_time": times([f.first_time for f in fs]),
        "first_key": objects([f.first_key for f in fs]),
    }
    return pd.DataFrame(data, columns=list(ERROR_COLUMNS))


def trace_to_frame(records: Iterable[TraceRecord]) -> pd.DataFrame:
    """One row per trace record, columns :data:`TRACE_COLUMNS`.

    ``kind`` is the :class:`~workbench.engine.detection.TraceKind` value as a string; ``element``
    is ``None`` for records about a whole instance; ``count`` and ``of`` come from the detail of
    ``counted`` records.
    """
    rs = list(records)

    def _detail_int(r: TraceRecord, name: str) -> int | None:
        v = r.detail.get(name)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    data: dict[str, pd.Series] = {
        "time": times([r.time for r in rs]),
        "pattern": strings([r.pattern for r in rs]),
        "key": objects([r.key for r in rs]),
        "instance": pd.Series([r.instance for r in rs], dtype="int64"),
        "kind": strings([str(r.kind) for r in rs]),
        "element": strings([r.element for r in rs]),
        "event_seq": pd.Series([r.event_seq for r in rs], dtype=INT),
        "count": pd.Series([_detail_int(r, "count") for r in rs], dtype=INT),
        "of": pd.Series([_detail_int(r, "of") for r in rs], dtype=INT),
        "detail": objects([dict(r.detail) for r in rs]),
    }
    return pd.DataFrame(data, columns=list(TRACE_COLUMNS))


def events_to_frame(events: Iterable[Event], fields: Iterable[str] = ()) -> pd.DataFrame:
    """One row per event: :data:`EVENT_COLUMNS`, then the fields (the inverse of :func:`frame_to_events`).

    ``fields`` are columns to have even when no event has a value for them (the input's fields, so
    late events written out keep its schema).

    >>> events_to_frame([Event("a", 1, None, {"x": 1})], fields=["x", "y"]).columns.tolist()
    ['seq', 'type', 'time', 'key', 'x', 'y']
    """
    es = list(events)
    data: dict[str, pd.Series] = {
        "seq": pd.Series([e.seq for e in es], dtype="int64"),
        "type": strings([e.type for e in es]),
        "time": times([e.time for e in es]),
        "key": objects([e.key for e in es]),
    }
    frame = _add_fields(pd.DataFrame(data, columns=list(EVENT_COLUMNS)), es, EVENT_COLUMNS, fields)
    frame.attrs[SEQ_IS_POSITION] = True  # why: frame_to_events gives these events back, seq not a field
    return frame


# ---------------------------------------------------------------------- DataFrame -> events


def frame_to_events(
    frame: pd.DataFrame,
    *,
    type_column: str = "type",
    time_column: str | None = None,
    key_column: str | None = "key",
    fields: Sequence[str] | None = None,
) -> list[Event]:
    """Build events from a DataFrame, one per row, in row order.

    Args:
        frame: the rows. ``type`` and a time column are required; datetime columns (the time or a
            field; timezone-aware ones are converted to UTC) become milliseconds since the epoch,
            timedelta columns become milliseconds.
        type_column: the column holding each event's type.
        time_column: the time column (default: ``time``, else ``t``).
        key_column: the partition key column; when it is absent every event has key ``None``.
        fields: the columns that become event fields (default: every other column except ``seq``).
            A missing value (``NaN``, ``None``, ``NaT``) means the event has no such field, so rows
            of different event types can share one frame.

    Returns:
        The events (``seq`` not yet stamped: the engine stamps arrival positions).

    Raises:
        EventError: a required column is missing, or a row has no type, a missing or non-numeric
            time, or an unhashable key; the message names the row (position and index label) and
            the column.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"type": ["a"], "time": pd.to_datetime(["1970-01-01 00:00:01"]), "x": [2]})
    >>> frame_to_events(df)
    [Event(type='a', time=1000, key=None, fields={'x': 2}, seq=-1)]
    """
    from workbench.backends.columnar.frame import EventColumns

    columns = EventColumns.from_frame(
        frame, type_column=type_column, time_column=time_column, key_column=key_column, fields=fields
    )
    return columns.events()
