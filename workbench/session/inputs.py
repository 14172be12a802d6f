"""Turn what a user points ``%cep run --on`` (or ``workbench run``) at into events.

Accepted: a pandas DataFrame, a path to a ``.csv``, ``.jsonl``/``.ndjson``, ``.json`` (a list of
records) or ``.parquet`` file, or an iterable of event mappings / :class:`~workbench.engine.Event`.
Columns: ``type``, ``time`` (or ``t``), ``key`` and one column per field; other names can be given
(``time=``, ``key=``, ``type=``). Frames are converted by
:class:`~workbench.backends.columnar.frame.EventColumns` (column by column, an event per row on demand).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard, cast

from workbench.engine.events import Event, inline_fields, make_event
from workbench.engine.expr.durations import UNITS, duration_ms
from workbench.engine.expr.values import is_null
from workbench.engine.slotcheck import short_repr
from workbench.errors import CepError, EventError
from workbench.frame_columns import SEQ_IS_POSITION
from workbench.language.conditions import nearest
from workbench.session.datetimes import with_datetimes
from workbench.session.files import SUFFIXES, read_frame
from workbench.session.records import plain_record
from workbench.session.times import finer_than_ms

if TYPE_CHECKING:
    import pandas as pd

    from workbench.backends.columnar.frame import EventColumns

__all__ = [
    "SUFFIXES",
    "KeyFields",
    "check_columns",
    "check_out_of_orderness",
    "load_columns",
    "load_events",
    "missing_keys",
    "out_of_orderness_ms",
    "read_frame",
]


#: the partition key: one field, or several (``partition by user, ip``: the key is the tuple of values)
KeyFields = str | tuple[str, ...]


def key_text(key: KeyFields) -> str:
    """How a key reads in messages: ``user`` or ``user, ip``."""
    return key if isinstance(key, str) else ", ".join(key)


def check_out_of_orderness(value: object) -> None:
    """Refuse a bounded out-of-orderness that is not a number of milliseconds >= 0 (NaN, inf, -1)."""
    if not _is_out_of_orderness(value):
        msg = f"out-of-orderness must be a number of milliseconds >= 0, got {value!r}"
        raise CepError(msg)


def _is_out_of_orderness(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is a bounded out-of-orderness: a finite number of milliseconds >= 0."""
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 <= value < math.inf


#: a number and a unit, as the language writes a duration (``2s``, ``1.5 min``: at most one blank)
_DURATION = re.compile(r"(?P<number>[+-]?[0-9._]+(?:[eE][+-]?[0-9]+)?)[ \t]?(?P<unit>[A-Za-z]+)")


def out_of_orderness_ms(text: str, option: str = "--out-of-orderness") -> int | float:
    """A command line's out-of-orderness in milliseconds: a number of milliseconds (``500``) or a
    duration as the language writes one (``2s``, ``500ms``, ``1.5min``, units as in
    :data:`~workbench.engine.expr.durations.UNITS`); a :class:`CepError` naming ``option`` otherwise.

    >>> out_of_orderness_ms("2s"), out_of_orderness_ms("250"), out_of_orderness_ms("1.5min")
    (2000, 250, 90000)
    """
    value = _milliseconds(text.strip())
    if not _is_out_of_orderness(value):
        msg = (
            f"{option} {text!r}: give a number of milliseconds >= 0 (such as 500) or a duration "
            f"such as 2s, 500ms or 1.5min (units: {', '.join(UNITS)})"
        )
        raise CepError(msg)
    return value


def _milliseconds(text: str) -> int | float | None:
    """``text`` as milliseconds: a plain number is milliseconds, else a duration (``None``: neither)."""
    try:
        number = float(text)
    except ValueError:  # why: not a plain number; it may still be a duration such as 2s
        found = _DURATION.fullmatch(text)
        return None if found is None else duration_ms(found["number"], found["unit"])
    return int(number) if number.is_integer() else number


