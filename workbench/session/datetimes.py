"""Datetimes in the forms pandas holds them besides numpy ``datetime64``, read as datetime64.

Python ``datetime``/``date``/``pd.Timestamp`` objects (as SQL drivers give them), pyarrow
timestamps and dates, and categoricals of datetimes become the datetime64 column with the same
values, so the engine reads them as it reads any datetime column and the output gives dates back.
A column mixing kinds stays as given (:func:`mixed_datetimes` finds it for a note).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["as_datetimes", "datetimes", "is_datetime64", "mixed_datetimes", "with_datetimes"]


def is_datetime64(column: pd.Series) -> bool:
    """Whether ``column`` is a numpy datetime64 column, naive or with a zone (``datetime64[ns, tz]``)."""
    import pandas as pd

    return isinstance(column.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(column.dtype)


def datetimes(column: pd.Series) -> pd.Series | None:
    """``column`` as the datetime64 column the engine reads it as (see :func:`as_datetimes`);
    ``None`` when it holds no datetimes."""
    return column if is_datetime64(column) else as_datetimes(column)


def as_datetimes(column: pd.Series) -> pd.Series | None:
    """A column of datetimes in another form than datetime64, as datetime64 with the same values;
    ``None`` for a datetime64 column and for one that does not convert exactly.

    The forms: Python ``datetime`` objects (``pd.Timestamp`` too, as SQL drivers give them), all
    naive or all with a zone (one zone stays; several become UTC, the same moments); ``date``
    objects (midnight, naive); pyarrow timestamps and dates (``dtype_backend="pyarrow"``); and a
    categorical of any of these. A column mixing kinds (datetimes and text, dates and datetimes,
    naive and zoned) is not converted: there is no one way to read it (:func:`mixed_datetimes`).

    >>> import datetime, pandas as pd
    >>> as_datetimes(pd.Series([datetime.date(2024, 1, 2), None])).tolist()
    [Timestamp('2024-01-02 00:00:00'), NaT]
    >>> as_datetimes(pd.Series([datetime.datetime(2024, 1, 2), "soon"])) is None
    True
    """
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _categorical_datetimes(column, dtype)
    if getattr(dtype, "pyarrow_dtype", None) is not None:  # why duck-typed: pyarrow is optional
        return _arrow_datetimes(column)
    if pd.api.types.is_object_dtype(dtype):
        return _object_datetimes(column)
    return None


def with_datetimes(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each column :func:`as_datetimes` converts as that datetime64 column (a copy,
    attrs kept), so the engine reads it as it reads any datetime column; ``frame`` when none is."""
    # why by position: a repeated column name is no Series (the replay refuses it, naming it)
    converted = {
        i: dated for i, (_, column) in enumerate(frame.items()) if (dated := as_datetimes(column)) is not None
    }
    if not converted:
        return frame
    out = frame.copy(deep=False)
    for i, dated in converted.items():
        out.isetitem(i, dated.array)  # why the array: the index is the frame's already
    return out


def _categorical_datetimes(column: pd.Series, dtype: pd.CategoricalDtype) -> pd.Series | None:
    """A categorical whose categories are datetimes, as its values (``None`` for other categories)."""
    import pandas as pd

    if datetimes(pd.Series(dtype.categories)) is None:  # why first: the categories are few
        return None
    plain = column.astype(dtype.categories.dtype)
    return datetimes(plain)


def _arrow_datetimes(column: pd.Series) -> pd.Series | None:
    """A pyarrow timestamp or date column as datetime64 in the same unit (dates: milliseconds, which
    hold both date32 and date64 exactly) and zone."""
    import numpy as np
    import pandas as pd

    arrow = column.dtype.pyarrow_dtype  # type: ignore[union-attr]  # checked by the caller
    if column.dtype.kind != "M":  # why kind: timestamps and dates are "M" (durations "m")
        return None
    unit = cast("Literal['s', 'ms', 'us', 'ns']", getattr(arrow, "unit", "ms"))
    tz = getattr(arrow, "tz", None)
    target = pd.DatetimeTZDtype(unit, tz) if tz else np.dtype(f"datetime64[{unit}]")
    return _exact(column, column.astype(target))


def _object_datetimes(column: pd.Series) -> pd.Series | None:
    """An object column of one kind of datetime values as datetime64 (``None``: any other column)."""
    import pandas as pd

    if pd.api.types.infer_dtype(column, skipna=True) not in ("datetime", "date", "datetime64"):
        return None  # why first: a cheap pass that rules out text and numbers
    kinds = _value_kinds(column)
    if len(kinds) != 1 or "other" in kinds:
        return None
    try:
        try:
            converted = pd.to_datetime(column)
        except ValueError:  # why: datetimes in several zones (UTC offsets) only agree in UTC
            if kinds != {"zoned"}:
                return None
            converted = pd.to_datetime(column, utc=True)
    except (ValueError, TypeError, OverflowError):
        return None
    return _exact(column, converted)


def _value_kinds(column: pd.Series) -> set[str]:
    """The kinds of the present values of ``column`` (see :func:`_value_kind`)."""
    return set(map(_value_kind, column.dropna().tolist()))


def _value_kind(value: object) -> str:
    """``naive`` or ``zoned`` for a datetime (``np.datetime64``: naive), ``date``, else ``other``."""
    import numpy as np

    if isinstance(value, datetime.datetime):  # pd.Timestamp too
        return "naive" if value.utcoffset() is None else "zoned"
    if isinstance(value, datetime.date):
        return "date"
    return "naive" if isinstance(value, np.datetime64) else "other"


#: what ``infer_dtype`` says of an object column that may hold datetimes or dates
_MAY_HOLD_DATES = frozenset({"datetime", "date", "datetime64", "mixed", "mixed-integer"})


def mixed_datetimes(column: pd.Series) -> int | None:
    """The position of the first value of an object column of datetimes or dates that is not of the
    kind of its first value (text or a number among datetimes, a date among datetimes, a naive
    datetime among zoned ones): :func:`as_datetimes` leaves such a column as it is. ``None`` for
    a column of one kind.

    >>> import datetime, pandas as pd
    >>> mixed_datetimes(pd.Series([datetime.datetime(2024, 1, 2), None, "n/a"]))
    2
    """
    import numpy as np
    import pandas as pd

    if not pd.api.types.is_object_dtype(column.dtype):
        return None
    if pd.api.types.infer_dtype(column, skipna=True) not in _MAY_HOLD_DATES:
        return None  # why first: a cheap pass that rules out text and numbers
    present = np.flatnonzero(column.notna().to_numpy())
    values = column.iloc[present].tolist()
    if not any(issubclass(kind, (datetime.date, np.datetime64)) for kind in set(map(type, values))):
        return None  # why: a mixed column of text and numbers (one C-level pass over the types)
    kinds = [_value_kind(v) for v in values]
    if set(kinds) <= {"other"} or len(set(kinds)) == 1:
        return None
    return int(present[next(i for i, k in enumerate(kinds) if k != kinds[0])])


def _exact(column: pd.Series, converted: pd.Series) -> pd.Series | None:
    """``converted`` when it lost no value of ``column`` (a value that became NaT: ``None``)."""
    lost = (converted.isna() & column.notna()).any()
    return None if lost else converted
