"""Event mappings with date and duration values, read as a DataFrame's datetime columns are.

A list of dicts (as a SQL driver's rows or a live feed give them) may hold ``datetime``, ``date``,
``pd.Timestamp``, ``timedelta`` or numpy ``datetime64``/``timedelta64`` values. The engine keeps
times and durations as milliseconds (a datetime with a zone in UTC, a naive one as UTC wall time, a
date at midnight), so :func:`plain_record` turns them into those numbers, as
:func:`workbench.backends.columnar.frame.convert_column` does for columns, and :func:`records_format`
remembers which attributes held them, so the output gives dates and durations back.

>>> import datetime
>>> at, wait = datetime.datetime(1970, 1, 1, 0, 0, 1), datetime.timedelta(seconds=2)
>>> plain_record({"type": "a", "time": at, "wait": wait})
{'type': 'a', 'time': 1000, 'wait': 2000}
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any, cast

from workbench.session.times import NUMBERS, TimeFormat

__all__ = ["plain_record", "plain_value", "records_format"]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_NAIVE_EPOCH = datetime.datetime(1970, 1, 1)  # noqa: DTZ001  # naive datetimes are UTC wall time
_MS = datetime.timedelta(milliseconds=1)

#: numpy's scalar types for dates and durations, by name (numpy is imported only when one comes)
_NUMPY_KINDS = {"datetime64": "time", "timedelta64": "duration"}


def plain_value(value: object) -> object:
    """``value`` as the engine holds it: a date or time as epoch milliseconds (floored), a duration
    as milliseconds, a missing one (``NaT``) as ``None``; any other value as it is.

    >>> [plain_value(v) for v in (datetime.date(1970, 1, 2), datetime.timedelta(microseconds=2500), "x")]
    [86400000, 2, 'x']
    """
    kind = _kind(value)
    if kind is None:
        return value
    if type(value).__module__ == "numpy":
        return _numpy_ms(value, kind)
    if value != value:  # why: NaT is missing, as in a DataFrame's datetime column
        return None
    if isinstance(value, datetime.datetime):
        return (value - (_NAIVE_EPOCH if value.tzinfo is None else _EPOCH)) // _MS
    if isinstance(value, datetime.date):
        return (datetime.datetime.combine(value, datetime.time()) - _NAIVE_EPOCH) // _MS
    assert isinstance(value, datetime.timedelta)
    return value // _MS


def _numpy_ms(value: object, kind: str) -> int | None:
    """A numpy ``datetime64`` (naive: UTC wall time) or ``timedelta64`` in milliseconds, floored as
    a DataFrame column's are (any year numpy holds; ``None`` for NaT)."""
    import numpy as np

    given = cast("Any", value)
    if np.isnat(given):
        return None
    unit = "datetime64[ms]" if kind == "time" else "timedelta64[ms]"
    return int(given.astype(unit).astype(np.int64))


def plain_record(raw: Mapping[str, object]) -> dict[str, object]:
    """An event mapping with its date and duration values (inline or under ``fields``) as
    milliseconds (:func:`plain_value`); the type stays as given."""
    out = {
        name: value if value.__class__ in _PLAIN or name == "type" else plain_value(value)
        for name, value in raw.items()
    }
    nested = out.get("fields")
    if isinstance(nested, Mapping):
        out["fields"] = {
            name: value if value.__class__ in _PLAIN else plain_value(value) for name, value in nested.items()
        }
    return out


#: the classes of the usual values, which are never dates (a quick test before :func:`_kind`)
_PLAIN = frozenset({str, int, float, bool, type(None)})


def records_format(items: Iterable[object], time: str | None = None) -> TimeFormat:
    """How to show the times of event mappings ``items``: dates when the time attribute (``time``,
    else ``time`` or ``t``) held dates, and the fields that held dates or durations.

    A date attribute's zone is the one its values share (``None``: naive), else UTC.

    >>> at, wait = datetime.datetime(2024, 1, 1), datetime.timedelta(1)
    >>> f = records_format([{"type": "a", "time": at, "wait": wait}])
    >>> f.dates, f.tz, f.durations
    (True, None, ('wait',))
    """
    zones: dict[str, set[str | None]] = {}
    tzinfo: dict[str, datetime.tzinfo | None] = {}
    durations: dict[str, None] = {}
    for item in items:
        if not isinstance(item, Mapping):
            continue
        nested = item.get("fields")
        values = [*item.items(), *(nested.items() if isinstance(nested, Mapping) else ())]
        for name, value in values:
            kind = None if value.__class__ in _PLAIN else _kind(value)
            if kind is None or plain_value(value) is None:  # why: a missing date (NaT) has no zone
                continue
            if kind == "duration":
                durations[name] = None
            else:
                zone = getattr(value, "tzinfo", None)  # why: a numpy datetime64 is naive
                zones.setdefault(name, set()).add(None if zone is None else str(zone))
                tzinfo.setdefault(name, zone)
    if not zones and not durations:
        return NUMBERS
    name = time or ("t" if "t" in zones and "time" not in zones else "time")
    shown = {n: (tzinfo[n] if len(z) == 1 else datetime.UTC) for n, z in zones.items()}
    fields = tuple((n, tz) for n, tz in shown.items() if n != name)
    return TimeFormat(name in shown, shown.get(name), fields, tuple(d for d in durations if d not in zones))


def _kind(value: object) -> str | None:
    """``time`` for a date or time, ``duration`` for a duration, ``None`` for anything else."""
    if isinstance(value, datetime.date):  # a datetime and a Timestamp too
        return "time"
    if isinstance(value, datetime.timedelta):  # a pd.Timedelta too
        return "duration"
    return _NUMPY_KINDS.get(type(value).__name__) if type(value).__module__ == "numpy" else None
