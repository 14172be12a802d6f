"""Times as the user gave them: numbers stay numbers, datetimes come back as dates.

The engine keeps every time as a number: a datetime time column becomes epoch milliseconds (UTC) on
the way in (:func:`workbench.backends.columnar.frame.convert_column`). A :class:`TimeFormat`
remembers what the input held, so every output can turn the numbers back: text for explain, the
timeline's label and dropdown, and pandas Timestamps (with the input's time zone) in DataFrames.

>>> import pandas as pd
>>> f = TimeFormat.of_column(pd.Series(pd.to_datetime(["2024-01-01 00:00:05"]).tz_localize("Europe/Paris")))
>>> f.text(1704067205000)
'2024-01-01 01:00:05.000'
>>> f.timestamp(1704067205000)
Timestamp('2024-01-01 01:00:05+0100', tz='Europe/Paris')
>>> NUMBERS.text(1500)
'1500'
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NoReturn

from workbench.errors import CepError
from workbench.session.datetimes import datetimes, is_datetime64

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "NUMBERS",
    "TIME_UNITS",
    "TimeFormat",
    "finer_than_ms",
    "of_engine",
    "wall_clock",
    "with_time_unit",
]

TIME_COLUMNS = ("emit_time", "time", "first_time", "last_time")
"""The columns of the detections DataFrame that hold engine times."""


@dataclass(frozen=True)
class TimeFormat:
    """How to show engine times: as numbers, or (``dates``) as dates in time zone ``tz``.

    ``tz`` is ``None`` for naive datetimes (shown as they were written: UTC wall time). ``fields``
    are the input's other datetime columns (epoch milliseconds in the engine, like the time), each
    with its zone: a measure that picks one (``first(a).opened``) is shown as a date too, and a
    difference of two such as a duration. ``durations`` are the input's timedelta columns (integer
    milliseconds in the engine): they, and measures that pick or add them, come back as Timedeltas.
    ``elapsed``: the time column held timedeltas (time since some start): times come back as
    Timedeltas, as they went in.
    """

    dates: bool = False
    tz: datetime.tzinfo | str | None = None
    fields: tuple[tuple[str, datetime.tzinfo | str | None], ...] = ()
    durations: tuple[str, ...] = ()
    elapsed: bool = False

    @property
    def shown(self) -> bool:
        """Whether engine times read as something else than numbers (dates, or elapsed times)."""
        return self.dates or self.elapsed

    @classmethod
    def of_column(cls, column: pd.Series) -> TimeFormat:
        """The format of a time column: dates (with the column's zone) for datetimes, elapsed times
        for timedeltas, else numbers."""
        import pandas as pd

        if pd.api.types.is_timedelta64_dtype(column.dtype):
            return cls(elapsed=True)
        dated = datetimes(column)  # why: datetimes in another form are datetime64 in the engine
        if dated is None:
            return NUMBERS
        dtype = dated.dtype
        return cls(True, dtype.tz if isinstance(dtype, pd.DatetimeTZDtype) else None)

    @classmethod
    def of_input(cls, data: object, time: str | None = None) -> TimeFormat:
        """The format of the time column of ``data`` (a DataFrame; anything else: numbers)."""
        import pandas as pd

        if not isinstance(data, pd.DataFrame):
            return NUMBERS
        name = time or ("time" if "time" in data.columns else "t")
        # why by position: a repeated column name (which the replay refuses, naming it) is no Series
        columns = {str(c): data.iloc[:, i] for i, c in enumerate(data.columns)}
        base = cls.of_column(columns[name]) if name in columns else NUMBERS
        fields = tuple(
            (c, form.tz)
            for c, column in columns.items()
            if c != name and (form := cls.of_column(column)).dates
        )
        durations = tuple(
            c
            for c, column in columns.items()
            if c != name and pd.api.types.is_timedelta64_dtype(column.dtype)
        )
        return dataclasses.replace(base, fields=fields, durations=durations) if fields or durations else base

    def with_input(self, other: TimeFormat) -> TimeFormat:
        """This format (a live feed's clock) with the datetime and timedelta fields of ``other`` (an
        input fed to it) added: a feed learns its fields' kinds as batches arrive."""
        fields = dict(self.fields) | dict(other.fields)
        durations = dict.fromkeys(self.durations) | dict.fromkeys(other.durations)
        return dataclasses.replace(self, fields=tuple(fields.items()), durations=tuple(durations))

    def dated(self) -> tuple[str, ...]:
        """The attributes that hold datetimes of this input: its datetime fields, and ``time`` and
        ``t`` when the time column held datetimes."""
        return (*(name for name, _ in self.fields), *(("time", "t") if self.dates else ()))

    def timestamp(self, t: float) -> pd.Timestamp:
        """Engine time ``t`` (epoch ms) as a Timestamp in this format's zone (``NaT`` for NaN)."""
        import pandas as pd

        if not math.isfinite(t):
            return pd.NaT  # type: ignore[return-value]  # NaT stands in for a missing Timestamp
        moment = pd.Timestamp(round(t * 1000), unit="us", tz="UTC")
        return moment.tz_localize(None) if self.tz is None else moment.tz_convert(self.tz)

    def text(self, t: float) -> str:
        """``t`` for people: the number as it is, or the date and time to the millisecond."""
        if self.elapsed and math.isfinite(t):
            return _elapsed_text(t)
        if not self.dates or not math.isfinite(t):
            return str(t)
        return self.timestamp(t).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    def series(self, values: Iterable[float] | pd.Series) -> pd.Series:
        """Engine times as a Timestamp column (``NaT`` for missing ones), or unchanged numbers."""
        import pandas as pd

        s = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype="float64")
        if self.elapsed:
            return timedeltas(s)
        if not self.dates:
            return s
        ms = pd.to_numeric(s, errors="coerce").astype("float64")
        far = ms.abs() > _MAX_DATE_MS
        if far.any():  # why: a date beyond pandas' range (a 10⁹-day window's end) cannot be shown
            n = int(far.sum())
            warnings.warn(
                f"{n} time(s) beyond the dates pandas can hold (±292,000 years) are shown as NaT",
                RuntimeWarning,
                stacklevel=2,
            )
            ms = ms.mask(far)
        stamps = pd.to_datetime(ms, unit="ms", utc=True)
        return stamps.dt.tz_localize(None) if self.tz is None else stamps.dt.tz_convert(self.tz)

    def frame(self, frame: pd.DataFrame, columns: Iterable[str] = TIME_COLUMNS) -> pd.DataFrame:
        """``frame`` with its time ``columns`` and time-valued measures as Timestamps, and measures
        that are differences of times as Timedeltas (a copy); ``frame`` itself for numbers."""

        if not self.shown and not self.fields and not self.durations:
            return frame
        out = frame.copy()
        for c in columns if self.shown else ():
            if c in out.columns:
                out[c] = self.series(out[c])
        for c, (kind, zone) in self._measures(frame).items():
            if c not in out.columns:
                continue
            if kind == "time":
                out[c] = zone.series(out[c])
            elif kind == "duration":
                out[c] = timedeltas(out[c])
        return out

    def events(self, frame: pd.DataFrame) -> pd.DataFrame:
        """An events frame (``time`` and one column per field) with its datetimes back as dates."""
        if not self.shown and not self.fields and not self.durations:
            return frame

        out = self.frame(frame, ("time",)) if self.shown else frame.copy()
        for name, tz in self.fields:
            if name in out.columns:
                out[name] = TimeFormat(True, tz).series(out[name])
        for name in self.durations:
            if name in out.columns:
                out[name] = timedeltas(out[name])
        return out

    def _measures(self, frame: pd.DataFrame) -> dict[str, tuple[str, TimeFormat]]:
        """Each measure column's kind (``time``, ``duration``, ``value``) and the zone of its dates.

        A measure with its expression at hand is judged against the attributes that hold times in
        this input (the time itself only when it held datetimes, and the datetime fields); one
        without (an older frame) keeps the engine's judgement.
        """
        from workbench.engine.expr import parse_expr
        from workbench.engine.expr.ir import Attr, walk
        from workbench.engine.nfa.measures import TIME_ATTRS, measure_kind

        zones = {name: TimeFormat(True, tz) for name, tz in self.fields}
        if self.shown:
            zones.update(dict.fromkeys(TIME_ATTRS, self))
        out: dict[str, tuple[str, TimeFormat]] = {}
        if self.shown:
            out.update((c, ("time", self)) for c in frame.attrs.get("time_columns", ()))
            out.update((c, ("duration", self)) for c in frame.attrs.get("duration_columns", ()))
        for name, text in frame.attrs.get("measure_exprs", {}).items():
            try:
                expr = parse_expr(text)
            except CepError:  # why: text that does not read back (edited attrs) keeps the engine's kind
                continue
            read = [n.name for n in walk(expr) if isinstance(n, Attr) and n.name in zones]
            kind = measure_kind(expr, zones.keys(), self.durations)
            if kind == "duration" and not self.shown and measure_kind(expr, {*zones, *TIME_ATTRS}) == "time":
                kind = "time"  # why: a number time plus a duration is a time, shown as the number it is
            out[name] = (kind, zones[read[0]] if read else self)
        return out


