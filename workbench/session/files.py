"""Event files read into DataFrames by their suffix, every value as the file wrote it.

pandas reads CSV and Parquet; what its guessing would change is given back: CSV columns with a
zero-padded number stay text, and whole numbers of 2**53 or more that a float column rounded are
read again as written. JSON (lines) is read by Python's json module, record by record, so every
value keeps its own type: a column is typed only when all its records agree (ints with a record
that lacks the field stay ints beside NaN, not floats). A byte-order mark is skipped.
"""

from __future__ import annotations

import csv
import datetime
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, cast

from workbench.errors import CepError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["SUFFIXES", "read_frame", "records_frame"]

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
        if suffix in (".jsonl", ".ndjson"):
            return _records_frame(_json_lines(p))
        if suffix == ".json":
            return _records_frame(_json_document(p))
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


#: JSON's names for the Python types its values are read as (for messages)
_JSON_KINDS = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}

#: a JSON record: one event's fields by name
Record = dict[str, object]


def _json_lines(p: Path) -> list[Record]:
    """The records of JSON-lines file ``p``, one object a line; blank lines are skipped (a file of
    none is no records: zero events, as a CSV file with only its header)."""
    decode = json.JSONDecoder().raw_decode  # why not json.loads: a third faster on many short lines
    records: list[Record] = []
    with p.open(encoding="utf-8-sig") as f:  # why utf-8-sig: a byte-order mark is no JSON value
        for number, line in enumerate(f, 1):
            start = len(line) - len(line.lstrip(_JSON_SPACE))
            if start == len(line):
                continue
            try:
                record, end = decode(line, start)
            except json.JSONDecodeError as err:
                column = min(err.pos, len(line.rstrip("\r\n"))) + 1  # why min: not past the line's end
                msg = f"cannot read {p}: line {number} column {column}: {err.msg}"
                raise CepError(msg) from None
            after = line[end:].lstrip(_JSON_SPACE)
            if after:
                column = len(line) - len(after) + 1
                msg = f"cannot read {p}: line {number} column {column}: more after its object ({_ONE_A_LINE})"
                raise CepError(msg)
            if not isinstance(record, dict):
                msg = (
                    f"cannot read {p}: line {number} is a JSON {_kind(record)}, not an object ({_ONE_A_LINE})"
                )
                raise CepError(msg)
            records.append(record)
    return records


#: what a JSON-lines file holds
_ONE_A_LINE = "one event object a line"

#: the white space JSON allows around a value (str.strip() would also take a no-break space)
_JSON_SPACE = " \t\r\n"


def _json_document(p: Path) -> list[Record]:
    """The records of JSON file ``p``: a list of objects, or an object of columns as pandas'
    ``to_json`` writes them (``{"type": ["a", "b"]}`` or ``{"type": {"0": "a", "1": "b"}}``)."""
    text = p.read_text(encoding="utf-8-sig")
    if not text.strip():
        msg = f"cannot read {p}: the file is empty; a .json file holds a list of events ([] for none)"
        raise CepError(msg)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        msg = f"cannot read {p}: line {err.lineno} column {err.colno}: {err.msg}"
        raise CepError(msg) from None
    if isinstance(document, dict):
        return _column_records(p, document)
    if not isinstance(document, list):
        msg = f"cannot read {p}: it holds a JSON {_kind(document)}; a .json file holds a list of events"
        raise CepError(msg)
    for i, item in enumerate(document):
        if not isinstance(item, dict):
            msg = f"cannot read {p}: item {i} of its list is a JSON {_kind(item)}, not an object (an event)"
            raise CepError(msg)
    return document


