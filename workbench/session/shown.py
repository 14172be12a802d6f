"""How one pattern's run reads for people: its times, datetime fields and partition keys as dates.

The engine holds a datetime column as epoch milliseconds, a ``partition by`` such a column too (a
key ``1704067200000``, or ``(1704067200000, 'ann')`` for ``partition by day, user``). A
:class:`Shown` knows the input's :class:`~workbench.session.times.TimeFormat` and the pattern's
partition fields, so explain texts, the timeline and the detections' ``key`` column show those
values as the dates they were, and ``--key 2024-01-01`` names the key they became.

>>> import pandas as pd
>>> days = pd.DataFrame({"time": [0], "day": pd.to_datetime(["2024-01-01"])})
>>> shown = Shown(TimeFormat.of_input(days), "day")
>>> shown.key(1704067200000)
"'2024-01-01 00:00:00.000'"
>>> shown.wanted("2024-01-01")
1704067200000
>>> shown.field("day", 1704067200000), shown.field("qty", 3)
("'2024-01-01 00:00:00.000'", '3')
"""

from __future__ import annotations

import ast
import contextlib
import datetime
import math
import zoneinfo
from collections.abc import Callable, Collection, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from workbench.session.records import plain_value
from workbench.session.times import NUMBERS, TimeFormat

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PLAIN", "Partition", "Shown", "given_key", "keys_as_dates"]

_T = TypeVar("_T")

Partition = str | tuple[str, ...] | None
"""A pattern's ``partition by`` field(s) (``None``: its events' own keys)."""


@dataclass(frozen=True)
class Shown:
    """How the values of one pattern's run read: ``times`` of its input, ``partition`` its key fields."""

    times: TimeFormat = NUMBERS
    partition: Partition = None

    def time(self, t: float) -> str:
        """An engine time as text (a date for datetime input)."""
        return self.times.text(t)

    def field(self, name: str, value: object) -> str:
        """Field ``name``'s value as text: a datetime field's milliseconds as its date, a timedelta
        field's as its duration, else ``repr``."""
        if not _is_ms(value):
            return repr(value)
        if name in self.times.durations:  # why: a timedelta field's milliseconds, as a duration
            with contextlib.suppress(OverflowError):  # why: beyond a timedelta's 999,999,999 days
                return repr(str(datetime.timedelta(milliseconds=value)))  # type: ignore[arg-type]  # _is_ms
            return repr(value)
        zone = self._zones().get(name)
        if zone is None:
            return repr(value)
        return repr(zone.text(value))  # type: ignore[arg-type]  # _is_ms: a finite number

    def key_value(self, key: Hashable) -> object:
        """A partition key as shown: its datetime parts as Timestamps in their zones."""
        out = self._each_part(key, _stamp)
        return key if out is None else out

    def key(self, key: Hashable) -> str:
        """A partition key as text: ``'ann'``, ``'2024-01-01 00:00:00.000'``, ``('...', 'ann')``."""
        out = self._each_part(key, _text)
        if out is None:
            return repr(key)
        return out if isinstance(out, str) else f"({', '.join(out)})"

    def wanted(self, key: object) -> object:
        """The engine's key that ``key`` (``--key`` as given) names: a date for a datetime partition
        field becomes its milliseconds; anything else stays as it is."""
        out = self._each_part(key, _ms)
        return key if out is None else out

    def named(self, key: Hashable, keys: Collection[Hashable]) -> Hashable:
        """The key of ``keys`` (a run's) that ``key`` names. Text (``--key``) is the key itself when
        ``keys`` has it, else what it reads as (a literal such as ``5`` or ``('ann', 5)``, a date for a
        datetime partition); any other value is the key itself (a Timestamp: its milliseconds)."""
        if not isinstance(key, str):
            return self.wanted(key)
        for named in (key, self.wanted(given_key(key)), self.wanted(key)):
            with contextlib.suppress(TypeError):  # why: a literal may be unhashable ([1]): no key
                if named in keys:
                    return named
        return self.wanted(given_key(key))  # why: explain then says no instance has it

    def _each_part(
        self, key: object, convert: Callable[[TimeFormat | None, object], _T]
    ) -> _T | tuple[_T, ...] | None:
        """``convert(format of its dates, part)`` of each part of ``key`` (the key itself for one
        partition field); ``None`` when no part is a datetime field or ``key`` is not of this partition."""
        parts = self._key_zones()
        if not any(parts):
            return None
        if len(parts) == 1:
            return convert(parts[0], key)
        if not isinstance(key, tuple) or len(key) != len(parts):
            return None  # why: not a key of this partition (an older run's): as it is
        return tuple(convert(zone, part) for zone, part in zip(parts, key, strict=True))

    def _zones(self) -> dict[str, TimeFormat]:
        return {name: TimeFormat(True, tz) for name, tz in self.times.fields}

    def _key_zones(self) -> list[TimeFormat | None]:
        """Per part of the key, the format of its dates (``None``: not a datetime field)."""
        if self.partition is None:
            return []
        names = (self.partition,) if isinstance(self.partition, str) else self.partition
        zones = self._zones()
        return [zones.get(n) for n in names]