def timedeltas(values: pd.Series) -> pd.Series:
    """Engine durations (milliseconds) as a Timedelta column; ``NaT`` for a missing one, and, with a
    warning, for one beyond the ±292 years pandas can hold.

    >>> import pandas as pd
    >>> timedeltas(pd.Series([1500, None])).tolist()
    [Timedelta('0 days 00:00:01.500000'), NaT]
    """
    import pandas as pd

    ms = pd.to_numeric(values, errors="coerce").astype("float64")
    far = ms.abs() > _MAX_DATE_MS
    if far.any():
        warnings.warn(
            f"{int(far.sum())} duration(s) beyond what pandas can hold (±292 years) are shown as NaT",
            RuntimeWarning,
            stacklevel=2,
        )
        ms = ms.mask(far)
    return pd.to_timedelta(ms, unit="ms")


def _elapsed_text(t: float) -> str:
    """An elapsed time in milliseconds as a duration to the millisecond.

    >>> _elapsed_text(93_605_250), _elapsed_text(3_600_000)
    ('1 days 02:00:05.250', '0 days 01:00:00.000')
    """
    import pandas as pd

    try:
        text = str(pd.Timedelta(round(t * 1000), unit="us"))
    except (OverflowError, ValueError):  # why: beyond pandas' ±292 years: the number as it is
        return str(t)
    return (text if "." in text else text + ".000000")[:-3]  # why: pandas drops a zero fraction