MISSING_KEY_HINT = "or allow them under a NULL key with --allow-missing-key (allow_missing_key=True)"


def check_columns(frame: pd.DataFrame) -> None:
    """Raise a :class:`CepError` for column names an event cannot have: repeated or not text."""
    names: list[object] = list(frame.columns)  # why object: pandas allows any hashable as a name
    for i, name in enumerate(names):
        if not isinstance(name, str):
            msg = f"column {i} is named {name!r}, a {type_name(name)}: name every column with text"
            raise EventError(msg, field=str(name))
    repeated = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
    if repeated:
        msg = f"the events have more than one column named {', '.join(map(repr, repeated))}"
        raise EventError(msg, field=repeated[0])


def _check_keys(frame: pd.DataFrame, key: KeyFields, allow_missing: bool) -> int:
    """The number of rows with no value in a partition ``key`` column (any of them, for a composite
    key); an :class:`EventError` naming the first one and its column unless ``allow_missing``."""
    parts = (key,) if isinstance(key, str) else key
    blanks = frame[list(parts)].isna().to_numpy()
    missing = blanks.any(axis=1)
    count = int(missing.sum())
    if count and not allow_missing:
        row = int(missing.argmax())
        column = parts[int(blanks[row].argmax())]
        msg = (
            f"row {row} (index {frame.index[row]!r}) has no value in the partition key column {column!r} "
            f"({count} row(s) in all); fill it, {MISSING_KEY_HINT}"
        )
        raise EventError(msg, position=row, field=column)
    for column in parts:
        _check_key_precision(frame[column], column)
    return count


def _check_key_precision(values: pd.Series, column: str) -> None:
    """Refuse a datetime key column with parts finer than a millisecond: the engine keeps times in
    milliseconds, so keys that differ only there would silently be one partition."""
    row = finer_than_ms(values)
    if row is not None:
        msg = (
            f"row {row} (index {values.index[row]!r}): the partition key column {column!r} holds a time "
            f"finer than a millisecond ({values.iloc[row]}), which the engine's times cannot hold, so keys "
            f"that differ only there would be one partition; floor it (df[{column!r}].dt.floor('ms')) "
            f"or partition by its text (df[{column!r}].astype(str))"
        )
        raise EventError(msg, position=row, field=column)


#: the column that holds a composite key's tuples (no column of the user's can have this name)
_TUPLES = "\x00key"


def _keyed(frame: pd.DataFrame, key: tuple[str, ...]) -> pd.DataFrame:
    """``frame`` with the tuples of a composite key's values; a row missing any of them (``None``,
    NaN, ``pd.NA``, ``NaT``) has the key ``None``. Each value is as events carry it (a datetime as
    epoch milliseconds), so a part of a composite key is the value a one-field key would be."""
    import pandas as pd

    from workbench.backends.columnar.frame import convert_column

    missing = frame[list(key)].isna().any(axis=1).to_numpy()
    parts = [convert_column(frame[k]).tolist() for k in key]
    for name, values in zip(key, parts, strict=True):
        _check_hashable(frame, name, values)  # why here: the tuples' column has no name of the user's
    rows = zip(*parts, strict=True)
    tuples = [None if blank else t for t, blank in zip(rows, missing.tolist(), strict=True)]
    return frame.assign(**{_TUPLES: pd.Series(tuples, index=frame.index, dtype=object)})


def _check_hashable(frame: pd.DataFrame, column: str, values: list[object]) -> None:
    """Refuse a value of a composite key's part ``column`` that cannot be a key (a list, a dict)."""
    for row, value in enumerate(values):
        try:
            hash(value)
        except TypeError:
            msg = (
                f"row {row} (index {frame.index[row]!r}), column {column!r}: a partition key must be "
                f"hashable, got {type(value).__name__} {short_repr(value)}"
            )
            raise EventError(msg, position=row, field=column) from None


