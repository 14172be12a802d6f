"""Writing a result table to a file (.csv, .jsonl, .json, .parquet) with every value as it is.

pandas' own writers change values on the way: ``to_json`` keeps 10 significant digits of a float
and writes dates as epoch numbers, and Arrow cannot write a column of empty mappings (every
sequence detection's ``extra``). :func:`write_frame` writes JSON record by record with Python's
``json`` (floats in their shortest exact form, dates in ISO 8601), and gives Parquet the nested
columns Arrow cannot type as JSON text. What a format cannot hold at all (an infinite number in
JSON) is written as null and named in the notes it returns.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import CepError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SUFFIXES", "check_writable", "write_frame"]

SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json", ".parquet")


def check_writable(out: str) -> None:
    """Refuse, before any work, a file the installed packages cannot write (Parquet needs pyarrow)."""
    if Path(out).suffix.lower() == ".parquet" and not (
        importlib.util.find_spec("pyarrow") or importlib.util.find_spec("fastparquet")
    ):
        msg = f"cannot write {out}: Parquet needs pyarrow (pip install pyarrow); or write .csv or .jsonl"
        raise CepError(msg)


def write_frame(frame: pd.DataFrame, out: str) -> list[str]:
    """Write ``frame`` to ``out`` by its suffix; the notes say what the format could not hold."""
    suffix = Path(out).suffix.lower()
    check_writable(out)
    notes: list[str] = []
    try:
        if suffix == ".csv":
            frame.to_csv(out, index=False)
        elif suffix in (".jsonl", ".ndjson", ".json"):
            notes = _write_json(frame, out, lines=suffix != ".json")
        elif suffix == ".parquet":
            _arrow_ready(frame).to_parquet(out, index=False)
        else:
            msg = f"cannot write {out}: use a .csv, .jsonl, .json or .parquet file"
            raise CepError(msg)
    except OSError as err:  # why: a full disk, no permission, a folder: say which file, no traceback
        msg = f"cannot write {out}: {err.strerror or err}"
        raise CepError(msg) from None
    return notes


def _write_json(frame: pd.DataFrame, out: str, *, lines: bool) -> list[str]:
    names = [str(c) for c in frame.columns]
    infinite: dict[str, int] = {}
    records = []
    for row in frame.itertuples(index=False, name=None):
        record = {}
        for name, value in zip(names, row, strict=True):
            plain = _plain(value)
            if isinstance(plain, float) and not math.isfinite(plain):
                if not math.isnan(plain):
                    infinite[name] = infinite.get(name, 0) + 1
                plain = None
            record[name] = plain
        records.append(
            json.dumps(record, ensure_ascii=False, allow_nan=False, default=_default, separators=(",", ":"))
        )
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(records) + "\n" if lines else "[" + ",".join(records) + "]")
    return [
        f"{out}: column {name!r} has {count} infinite value(s); JSON has no infinity, so they are "
        "written as null (a .csv or .parquet file keeps them)"
        for name, count in infinite.items()
    ]


def _plain(value: object, nested: bool = False) -> object:
    """``value`` as JSON holds it: numpy numbers as Python ones, missing values as None, dates as
    ISO 8601 text, tuples as lists (nested values too, where NaN and infinity are None; at the top
    they stay floats for the caller to count)."""
    import numpy as np
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return None if nested and not math.isfinite(value) else value
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, pd.Timestamp | dt.datetime):
        return pd.Timestamp(value).isoformat(timespec="milliseconds")
    if isinstance(value, pd.Timedelta):
        return value.total_seconds() * 1000
    if isinstance(value, Mapping):
        return {str(k): _plain(v, True) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(v, True) for v in value]
    return value


def _default(value: object) -> object:
    """What ``json`` cannot write itself (an event, a set): its text."""
    return str(value)


def _arrow_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each object column Arrow cannot type (mappings, mixed values) as JSON text."""
    import pyarrow as pa  # type: ignore[import-not-found]

    out = frame
    for name in frame.columns:
        column = frame[name]
        if column.dtype != object:
            continue
        try:
            pa.array(column.tolist(), from_pandas=True)
            empty_struct = any(isinstance(v, Mapping) and not v for v in column)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):  # (an int beyond 64 bits)
            empty_struct = True
        if empty_struct:  # why: Arrow has no type for {} (a struct with no field) or for a mix
            if out is frame:
                out = frame.copy()
            out[name] = [
                None if v is None else json.dumps(_plain(v, True), ensure_ascii=False, default=_default)
                for v in column
            ]
    return out