def _column_records(p: Path, columns: dict[str, object]) -> list[Record]:
    """The records of a JSON object of columns: lists of equal length, or objects by row label
    (a row that lacks a label in a column lacks that field)."""
    values = list(columns.values())
    if all(isinstance(v, list) for v in values):
        lists = cast("dict[str, list[object]]", columns)
        lengths = {len(v) for v in lists.values()}
        if len(lengths) > 1:
            sizes = ", ".join(map(str, sorted(lengths)))
            msg = f"cannot read {p}: its columns have different lengths ({sizes})"
            raise CepError(msg)
        rows = range(lengths.pop() if lengths else 0)
        return [{name: column[i] for name, column in lists.items()} for i in rows]
    if all(isinstance(v, dict) for v in values):
        labelled = cast("dict[str, dict[str, object]]", columns)
        labels = dict.fromkeys(label for column in labelled.values() for label in column)
        return [{name: c[label] for name, c in labelled.items() if label in c} for label in labels]
    msg = f"cannot read {p}: it holds a JSON object that is not columns; a .json file holds a list of events"
    raise CepError(msg)


def _kind(value: object) -> str:
    """The JSON name of ``value``'s type."""
    return _JSON_KINDS.get(type(value), "object")


def records_frame(items: Sequence[object]) -> pd.DataFrame | None:
    """Flat event mappings (dicts of named fields, as SQL drivers and JSON give them) as the
    DataFrame of their fields, typed only where no value changes; ``None`` for anything else (built
    events, a ``fields`` mapping inside, names that are not text), which is read item by item.

    A table replays column by column (pruned, vectorised): a list of dicts as fast as a DataFrame.

    >>> frame = records_frame([{"type": "a", "time": 1, "n": 2}, {"type": "b", "time": 2}])
    >>> frame["time"].tolist(), frame["n"].tolist()  # an int beside a gap stays an int
    ([1, 2], [2, nan])
    """
    if not all(type(item) is dict for item in items):
        return None
    records = cast("list[Record]", list(items))
    if any("fields" in r for r in records):
        return None
    frame = _records_frame(records)
    return frame if all(isinstance(c, str) for c in frame.columns) else None


def _records_frame(records: list[Record]) -> pd.DataFrame:
    """The DataFrame of ``records``: a column per field, in the order the fields first appear."""
    import pandas as pd

    # why by shape: the fields and how many records hold each, with one step per record (not per field)
    counts: dict[str, int] = {}
    for shape, n in Counter(map(tuple, records)).items():
        for name in shape:
            counts[name] = counts.get(name, 0) + n
    columns = {name: _column(records, name, len(records) - n) for name, n in counts.items()}
    return pd.DataFrame(columns, index=pd.RangeIndex(len(records)))


def _column(records: list[Record], name: str, gaps: int) -> np.ndarray | pd.Series:
    """Field ``name`` of every record, NaN in the ``gaps`` records that lack it."""
    values = [r.get(name, math.nan) for r in records] if gaps else list(map(itemgetter(name), records))
    kinds = Counter(map(type, values))
    kinds[float] -= gaps  # the NaN put in for a gap is no value's kind
    return _typed(values, {kind for kind, n in kinds.items() if n > 0}, complete=not gaps)


def _typed(values: list[object], kinds: set[type], complete: bool) -> np.ndarray | pd.Series:
    """``values`` as a column of the one type they share, else as Python objects, unchanged.

    Why not pandas' inference: it makes floats of ints beside a NaN (1 -> 1.0, and 2**53 + 1 rounded)
    and of ints beside a float; here a column is typed only where no value changes.
    """
    import numpy as np
    import pandas as pd

    if complete and kinds == {int}:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:  # beyond int64: Python ints
            return pd.Series(values, dtype=object)
    if complete and kinds == {bool}:
        return np.array(values, dtype=np.bool_)
    if kinds <= {float, type(None)}:
        return np.array(values, dtype=np.float64)  # a null, like a gap, is NaN
    if kinds <= {str, type(None)}:
        return pd.Series(values)  # pandas' own text column (NaN in the gaps)
    durations = {datetime.timedelta, pd.Timedelta, np.timedelta64, type(None)}
    if kinds and kinds <= durations and kinds != {type(None)}:  # why: durations, as a DataFrame holds them
        try:
            return pd.to_timedelta(pd.Series(values, dtype=object))
        except (ValueError, OverflowError):  # why: beyond pandas' ±292 years: milliseconds, as one by one
            from workbench.session.records import plain_value

            return pd.Series([plain_value(v) for v in values], dtype=object)
    return pd.Series(values, dtype=object)
