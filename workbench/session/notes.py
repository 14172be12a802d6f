"""What a user reads about patterns and runs: one-line descriptions, and notes on late events and errors."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from workbench.engine.events import Event
from workbench.engine.faults import ConditionFault
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.reactions.patterns import ReactionGroup, Receive
from workbench.session.datetimes import datetimes, mixed_datetimes
from workbench.session.times import finer_than_ms

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "describe",
    "errors_note",
    "input_notes",
    "kind_of",
    "late_note",
    "missing_key_note",
    "mixed_dates_note",
    "partition_note",
]


def kind_of(pattern: object) -> str:
    """``"sequence"``, ``"group"`` or ``"receive"`` (anything else: ``"pattern"``)."""
    if isinstance(pattern, SequencePattern):
        return "sequence"
    if isinstance(pattern, ReactionGroup):
        return "group"
    if isinstance(pattern, Receive):
        return "receive"
    return "pattern"


def describe(pattern: object) -> str:
    """A short phrase: ``sequence with 3 stage(s)``, ``@and group with 2 member(s)``, ``receive``."""
    if isinstance(pattern, SequencePattern):
        return f"sequence with {len(pattern.stages)} stage(s)"
    if isinstance(pattern, ReactionGroup):
        return f"@{pattern.operator} group with {len(pattern.channels)} member(s)"
    if isinstance(pattern, Receive):
        return f"receive on {pattern.type or 'any'} events"
    return type(pattern).__name__


def late_note(
    late: Sequence[Event], out_of_orderness: float, how_to_see: str, time_text: Callable[[float], str] = str
) -> str:
    """One sentence about late events for the user: how many, the first one (its time as
    ``time_text`` writes it: a date for date input), where to find them."""
    first = min(late, key=lambda e: e.seq)
    return (
        f"{len(late)} late event(s) were not matched: each arrived after an event more than "
        f"{out_of_orderness:g} ms newer (first: event #{first.seq}, type {first.type!r}, "
        f"time {time_text(first.time)}); "
        f"{how_to_see}, or allow out-of-order input with --out-of-orderness MS"
    )


def errors_note(
    errors: Sequence[ConditionFault], how_to_see: str, time_text: Callable[[float], str] = str
) -> str:
    """One sentence about condition errors: how many, the first one (its time as ``time_text``
    writes it), where to find them."""
    first = errors[0]
    events = sum(f.count for f in errors)
    return (
        f"{len(errors)} kind(s) of condition error on {events} event(s); those events did not match "
        f"(first: {first.describe(time_text)}); {how_to_see}, or stop at the first with --strict"
    )


def partition_note(how_to_key: str) -> str:
    """One sentence for a replay in which no event had a key: everything was one partition."""
    return (
        "no event has a key and no pattern says 'partition by', so all events form one partition "
        f"(every match may combine events of any source); {how_to_key}"
    )


def missing_key_note(count: int) -> str:
    """One sentence for a replay that allowed events without a partition key value."""
    return (
        f"{count} event(s) had no value in the partition key column: they share the NULL key "
        "(allowed by --allow-missing-key), so they may match each other"
    )


#: epoch units a number column of times may be in, by the smallest magnitude that gives it away: as
#: seconds from 1e9 (2001) to 1e11, as microseconds from 1e14 (the year 5138 as milliseconds), as
#: nanoseconds from 1e17
_UNIT_BANDS = ((1e17, math.inf, "ns", 1e-6), (1e14, 1e17, "us", 1e-3), (1e9, 1e11, "s", 1e3))


def time_unit_note(data: object, time: str | None, unit: str | None = None) -> str | None:
    """A note when a DataFrame's time column holds numbers that look like epoch seconds, micro- or
    nanoseconds (the engine reads numbers as milliseconds, so ``within 10min`` would not mean ten
    minutes); ``None`` otherwise, and when ``--time-unit`` (``unit``) said how to read them.

    >>> import pandas as pd
    >>> time_unit_note(pd.DataFrame({"time": [1714557600, 1714557660]}), None)[:52]
    'the times look like epoch seconds (1714557600 is 202'
    >>> time_unit_note(pd.DataFrame({"time": [0, 5000]}), None) is None
    True
    """
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        return None
    name = time or ("time" if "time" in data.columns else "t")
    if name not in data.columns or data.columns.duplicated().any():
        return None
    column = data[name]
    dated = datetimes(column)  # why: datetime objects and pyarrow dates are datetimes to the engine
    if dated is not None:
        return _sub_millisecond_note(dated, name)
    if unit is not None:
        return None
    if not pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        return None
    values = pd.to_numeric(column, errors="coerce").dropna()
    if values.empty:
        return None
    low, high = float(values.min()), float(values.max())
    for start, end, unit, to_ms in _UNIT_BANDS:
        if start <= low and high < end:
            first = values.iloc[0]
            as_unit = pd.Timestamp(round(float(first) * to_ms), unit="ms").isoformat(sep=" ")
            words = _UNIT_WORDS[unit]
            return (
                f"the times look like epoch {words} ({first} is {as_unit} in {words}), but numbers "
                f"are read as milliseconds, so windows such as 'within 10min' would not mean what they "
                f"say; if they are {words}, give --time-unit {unit}"
            )
    return None


_UNIT_WORDS = {"s": "seconds", "us": "microseconds", "ns": "nanoseconds"}


def _sub_millisecond_note(column: pd.Series, name: str) -> str | None:
    """A note when datetimes have parts finer than a millisecond, which the engine's clock drops.

    >>> import pandas as pd
    >>> _sub_millisecond_note(pd.Series(pd.to_datetime(["2024-01-01 00:00:00.123456"])), "time")[:64]
    "column 'time' has times finer than a millisecond (row 0: 2024-01"
    """
    row = finer_than_ms(column)
    if row is None:
        return None
    return (
        f"column {name!r} has times finer than a millisecond (row {row}: {column.iloc[row]}); the "
        "engine's clock counts milliseconds, so windows and the detections' times use them cut to "
        "the millisecond (events keep their order)"
    )


def mixed_dates_note(data: object) -> str | None:
    """A note naming the first column of a DataFrame that mixes datetimes or dates with values of
    another kind: unlike a column of one kind, it stays as given, so a condition comparing it with
    ``timestamp(...)`` fails on its events; ``None`` when there is none.

    >>> import datetime, pandas as pd
    >>> mixed_dates_note(pd.DataFrame({"at": [datetime.datetime(2024, 1, 2), "n/a"]}))[:62]
    "column 'at' mixes datetimes with values of another kind (row 1"
    """
    import pandas as pd

    if not isinstance(data, pd.DataFrame) or data.columns.duplicated().any():
        return None
    for name, column in data.items():
        pos = mixed_datetimes(column)
        if pos is not None:
            first = column.dropna().iloc[0]
            return (
                f"column {name!r} mixes datetimes with values of another kind (row {pos}: "
                f"{column.iloc[pos]!r}, first value: {first!r}), so it stays as given and a condition "
                f"comparing it with timestamp(...) fails on those events; make it one kind, such as "
                f"pd.to_datetime(df[{name!r}], errors='coerce', utc=True)"
            )
    return None


def fine_fields_note(data: object, time: str | None) -> str | None:
    """A note naming the first datetime or timedelta field of a DataFrame (not its time column) with
    parts finer than a millisecond: the engine holds such fields in milliseconds, so conditions
    and detections read them cut to the millisecond; ``None`` when there is none.

    >>> import pandas as pd
    >>> fine_fields_note(pd.DataFrame({"time": [1], "wait": pd.to_timedelta(["1.5ms"])}), None)[:57]
    "column 'wait' has parts finer than a millisecond (row 0: "
    """
    import pandas as pd

    if not isinstance(data, pd.DataFrame) or data.columns.duplicated().any():
        return None
    name = time or ("time" if "time" in data.columns else "t")
    for field, column in data.items():
        if field == name:
            continue
        dated = datetimes(column)
        row = finer_than_ms(dated) if dated is not None else _finer_duration(column)
        if row is not None:
            return (
                f"column {field!r} has parts finer than a millisecond (row {row}: {column.iloc[row]}); "
                "the engine holds its values in milliseconds, so conditions and detections read them "
                "cut to the millisecond"
            )
    return None


def _finer_duration(column: pd.Series) -> int | None:
    """The position of the first timedelta in ``column`` with parts finer than a millisecond."""
    import pandas as pd

    if not pd.api.types.is_timedelta64_dtype(column.dtype):
        return None
    nanos = column.dt.components  # why parts: exact for any unit, NaT rows NaN
    finer = ((nanos["microseconds"] != 0) | (nanos["nanoseconds"] != 0)) & column.notna()
    return int(finer.to_numpy().argmax()) if finer.any() else None


def input_notes(data: object, time: str | None, unit: str | None) -> list[str]:
    """What a user should know about an input before its run (``data`` as given, before
    ``--time-unit`` reads it): times that look like another unit or are finer than the clock,
    columns that mix dates with other values, fields finer than a millisecond."""
    notes = (time_unit_note(data, time, unit), mixed_dates_note(data), fine_fields_note(data, time))
    return [n for n in notes if n is not None]
