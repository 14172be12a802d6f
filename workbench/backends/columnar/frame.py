"""A DataFrame's rows as the events a replay builds from them, kept as columns.

:class:`EventColumns` converts each column once, the way an event carries it (datetimes and
durations become milliseconds; a missing value means the event has no such field), and builds an
:class:`~workbench.engine.events.Event` for a row only when something asks for it. Conditions can
then be evaluated on whole columns (:mod:`workbench.backends.columnar.vector`), keys are factorised
once into integer codes, and each row knows its position within its key's own sub-stream, which is
what strict contiguity (``next``) needs once rows that no stage reads are skipped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np
import numpy.typing as npt
import pandas as pd

from workbench.engine.clock import stamp
from workbench.engine.events import Event, make_event
from workbench.engine.expr.values import is_null
from workbench.errors import EventError
from workbench.frame_columns import SEQ_IS_POSITION

__all__ = ["EventColumns", "RowEvents", "convert_column", "required_columns"]

_MS = pd.Timedelta(milliseconds=1)


def convert_column(s: pd.Series) -> pd.Series:
    """A column in the values events carry: datetimes (UTC) and durations as integer milliseconds.

    >>> convert_column(pd.Series(pd.to_datetime(["1970-01-01 00:00:01", None]))).tolist()
    [1000, <NA>]
    """
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    if pd.api.types.is_datetime64_dtype(s.dtype):
        return _datetime_ms(s)
    if pd.api.types.is_timedelta64_dtype(s.dtype):
        return s.floordiv(_MS).astype("Int64")  # type: ignore[arg-type]  # stubs lack Series // Timedelta
    if pd.api.types.is_object_dtype(s.dtype):
        kind = pd.api.types.infer_dtype(s, skipna=True)
        if kind not in ("string", "integer", "floating", "mixed-integer-float", "boolean", "empty"):
            return s.map(_convert_value)
    return s


def _datetime_ms(s: pd.Series) -> pd.Series:
    """Naive datetimes (any unit) as integer milliseconds since the epoch, floored.

    Read from the stored integers, so every date the column can hold converts (9999-12-31, the
    usual "open-ended" date, is beyond a nanosecond column's range).

    >>> _datetime_ms(pd.Series(pd.to_datetime(["9999-12-31"]).as_unit("us"))).tolist()
    [253402214400000]
    """
    values: npt.NDArray[np.datetime64] = s.to_numpy()
    ms = _to_ms(values)
    return pd.Series(pd.arrays.IntegerArray(ms, s.isna().to_numpy()), index=s.index, name=s.name)


def _to_ms(values: npt.NDArray[np.datetime64]) -> npt.NDArray[np.int64]:
    """datetime64 values (NaT aside) as milliseconds since the epoch, floored."""
    unit, count = np.datetime_data(values.dtype)
    raw = values.view(np.int64)
    step = _UNIT_NS[unit] * count  # pandas stores s, ms, us or ns; numpy's days and hours also fit
    if step >= _MS_NS:  # why: seconds or coarser units only multiply
        return raw * (step // _MS_NS)
    return np.floor_divide(raw, _MS_NS // step)


_MS_NS = 1_000_000
#: the length of a datetime64 unit in nanoseconds
_UNIT_NS = {
    "D": 86_400 * 10**9,
    "h": 3_600 * 10**9,
    "m": 60 * 10**9,
    "s": 10**9,
    "ms": _MS_NS,
    "us": 1_000,
    "ns": 1,
}


def _convert_value(v: object) -> object:
    if isinstance(v, pd.Timestamp):  # an object column holding timestamps
        ts = v.tz_convert("UTC").tz_localize(None) if v.tzinfo is not None else v
        return int(_to_ms(np.array([ts.to_datetime64()]))[0])
    if isinstance(v, pd.Timedelta):
        return v // _MS
    return v


#: the event attributes a column can hold (``e.type``, ``e.time``, ``e.key``)
_ATTRIBUTES = frozenset({"type", "time", "key"})

#: the slot setters of :class:`Event` in field order (type, time, key, fields, seq)
_EVENT_SETTERS = tuple(Event.__dict__[name].__set__ for name in Event.__slots__)


def _new_events(columns: Sequence[Sequence[object]], n: int) -> list[Event]:
    """``[Event(*row) for row in zip(*columns)]``, without the frozen dataclass ``__init__`` per
    event: empty events, then each slot filled by one C-level ``map`` of its descriptor."""
    out: list[Event] = list(map(object.__new__, repeat(Event, n)))
    for setter, values in zip(_EVENT_SETTERS, columns, strict=True):
        deque(map(setter, out, values), maxlen=0)
    return out


def required_columns(frame: pd.DataFrame, type_column: str = "type", time_column: str | None = None) -> str:
    """The time column (``time_column``, else ``time``, else ``t``) after checking that the frame has
    it and ``type_column``; an :class:`EventError` naming the missing one and the frame's columns."""
    if time_column is None:
        time_column = "time" if "time" in frame.columns or "t" not in frame.columns else "t"
    for required, what in ((type_column, "type"), (time_column, "time")):
        if required not in frame.columns:
            msg = f"the DataFrame has no {what} column {required!r}; columns: {list(frame.columns)}"
            msg += _index_hint(frame, required, what)
            raise EventError(msg, field=required)
    return time_column


def _index_hint(frame: pd.DataFrame, column: str, what: str) -> str:
    """How to use the index when it holds the missing column (or, for the time, is of datetimes)."""
    if column in frame.index.names:
        return " (it is the index: frame.reset_index() makes it a column)"
    if what == "time" and isinstance(frame.index, pd.DatetimeIndex):
        name = "index" if frame.index.name is None else str(frame.index.name)
        hint = "the times are the index: frame.reset_index() makes them the column"
        return f" ({hint} {name!r}, then --time {name})"
    return ""


@dataclass(slots=True)
class EventColumns:
    """The events of a DataFrame's rows, as converted columns; one :class:`Event` per row on demand.

    Attributes:
        rows: the number of rows (= events).
        attrs: the converted columns of the event attributes (``type``, ``time``, and ``key``
            when the frame has a key column).
        columns: the converted field columns by field name (a field may be named like an
            attribute: a ``type`` column beside ``--type action`` is the field ``type``).
        fields: the field names, in column order.
    """

    frame: pd.DataFrame
    attrs: dict[str, pd.Series]
    columns: dict[str, pd.Series]
    fields: tuple[str, ...]
    names: dict[str, str]  # "type"/"time"/"key" -> the frame's column (for error messages)
    _lists: dict[tuple[bool, str], list[object]] = field(default_factory=dict)
    _codes: npt.NDArray[np.int64] | None = None
    _checked: list[bool] = field(default_factory=list)  # empty: not checked yet

    @property
    def rows(self) -> int:
        return len(self.frame)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        type_column: str = "type",
        time_column: str | None = None,
        key_column: str | None = "key",
        fields: Sequence[str] | None = None,
    ) -> EventColumns:
        """Convert the columns (see :func:`workbench.results.frame_to_events` for the arguments).

        Every column but those of the type, the time, a key column named ``key`` and the positions
        of a frame of events (``SEQ_IS_POSITION``) is a field (a partition column such as ``user`` is
        the key and stays a field). Raises :class:`EventError` for a missing type or time column or
        an unknown field column.
        """
        time_column = required_columns(frame, type_column, time_column)
        has_key = key_column is not None and key_column in frame.columns
        reserved = {type_column, time_column}
        if frame.attrs.get(SEQ_IS_POSITION):  # why: else a 'seq' column is data (e.seq: the position)
            reserved.add("seq")
        if has_key and key_column == "key":  # why: a partition column (user) is a field as well
            reserved.add("key")
        if fields is None:
            field_cols = [str(c) for c in frame.columns if c not in reserved]
        else:
            unknown = [c for c in fields if c not in frame.columns]
            if unknown:
                msg = f"field columns {unknown} are not in the DataFrame; columns: {list(frame.columns)}"
                raise EventError(msg, field=unknown[0])
            field_cols = list(fields)
        names = {"type": type_column, "time": time_column}
        if has_key and key_column is not None:
            names["key"] = key_column
        attrs = {name: convert_column(frame[col]) for name, col in names.items()}
        by_column = {col: attrs[name] for name, col in names.items()}
        columns = {c: by_column[c] if c in by_column else convert_column(frame[c]) for c in field_cols}
        return cls(frame, attrs, columns, tuple(field_cols), names)

    def column(self, name: str) -> pd.Series | None:
        """``e.name`` for every row (``None``: no row has it); ``seq`` is the row position.

        ``type``, ``time`` and ``key`` are the attributes, as ``e.type`` reads them on an event.
        """
        if name == "seq":
            return pd.Series(np.arange(self.rows, dtype=np.int64))
        if name in _ATTRIBUTES:
            return self.attrs.get(name)
        return self.columns.get(name)

    def values(self, name: str) -> list[object]:
        """A converted field column as plain Python values (cached)."""
        return self._listed(False, name)

    def attr_values(self, name: str) -> list[object]:
        """A converted attribute column (``type``, ``time``, ``key``) as plain Python values (cached)."""
        return self._listed(True, name)

    def _listed(self, attr: bool, name: str) -> list[object]:
        got = self._lists.get((attr, name))
        if got is None:
            got = (self.attrs if attr else self.columns)[name].tolist()
            self._lists[(attr, name)] = got
        return got

    def key_codes(self) -> npt.NDArray[np.int64]:
        """Each row's key as an integer code (equal keys, by Python equality, share one code)."""
        if self._codes is None:
            if "key" not in self.names:
                self._codes = np.zeros(self.rows, dtype=np.int64)
            else:
                column = self.attrs["key"]
                if column.hasnans:  # why: every kind of missing value is the one key None
                    column = pd.Series([None if is_null(k) else k for k in column.tolist()], dtype=object)
                codes, _ = pd.factorize(column, use_na_sentinel=False)
                self._codes = np.asarray(codes, dtype=np.int64)
        return self._codes

    def type_codes(self) -> tuple[npt.NDArray[np.int64], list[object]]:
        """Each row's type as an integer code into the distinct types (in order of appearance)."""
        codes, uniques = pd.factorize(self.attrs["type"], use_na_sentinel=False)
        return np.asarray(codes, dtype=np.int64), list(uniques)

    def key_positions(self) -> npt.NDArray[np.int64]:
        """Each row's position within its key's own rows (0, 1, 2, ... per key)."""
        codes = self.key_codes()
        return np.asarray(pd.Series(codes).groupby(codes).cumcount().to_numpy(), dtype=np.int64)

    def event(self, i: int) -> Event:
        """The event of row ``i`` (``seq`` not stamped), exactly as a replay of the rows builds it.

        Raises :class:`EventError` naming the row and column for a missing type or time, a
        non-numeric time or an unhashable key.
        """
        where = f"row {i} (index {self.frame.index[i : i + 1].tolist()[0]!r})"
        typ = self.attr_values("type")[i]
        if is_null(typ):
            msg = f"{where}: missing event type in column {self.names['type']!r}"
            raise EventError(msg, position=i, field=self.names["type"])
        t = self.attr_values("time")[i]
        if is_null(t):
            msg = f"{where}: missing event time in column {self.names['time']!r}"
            raise EventError(msg, position=i, field=self.names["time"])
        if isinstance(t, float) and t.is_integer():
            t = int(t)  # a time column with a gap is float64 in pandas: whole values are int ms
        key: object = self.attr_values("key")[i] if "key" in self.names else None
        if is_null(key):
            key = None
        row_fields = {c: v for c in self.fields if not is_null(v := self.values(c)[i])}
        try:
            return make_event({"type": typ, "time": t, "key": key, "fields": row_fields})
        except EventError as err:
            column = self.names.get(err.field or "")
            msg = f"{where}, column {column!r}: {err.args[0]}"
            raise EventError(msg, position=i, field=column) from None

    def clean(self) -> bool:
        """Whether every row has a string type, a numeric time and a string or integer key (or none)."""
        if not self._checked:
            self._checked.append(self._clean("type") and self._clean_times() and self._clean_keys())
        return self._checked[0]

    def events(self) -> list[Event]:
        """Every row's event, in row order (whole columns at once when they are clean)."""
        if not self.clean():
            return [self.event(i) for i in range(self.rows)]  # why: a row needs its own check and message
        return self._bulk(None)

    def events_at(self, rows: Sequence[int] | npt.NDArray[np.int64]) -> list[Event]:
        """The events of the given rows, stamped with their row position as ``seq`` (needs :meth:`clean`)."""
        if not self.clean():
            msg = "events_at needs clean type, time and key columns (see EventColumns.clean)"
            raise ValueError(msg)
        return self._bulk(np.asarray(rows, dtype=np.int64))

    def times_at(self, rows: npt.NDArray[np.int64]) -> list[int | float]:
        """The times the events of clean rows carry (see :meth:`events_at`)."""
        return self._times(rows)  # type: ignore[return-value]  # clean: ints and floats

    def keys_at(self, rows: npt.NDArray[np.int64]) -> list[Hashable]:
        """The keys the events of clean rows carry (see :meth:`events_at`)."""
        return self._keys(rows)

    def _pick(self, name: str, rows: npt.NDArray[np.int64] | None, attr: bool = False) -> list[object]:
        """A converted column's values at ``rows`` (all rows: ``None``) as Python values."""
        if rows is None:
            return self._listed(attr, name)
        return (self.attrs if attr else self.columns)[name].iloc[rows].tolist()

    def _bulk(self, rows: npt.NDArray[np.int64] | None) -> list[Event]:
        """The events of clean rows, built column by column (only the rows asked for)."""
        names = self.fields
        lists = [self._pick(c, rows) for c in names]
        n = self.rows if rows is None else len(rows)
        if any(self.columns[c].hasnans for c in names):
            # why: a missing value means the event has no such field (column order kept)
            dicts = self._sparse_dicts(lists, rows)
        elif names:  # why map: one C-level pass per row, no Python code per field
            dicts = list(map(dict, map(zip, repeat(names), zip(*lists, strict=True))))
        else:
            dicts = [{} for _ in range(n)]
        types, times, keys = self._pick("type", rows, attr=True), self._times(rows), self._keys(rows)
        # numbered with their row positions, as the engine's stamp() would number them (all rows: -1)
        seqs: Sequence[int] = [-1] * n if rows is None else rows.tolist()
        return _new_events((types, times, keys, dicts, seqs), n)

    def _sparse_dicts(
        self, lists: list[list[object]], rows: npt.NDArray[np.int64] | None
    ) -> list[dict[str, object]]:
        """Field dicts of rows with missing values, built per pattern of present columns at once."""
        names = self.fields
        n = len(lists[0])
        if len(names) > 62:
            return [
                {c: v for c, v in zip(names, vals, strict=True) if not is_null(v)}
                for vals in zip(*lists, strict=True)
            ]
        shape = np.zeros(n, dtype=np.int64)
        for bit, c in enumerate(names):
            s = self.columns[c]
            if not s.hasnans:
                continue
            if pd.api.types.is_object_dtype(s.dtype):  # why: exactly the per-value test, not pandas' own
                null = np.fromiter((is_null(v) for v in lists[bit]), dtype=bool, count=n)
            else:
                null = np.asarray(s.isna().to_numpy(), dtype=bool)
                null = null if rows is None else null[rows]
            shape |= null.astype(np.int64) << bit
        out = np.empty(n, dtype=object)
        for code in np.unique(shape).tolist():
            at = np.flatnonzero(shape == code)
            keep = [i for i in range(len(names)) if not (code >> i) & 1]
            present = [names[i] for i in keep]
            picked = [np.asarray(lists[i], dtype=object)[at] for i in keep]
            out[at] = (
                [dict(zip(present, vals, strict=True)) for vals in zip(*picked, strict=True)]
                if keep
                else [{} for _ in range(len(at))]
            )
        return out.tolist()

    def _clean(self, name: str) -> bool:
        """Whether every row of the attribute column holds a string."""
        s = self.attrs[name]
        return not s.hasnans and pd.api.types.infer_dtype(s, skipna=False) == "string"

    def _clean_times(self) -> bool:
        """Whether every row has an int or finite float time."""
        s = self.attrs["time"]
        if s.hasnans:
            return False
        if pd.api.types.is_integer_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
            return True
        return pd.api.types.is_float_dtype(s.dtype) and bool(np.isfinite(s.to_numpy(dtype=np.float64)).all())

    def _times(self, rows: npt.NDArray[np.int64] | None) -> list[object]:
        """Clean times at ``rows``: a whole float is an int (a time column with a gap is float64)."""
        s = self.attrs["time"]
        if pd.api.types.is_float_dtype(s.dtype):
            values = s.to_numpy(dtype=np.float64)
            values = values if rows is None else values[rows]
            return [int(v) if v.is_integer() else v for v in values.tolist()]
        return self._pick("time", rows, attr=True)

    def _clean_keys(self) -> bool:
        """Whether every key is a string or an integer (or missing)."""
        if "key" not in self.names:
            return True
        return pd.api.types.infer_dtype(self.attrs["key"], skipna=True) in ("string", "integer", "empty")

    def _keys(self, rows: npt.NDArray[np.int64] | None) -> list[Hashable]:
        """Clean keys at ``rows``, a missing key as ``None``."""
        if "key" not in self.names:
            return [None] * (self.rows if rows is None else len(rows))
        values = self._pick("key", rows, attr=True)
        return [None if is_null(k) else k for k in values] if self.attrs["key"].hasnans else values

    def keyed(self) -> bool:
        """Whether some row has a key (else every event is in one partition)."""
        return "key" in self.names and bool(self.attrs["key"].notna().any())

    def types_present(self) -> frozenset[str]:
        """The event types the rows hold."""
        return frozenset(str(t) for t in self.attrs["type"].dropna().unique().tolist())

    def fields_present(self) -> frozenset[str]:
        """The fields at least one row has (a value that is not missing)."""
        return frozenset(c for c in self.fields if bool(self.columns[c].notna().any()))


class RowEvents(Mapping[int, Event]):
    """The events of :class:`EventColumns` by ``seq`` (the row position), each built when first read.

    What a replay keeps to show events later (explain, the timeline) without building one per row.

    >>> cols = EventColumns.from_frame(pd.DataFrame({"type": ["a", "b"], "time": [1, 2]}))
    >>> events = RowEvents(cols)
    >>> len(events), events[1].seq, events.get(5)
    (2, 1, None)
    """

    def __init__(self, columns: EventColumns) -> None:
        self._columns = columns
        self._built: dict[int, Event] = {}

    def __getitem__(self, seq: int) -> Event:
        event = self._built.get(seq)
        if event is None:
            try:
                inside = 0 <= seq < self._columns.rows
            except TypeError:  # explain looks up records without an event (seq None)
                inside = False
            if not inside:
                raise KeyError(seq)
            event = self._built[seq] = stamp(self._columns.event(seq), seq)
        return event

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._columns.rows))

    def __len__(self) -> int:
        return self._columns.rows
