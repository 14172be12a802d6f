"""Typed pandas columns from Python values, as the record frames of :mod:`workbench.results` hold them.

Times stay integers when every value is one (``int64``, nullable ``Int64`` with gaps), else floats;
tuples, dicts and keys stay Python objects, one per cell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise
from typing import Final

import numpy as np
import pandas as pd

__all__ = ["INT", "SEQ_IS_POSITION", "measure_series", "objects", "strings", "time_spans", "times"]

INT: Final = "Int64"  # nullable integer: stays integral when a value is missing
#: a DataFrame attribute: its ``seq`` column holds the events' arrival positions, not a field (set by
#: :func:`~workbench.results.events_to_frame`, so a frame of events turns back into the same events)
SEQ_IS_POSITION: Final = "workbench.seq_is_position"
_NONE: Final = type(None)
_INTEGRAL: Final = frozenset({int, bool, _NONE})  # the plain classes isinstance(v, int) accepts
_NUMERIC: Final = frozenset({int, bool, float, _NONE})


def times(values: Sequence[int | float | None]) -> pd.Series:
    """Times as the input gave them: int64 when all are integers (nullable ``Int64`` when some are
    missing, ``None``), else float64 (missing: NaN)."""
    classes = set(map(type, values))
    if classes <= _INTEGRAL and _in_int64(values):  # why: one C pass over the classes decides
        return pd.Series(values, dtype="int64" if _NONE not in classes else INT)
    if classes <= _INTEGRAL:  # why: an id past 2**63 (an unsigned 64-bit one) stays exact
        return objects(values)
    if not classes <= _NUMERIC:  # why: int subclasses, numpy scalars, ...: the test per value
        present = [v for v in values if v is not None]
        if all(isinstance(v, int) for v in present):
            return pd.Series(values, dtype="int64" if len(present) == len(values) else INT)
    if _NONE in classes:
        values = [math.nan if v is None else v for v in values]
    return pd.Series(values, dtype="float64")


def _in_int64(values: Sequence[int | float | None]) -> bool:
    present = [v for v in values if v is not None]
    return not present or (min(present) >= -(2**63) and max(present) < 2**63)


def objects(values: Sequence[object]) -> pd.Series:
    """A column that keeps Python objects as they are (keys, tuples, dicts)."""
    # np.fromiter keeps each value one cell (a list assignment would unpack equal-length tuples)
    return pd.Series(np.fromiter(values, dtype=object, count=len(values)), dtype=object)


def strings(values: Sequence[str | None]) -> pd.Series:
    return pd.Series(values, dtype=object)


def time_spans(flat: list[int | float], lens: Sequence[int]) -> tuple[pd.Series, pd.Series]:
    """``first_time`` and ``last_time``: each row's earliest and latest event time (none: missing).

    ``flat``: the times of every row's events, row after row.

    Plain ints only or floats only (no NaN): one numpy reduction per column. Anything else (ints
    mixed with floats, where the dtype follows the classes of the minima and maxima themselves,
    NaN, huge ints, other number types) takes Python's ``min``/``max`` per row.
    """
    classes = set(map(type, flat))
    dtype = np.int64 if classes <= _INTEGRAL else np.float64 if classes == {float} else None
    try:
        values = np.array(flat, dtype=dtype) if dtype is not None and flat else None
    except OverflowError:  # why: an int beyond int64
        values = None
    if values is None or (dtype is np.float64 and bool(np.isnan(values).any())):
        cuts = np.cumsum([0, *lens]).tolist()
        per_row = [flat[a:b] for a, b in pairwise(cuts)]
        return (
            times([min(ts) if ts else None for ts in per_row]),
            times([max(ts) if ts else None for ts in per_row]),
        )
    sizes = np.asarray(lens, dtype=np.int64)
    filled = np.flatnonzero(sizes)
    starts = (np.cumsum(sizes) - sizes)[filled]
    out = []
    for reduce in (np.minimum.reduceat, np.maximum.reduceat):
        got = reduce(values, starts)
        if len(filled) == len(sizes):
            out.append(pd.Series(got, dtype=values.dtype))
            continue
        full = np.zeros(len(sizes), dtype=values.dtype) if dtype is np.int64 else np.full(len(sizes), np.nan)
        full[filled] = got
        if dtype is np.int64:  # why: an integral column with a gap is nullable Int64, as _times gives
            out.append(pd.Series(pd.arrays.IntegerArray(full.astype(np.int64), sizes == 0)))
        else:
            out.append(pd.Series(full, dtype=np.float64))
    return out[0], out[1]


def measure_series(values: Sequence[object]) -> pd.Series:
    """One measure's column: integral, numeric or boolean dtypes when every value fits, else objects."""
    present = [v for v in values if v is not None]
    missing = len(present) < len(values)
    if present and all(v.__class__ is bool for v in present):
        return pd.Series(values, dtype="boolean" if missing else "bool")
    if present and all(v.__class__ in (int, float) for v in present):
        return times(values)  # type: ignore[arg-type]  # numbers, as times are: int64, Int64 or float64
    return objects(values)