def given_key(text: str) -> object:
    """The key that ``--key TEXT`` names: a Python literal (``5``, ``('ann', 2)``), else the text itself
    (a date for a datetime partition is then read by :meth:`Shown.wanted`).

    >>> given_key("5"), given_key("('ann', 2)"), given_key("ann"), given_key("2024-01-02")
    (5, ('ann', 2), 'ann', '2024-01-02')
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):  # why: hostile text too
        return text


PLAIN = Shown()
"""Values as the engine holds them (numeric input, or no input known)."""


def keys_as_dates(
    frame: pd.DataFrame, times: TimeFormat, partitions: Mapping[str, Partition]
) -> pd.DataFrame:
    """``frame`` (detections) with the keys of patterns partitioned by datetime fields as dates.

    ``partitions`` names each pattern's partition fields; rows of other patterns keep their keys. When
    every row's key is one date, the column becomes a datetime column.
    """
    import pandas as pd

    if not times.fields or "key" not in frame.columns or "pattern" not in frame.columns:
        return frame
    shown = {name: Shown(times, p) for name, p in partitions.items()}
    dated = {name for name, s in shown.items() if any(s._key_zones())}
    if not dated or not frame["pattern"].isin(dated).any():
        return frame
    out = frame.copy()
    values = [
        shown[p].key_value(k) if p in dated else k for p, k in zip(out["pattern"], out["key"], strict=True)
    ]
    if values and all(isinstance(v, pd.Timestamp) for v in values):
        out["key"] = pd.Series(values, index=out.index)
        if len({str(getattr(v, "tz", None)) for v in values}) == 1:  # why: one zone: a proper datetime column
            out["key"] = pd.to_datetime(out["key"])
    else:
        out["key"] = pd.Series(values, index=out.index, dtype=object)
    return out


def _is_ms(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _stamp(zone: TimeFormat | None, value: object) -> object:
    return zone.timestamp(value) if zone is not None and _is_ms(value) else value  # type: ignore[arg-type]


def _text(zone: TimeFormat | None, value: object) -> str:
    return repr(zone.text(value)) if zone is not None and _is_ms(value) else repr(value)  # type: ignore[arg-type]


def _ms(zone: TimeFormat | None, value: object) -> object:
    """A date given as ISO 8601 text (or a Timestamp) as the engine's milliseconds, read in the
    field's zone when it names none (else ``value`` as it is: not a date, or not a date field)."""
    if zone is None:
        return value
    if isinstance(value, datetime.datetime):  # a Timestamp too
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.datetime.fromisoformat(value.strip())
        except ValueError:
            return value  # why: not a date: the key as given (explain then says no instance has it)
    else:
        return value
    if moment.tzinfo is None:
        moment = _localize(moment, zone.tz)
    return plain_value(moment)  # why: exact for every year a datetime holds, as a mapping's date is


def _localize(moment: datetime.datetime, tz: datetime.tzinfo | str | None) -> datetime.datetime:
    """A naive ``moment`` as wall time in ``tz`` (``None``: naive input, read as UTC)."""
    if tz is None:
        return moment.replace(tzinfo=datetime.UTC)
    zone = zoneinfo.ZoneInfo(tz) if isinstance(tz, str) else tz
    localize = getattr(zone, "localize", None)  # why: a pytz zone must localize, not be attached
    return localize(moment) if callable(localize) else moment.replace(tzinfo=zone)
