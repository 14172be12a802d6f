"""Event files read into DataFrames by their suffix, every value as the file wrote it.

pandas reads the file; what its guessing would change is given back: CSV columns with a
zero-padded number stay text, and whole numbers of 2**53 or more that a float column rounded are
read again as written. JSON keeps its own types (a byte-order mark is skipped).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import CepError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SUFFIXES", "read_frame"]

#: the event files :func:`read_frame` reads
SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json", ".parquet")


def read_frame(path: str | Path) -> pd.DataFrame:
    """Read an event file into a DataFrame (by suffix); a :class:`CepError` names what is wrong."""
    import pandas as pd

    p = Path(path)
    if not p.exists():
        msg = f"no such file: {p}"
        raise CepError(msg)
    suffix = p.suffix.lower()
    if suffix == ".csv":
        _check_csv_header(p)
    try:
        if suffix == ".csv":
            frame = _zero_padded(pd.read_csv(p), p)
            return _exact_integers(frame, lambda name: _csv_numbers(p, name))
        # why dtype and convert_dates off: JSON says what is a string ("02134") and what a number
        # (1700000000 in a 'created_at' field), so nothing is guessed from the values or the names;
        # precise_float: pandas' fast float parser is one unit in the last place off now and then
        lines = suffix in (".jsonl", ".ndjson")
        if lines or suffix == ".json":
            frame = pd.read_json(
                p, lines=lines, dtype=False, convert_dates=False, precise_float=True, encoding="utf-8-sig"
            )  # why utf-8-sig: a byte-order mark (Windows tools write one) is no JSON value
            return _exact_integers(frame, _JsonRecords(p, lines).column)
        if suffix == ".parquet":
            return pd.read_parquet(p)
    except (ValueError, OSError, ImportError) as err:
        msg = f"cannot read {p}: {err}"
        raise CepError(msg) from None
    msg = f"cannot read {p}: unknown file type {suffix!r}; use one of {', '.join(SUFFIXES)}"
    raise CepError(msg)


#: integers from here on cannot all be floats: a column read as floats may have rounded them
_EXACT_LIMIT = 2**53


def _exact_integers(frame: pd.DataFrame, raw: Callable[[str], list[object]]) -> pd.DataFrame:
    """Give back the integers a float column rounded: a column of whole numbers with a blank cell,
    or mixed with fractions, is read as float64, where 9007199254740993 becomes ...992. Such a
    column (one with a value of 2**53 or more) is read again as written (``raw(name)``) and holds
    Python numbers; other columns are untouched (the check costs one pass over float columns)."""
    import numpy as np
    import pandas as pd

    for name in frame.columns:
        column = frame[name]
        if column.dtype != np.float64:
            continue
        values = column.to_numpy()
        big = np.abs(values[np.isfinite(values)]) >= _EXACT_LIMIT
        if not big.any():
            continue
        exact = raw(str(name))
        if any(type(v) is int and abs(v) >= _EXACT_LIMIT for v in exact):
            frame[name] = pd.Series(exact, index=frame.index, dtype=object)
    return frame


#: a CSV cell that starts with a zero before another digit (``007``, ``"0042"``, ``-01``)
_PADDED = re.compile(rb'(?:^|,)"?[+-]?0[0-9]', re.MULTILINE)


def _zero_padded(frame: pd.DataFrame, p: Path) -> pd.DataFrame:
    """Keep as text each column pandas read as numbers that holds a zero-padded number: ``007``
    is an identifier (a ZIP code, an account), and as the number 7 it would be one with ``7``.

    The file is searched for such a cell first; only when one is there is it read again as text.
    """
    import numpy as np
    import pandas as pd

    numeric = [name for name in frame.columns if frame[name].dtype.kind in "iuf"]
    if not numeric or not _PADDED.search(p.read_bytes()):
        return frame
    texts = pd.read_csv(p, usecols=numeric, dtype=str)
    for name in numeric:
        column = texts[name]
        if column.str.fullmatch(r"\s*[+-]?0[0-9].*", na=False).any():
            frame[name] = column.astype(object).where(column.notna(), np.nan)
    return frame


def _csv_numbers(p: Path, name: str) -> list[object]:
    """Column ``name`` of CSV file ``p`` as written: whole numbers as ints, others as floats, blanks NaN."""
    import pandas as pd

    texts = pd.read_csv(p, usecols=[name], dtype=str)[name]
    return [
        math.nan if not isinstance(t, str) else int(t) if _WHOLE.fullmatch(t) else float(t) for t in texts
    ]


class _JsonRecords:
    """The records of JSON (lines) file ``p`` as Python's json module reads them, parsed once, when
    a first column is asked for."""

    def __init__(self, p: Path, lines: bool) -> None:
        self.p, self.lines = p, lines
        self.records: list[object] | None = None

    def column(self, name: str) -> list[object]:
        """Field ``name`` of every record (NaN where a record lacks it)."""
        if self.records is None:
            with self.p.open(encoding="utf-8-sig") as f:
                self.records = (
                    [json.loads(line) for line in f if line.strip()] if self.lines else json.load(f)
                )
        return [r.get(name, math.nan) if isinstance(r, dict) else math.nan for r in self.records]


_WHOLE = re.compile(r"\s*[+-]?\d+\s*")


def _check_csv_header(p: Path) -> None:
    """Refuse a CSV header that names a column twice (pandas would rename the second ``name.1``)."""
    try:
        with p.open(newline="", encoding="utf-8-sig") as f:
            rows = csv.reader(f)
            header = next(rows, [])
            row = next(rows, None)
    except (UnicodeDecodeError, csv.Error):
        return  # why: pandas' own reading names what is wrong
    if row is not None and len(row) > len(header):
        # why: pandas would make the extra leading fields an index and shift every column
        msg = (
            f"cannot read {p}: its first row has {len(row)} fields but the header names "
            f"{len(header)} columns; name every column in the header"
        )
        raise CepError(msg)
    first: dict[str, int] = {}
    for i, name in enumerate(header, 1):
        if name in first:
            where = f"columns {first[name]} and {i}"
            msg = f"cannot read {p}: its header names column {name!r} twice ({where}); rename one"
            raise CepError(msg)
        first[name] = i