#: the largest time in milliseconds a microsecond Timestamp holds (with a margin for rounding)
_MAX_DATE_MS = 9.2e15

NUMBERS = TimeFormat()
"""Times shown as the numbers they are (numeric input)."""


def wall_clock() -> TimeFormat:
    """Dates in this machine's time zone: the format of a live feed stamped by the wall clock."""
    return TimeFormat(True, datetime.datetime.now().astimezone().tzinfo)


def of_engine(engine: object) -> TimeFormat:
    """How ``engine``'s times read: wall-clock dates for a processing-time engine on the wall clock
    (a live feed), else numbers (an engine keeps no record of what its inputs' times were)."""
    from workbench.engine.runtime import wall_clock_ms

    live = getattr(engine, "time_mode", None) == "processing"
    return wall_clock() if live and getattr(engine, "clock", None) is wall_clock_ms else NUMBERS


TIME_UNITS = ("s", "ms", "us", "ns", "date")
"""What ``--time-unit`` accepts: epoch numbers in seconds ... nanoseconds, or dates written as text."""


def with_time_unit(data: object, time: str | None, unit: str | None) -> object:
    """``data`` with its time column as datetimes, read as ``unit`` says (``None``: ``data`` as it is).

    ``unit`` is an epoch unit (``s``, ``ms``, ``us``, ``ns``) for numbers, or ``date`` for ISO 8601
    text (mixed UTC offsets become UTC). A value that is not one gets a :class:`CepError` naming its
    row. Only a DataFrame (or a file read into one) has a column to convert. Without a ``unit``, a
    column of text (a CSV or JSON file's dates) is read as ISO 8601 dates when it is one.

    >>> import pandas as pd
    >>> with_time_unit(pd.DataFrame({"time": [1704067200]}), None, "s")["time"].tolist()
    [Timestamp('2024-01-01 00:00:00')]
    """
    import pandas as pd

    if unit is None:
        return _dates_as_text(data, time) if isinstance(data, pd.DataFrame) else data
    if unit not in TIME_UNITS:
        msg = f"unknown time unit {unit!r}; use one of {', '.join(TIME_UNITS)}"
        raise CepError(msg)
    if not isinstance(data, pd.DataFrame):
        msg = "--time-unit needs a DataFrame or an event file (events already carry numeric times)"
        raise CepError(msg)
    name = time or ("time" if "time" in data.columns else "t")
    if name not in data.columns:
        msg = (
            f"no time column {name!r} to read in unit {unit!r}; columns: {', '.join(map(str, data.columns))}"
        )
        raise CepError(msg)
    out = data.copy()
    out[name] = _parse_times(data[name], name, unit)
    return out