def load_columns(
    source: object,
    *,
    time: str | None = None,
    key: KeyFields | None = None,
    type: str | None = None,
    allow_missing_key: bool = False,
) -> EventColumns | None:
    """A DataFrame's (or an event file's) events as columns; ``None`` for an iterable of events.

    ``key`` names the partition key column (checked; a column other than ``key`` is copied, so it
    stays a field that conditions can read), or a tuple of columns: then the key is the tuple of
    the row's values (``partition by user, ip``), and a row missing any of them has none.
    Raises :class:`EventError` for a missing column, and
    for a row with no value in the ``key`` column unless ``allow_missing_key`` (then such rows share
    the key ``None``).
    """
    import pandas as pd

    from workbench.backends.columnar.frame import EventColumns, required_columns

    if isinstance(source, str | Path):
        source = read_frame(source)
    if not isinstance(source, pd.DataFrame):
        return None
    source = _with_columns(source, time, key, type)
    check_columns(source)
    source = with_datetimes(source)  # why: datetime objects, pyarrow and categorical dates as datetime64
    for part in (key,) if isinstance(key, str) else key or ():
        if part not in source.columns:
            columns = [str(c) for c in source.columns]
            msg = (
                f"the events have no partition key column {part!r}{nearest(part, columns)} "
                f"(it comes from --key or the pattern's 'partition by {key_text(key or part)}'); "
                f"columns: {', '.join(columns) or 'none'}"
            )
            raise EventError(msg, field=part)
    time = required_columns(source, type or "type", time)  # why first: the message lists the user's columns
    if key is not None:
        _check_keys(source, key, allow_missing_key)
    if isinstance(key, tuple):
        # why a column of its own: the tuples key the events; the user's columns (a 'key' one
        # included) all stay fields conditions can read
        positions = ("seq",) if source.attrs.get(SEQ_IS_POSITION) else ()  # a frame of events
        fields = [str(c) for c in source.columns if c not in (type or "type", time, *positions)]
        return EventColumns.from_frame(
            _keyed(source, key),
            type_column=type or "type",
            time_column=time,
            key_column=_TUPLES,
            fields=fields,
        )
    return EventColumns.from_frame(
        source, type_column=type or "type", time_column=time, key_column=key or "key"
    )


def _with_columns(
    frame: pd.DataFrame, time: str | None, key: KeyFields | None, type: str | None
) -> pd.DataFrame:
    """``frame``, or for a frame of no rows and no columns (an empty JSON-lines file, ``[]``, an empty
    ``pd.DataFrame()``) the columns the run reads: zero events, as a CSV with only its header."""
    import pandas as pd

    if len(frame.columns) or len(frame):
        return frame
    parts = (key,) if isinstance(key, str) else key or ()
    return pd.DataFrame({name: [] for name in dict.fromkeys((type or "type", time or "time", *parts))})


def load_events(
    source: object,
    *,
    time: str | None = None,
    key: KeyFields | None = None,
    type: str | None = None,
    allow_missing_key: bool = False,
) -> list[Event]:
    """Events from a DataFrame, a file path or an iterable of mappings/events (see module doc).

    With a partition ``key``, an event without a value for it is an :class:`EventError` unless
    ``allow_missing_key`` (then it has the key ``None``, shared by every such event).
    """
    columns = load_columns(source, time=time, key=key, type=type, allow_missing_key=allow_missing_key)
    if columns is not None:
        return columns.events()
    if isinstance(source, Mapping) or not isinstance(source, Iterable):
        msg = (
            f"cannot read events from a {type_name(source)}; "
            "give a DataFrame, a file path or a list of events"
        )
        raise CepError(msg)
    out: list[Event] = []
    keyed = mappings = False
    first_missing: int | None = None
    missing_part = ""
    for i, item in enumerate(source):
        if isinstance(item, Event):
            out.append(make_event(item, i))  # why: a built Event is checked too (a NaN time, ...)
        elif isinstance(item, Mapping):
            raw = plain_record(item)  # why: dates and durations as milliseconds, as in a DataFrame
            mappings = True
            if time is not None and time in raw:
                raw["time"] = raw.pop(time)
            if type is not None and type in raw:
                raw["type"] = raw.pop(type)
            if key is not None:
                raw = with_key(raw, key)  # the fields stay readable in conditions, as for DataFrames
                if raw["key"] is not None:
                    keyed = True
                elif first_missing is None:
                    first_missing, missing_part = (
                        i,
                        _blank_part(cast("Mapping[str, object]", raw["fields"]), key),
                    )
            out.append(make_event(raw, i))
        else:
            msg = f"item {i} is a {type_name(item)}, not an event mapping"
            raise EventError(msg, position=i)
    if key is not None and mappings and not keyed:
        msg = (
            f"no event has the partition key field {key_text(key)!r} "
            f"(it comes from --key or the pattern's 'partition by {key_text(key)}')"
        )
        raise EventError(msg, field=key_text(key))
    if first_missing is not None and not allow_missing_key:
        msg = f"event {first_missing} has no value for the partition key field {missing_part!r}; give one, "
        raise EventError(msg + MISSING_KEY_HINT, position=first_missing, field=missing_part)
    return out


def with_key(raw: Mapping[str, object], key: KeyFields) -> dict[str, object]:
    """An event mapping keyed by its partition field(s) ``key`` (``None`` when a part is blank).

    Every field stays a field, one named ``key`` included (as a DataFrame's ``key`` column does
    beside ``partition by user``), whether the fields are inline or under ``fields``; an event
    with none of the partition fields but a ``key`` of its own keeps that key.

    >>> with_key({"type": "a", "time": 1, "user": "ann", "key": "req-1"}, "user")
    {'type': 'a', 'time': 1, 'fields': {'user': 'ann', 'key': 'req-1'}, 'key': 'ann'}
    """
    nested = raw.get("fields")
    if isinstance(nested, Mapping):
        fields = dict(nested)
        if "key" in raw and "key" not in fields:
            fields["key"] = raw["key"]
    else:
        fields = inline_fields(raw, keep_key=True)
    out = {k: raw[k] for k in ("type", "time", "t") if k in raw}
    out["fields"] = fields
    parts = (key,) if isinstance(key, str) else key
    if "key" in raw and not any(p in fields for p in parts):  # why: it names its key itself
        fields.pop("key", None)
        out["key"] = raw["key"]
    else:
        out["key"] = _key_of(fields, key)
    return out


def _key_of(raw: Mapping[str, object], key: KeyFields | None) -> object:
    """An event mapping's key value (a tuple for a composite key); ``None`` when a part is blank."""
    if key is None:
        return None
    if isinstance(key, str):
        value = raw.get(key)
        return None if is_null(value) else value
    values = tuple(raw.get(k) for k in key)
    return None if any(is_null(v) for v in values) else values


def _blank_part(raw: Mapping[str, object], key: KeyFields) -> str:
    """The first key field an event mapping has no value for."""
    parts = (key,) if isinstance(key, str) else key
    return next((k for k in parts if is_null(raw.get(k))), parts[0])


def missing_keys(data: object, key: KeyFields) -> int:
    """How many events of ``data`` (a DataFrame or a list of events) have no value for ``key``
    (for a composite key: for one of its fields)."""
    import pandas as pd

    parts = [key] if isinstance(key, str) else [k for k in key]
    if isinstance(data, pd.DataFrame):
        present = [k for k in parts if k in data.columns]
        return int(data[present].isna().any(axis=1).sum()) if present else 0
    if isinstance(data, list):
        return sum(1 for e in data if isinstance(e, Mapping) and _key_of(e, key) is None)
    return 0


def type_name(value: object) -> str:
    """The type name of ``value`` for messages."""
    return str(value.__class__.__name__)