def _dates_as_text(data: pd.DataFrame, time: str | None) -> pd.DataFrame:
    """``data`` with a time column of text read as times (else ``data`` as it is).

    The first value says how: a number written as text (a JSON file's ``"time": "5"``, or a CSV
    column that one bad cell made text) makes the column numbers, anything else ISO 8601 dates. A
    value that is not one gets a :class:`CepError` naming it and its row and saying how to give
    times (numbers, ``--time-unit``), before any event is replayed.
    """
    import pandas as pd

    name = time or ("time" if "time" in data.columns else "t")
    if name not in data.columns or data.columns.duplicated().any():
        return data  # why: the column checks of the replay name what is missing or repeated
    column = data[name]
    if not (pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype)):
        return data
    present = column.dropna()
    if not any(isinstance(v, str) for v in present.head(1000)):
        return data  # why: numbers in an object column (a JSON list) are read as numbers
    # why the first time alone, by position (index labels may repeat): it says numbers or dates
    numeric = pd.notna(pd.to_numeric(present.iloc[:1], errors="coerce").iloc[0])
    if numeric:
        converted = pd.to_numeric(column, errors="coerce")
        what = "not a number, as the column's first time is"
    else:
        converted = pd.to_datetime(column, format="ISO8601", utc=True, errors="coerce")
        what = "neither a number nor an ISO 8601 date"
    bad = (converted.isna() & column.notna()).to_numpy()
    if bad.any():
        pos = int(bad.argmax())
        row = column.index[pos]
        row = row.item() if hasattr(row, "item") else row  # why: show 11, not np.int64(11)
        msg = (
            f"column {name!r}, row {row!r}: {column.iloc[pos]!r} is {what}; give times as numbers "
            "(milliseconds), ISO dates such as 2024-01-01T09:30:00Z, or say how with "
            "--time-unit s|ms|us|ns|date"
        )
        raise CepError(msg)
    out = data.copy()
    out[name] = converted if numeric else _parse_times(column, name, "date")
    return out


def _parse_times(column: pd.Series, name: str, unit: str) -> pd.Series:
    """The column as datetimes; a :class:`CepError` names the first value that is not a time."""
    import pandas as pd

    dated = datetimes(column)
    if dated is not None:
        return dated  # why: already datetimes, whatever the unit says
    epoch = _EPOCH_UNITS.get(unit)
    if epoch is not None and not pd.api.types.is_numeric_dtype(column.dtype):
        _not_a_time(column, pd.to_numeric(column, errors="coerce"), name, f"a number of {unit}", unit)
    try:
        if epoch is not None:
            parsed: pd.Series = pd.to_datetime(column, unit=epoch)
            return parsed
        try:
            parsed = pd.to_datetime(column, format="ISO8601")
        except ValueError:  # why: mixed UTC offsets (or naive and aware) only agree in UTC
            parsed = pd.to_datetime(column, format="ISO8601", utc=True)
        return parsed
    except (ValueError, TypeError, OverflowError):
        if epoch is not None:
            coerced = pd.to_datetime(column, unit=epoch, errors="coerce")
            _not_a_time(column, coerced, name, f"an epoch time in {unit}", unit)
        coerced = pd.to_datetime(column, format="ISO8601", utc=True, errors="coerce")
        _not_a_time(column, coerced, name, "an ISO 8601 date", unit)


_EPOCH_UNITS: dict[str, Literal["s", "ms", "us", "ns"]] = {"s": "s", "ms": "ms", "us": "us", "ns": "ns"}


def _not_a_time(column: pd.Series, parsed: pd.Series, name: str, what: str, unit: str) -> NoReturn:
    """Raise the error naming the first value of ``column`` that did not parse (``parsed`` NaN)."""
    bad = (parsed.isna() & column.notna()).to_numpy()
    pos = int(bad.argmax()) if bad.any() else 0
    value = column.iloc[pos]
    value = value.item() if hasattr(value, "item") else value
    msg = f"column {name!r}, row {column.index[pos]}: {value!r} is not {what} (--time-unit {unit})"
    raise CepError(msg)


def finer_than_ms(column: pd.Series) -> int | None:
    """The position of the first datetime in ``column`` with parts finer than a millisecond, which
    the engine's clock cannot hold; ``None`` when there is none or the column holds no datetimes.

    >>> import pandas as pd
    >>> finer_than_ms(pd.Series(pd.to_datetime(["2024-01-01 00:00:00.123", "2024-01-01 00:00:00.123456"])))
    1
    >>> finer_than_ms(pd.Series([1.5])) is None
    True
    """

    if not is_datetime64(column):
        return None
    finer = ((column.dt.microsecond % 1000 != 0) | (column.dt.nanosecond != 0)) & column.notna()
    return int(finer.to_numpy().argmax()) if finer.any() else None
