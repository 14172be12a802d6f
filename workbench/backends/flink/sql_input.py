"""How a native job reads its file: typed columns, the CSV header left out, arrival order from the file.

Two costs dominated a native job that read a CSV file as text: every column read as ``STRING`` and
cast (Flink's CSV format has no header option, so the header line had to be read as text and
filtered out), and the row numbers (the events' ``seq``) made by one global ``COUNT(*) OVER`` task
that holds every row until the watermark passes it. Here instead:

* **The header.** A local CSV file is given to Flink as a copy without its first line (a byte copy,
  no parsing), after checking that the line is the header :func:`~.edge.infer_source` read; Flink
  then reads every column with its type, strictly: a row that does not parse fails the job, and
  :func:`bad_row` turns Flink's error into a :class:`~workbench.errors.CepError` naming the row's
  line. Nothing is skipped, so nothing can be lost unseen. Other CSV paths (a directory of part
  files, a remote file system) keep the text reading.
* **Arrival order.** Without a ``seq`` column, an event's ``seq`` is its row's position in the file.
  :meth:`Positions.read` reads the time column (and the key column when needed) with Arrow; when
  times never go back and each key's times are distinct, the time alone names each row of a key,
  so the job orders by time, the matches carry their events' times, and
  :meth:`Positions.seqs` maps them back to positions. Otherwise (``None``) Flink numbers the rows
  as before.
"""

from __future__ import annotations

import csv
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import CepError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["PARQUET_JAR", "Positions", "bad_row", "has_parquet", "headerless_copy", "parquet_copy"]

_ARROW_TYPES = {"BIGINT": "int64", "DOUBLE": "float64", "BOOLEAN": "bool", "STRING": "string"}


def local_file(path: str) -> Path | None:
    """``path`` as a local regular file (a plain path or a ``file:`` URI), else ``None``."""
    text = path.removeprefix("file://") if path.startswith("file://") else path
    if "://" in text or text.startswith("file:"):
        return None
    local = Path(text)
    return local if local.is_file() else None


def headerless_copy(path: Path, columns: Sequence[str], into: Path) -> Path | None:
    """A copy of CSV file ``path`` without its header line, or ``None`` if its first line is not
    exactly the header ``columns`` on one line (Flink then reads the file as text)."""
    with open(path, "rb") as src:
        first = src.readline()
        try:
            header = next(csv.reader([first.decode("utf-8").rstrip("\r\n")]), [])
        except (UnicodeDecodeError, csv.Error):
            return None
        if header != list(columns) or b'"' in first:
            return None
        into.parent.mkdir(parents=True, exist_ok=True)
        with open(into, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
    return into


PARQUET_JAR = (
    "Flink's flink-sql-parquet-2.3.0.jar (not shipped with PyFlink): "
    "add it with config={'pipeline.jars': 'file:///path/flink-sql-parquet-2.3.0.jar'}"
)


def has_parquet() -> bool:
    """Flink's Parquet format is on the client's classpath."""
    from pyflink.java_gateway import get_gateway

    try:
        get_gateway().jvm.java.lang.Class.forName("org.apache.flink.formats.parquet.ParquetFileFormatFactory")
    except Exception:  # why: py4j wraps ClassNotFoundException
        return False
    return True


#: Rows per batch a Parquet file is staged in (bounds the client's memory, whatever the file's size).
BATCH_ROWS = 65_536


def parquet_copy(path: Path, columns: Mapping[str, str], into: Path, batch_rows: int = BATCH_ROWS) -> Path:
    """A header-less typed CSV copy of Parquet file ``path``, for Flink without ``flink-sql-parquet``.

    Streams ``batch_rows`` rows at a time (``ParquetFile.iter_batches``, ``pyarrow.csv`` writing
    each batch), so the client holds one batch, never the file. Values keep exactly: integers as
    digits, doubles in Arrow's shortest round-trip form (which Java's ``Double.parseDouble`` reads
    back to the same double; ``float`` columns are widened first, as the local engine reads them),
    strings quoted where needed (commas, quotes, newlines). A value the CSV copy would change or
    Flink's CSV reader would read otherwise is a :class:`CepError` naming its column: a column
    not of ``BIGINT``, ``DOUBLE`` or ``STRING`` (``BOOLEAN``: Flink reads any word but ``true`` as
    false), an empty value (an empty cell is not a null for every type there), NaN or infinity
    (Java spells them otherwise). A partial copy is removed.
    """
    import pyarrow as pa  # type: ignore[import-not-found]  # comes with the flink extra
    import pyarrow.compute as pc  # type: ignore[import-not-found]
    import pyarrow.csv as pacsv  # type: ignore[import-not-found]
    import pyarrow.parquet as pq  # type: ignore[import-not-found]

    for name, kind in columns.items():
        if kind not in ("BIGINT", "DOUBLE", "STRING"):
            msg = (
                f"{path}: column {name!r} ({kind}) cannot be staged as CSV exactly; that needs {PARQUET_JAR}"
            )
            raise CepError(msg)
    schema = pa.schema([(n, pa.type_for_alias(_ARROW_TYPES[k])) for n, k in columns.items()])
    into.parent.mkdir(parents=True, exist_ok=True)
    options = pacsv.WriteOptions(include_header=False)
    try:
        with pacsv.CSVWriter(into, schema, write_options=options) as writer:
            for batch in pq.ParquetFile(path).iter_batches(batch_rows, columns=list(columns)):
                typed = _staged(pa, pc, path, batch, schema)
                writer.write_batch(typed)
    except BaseException:
        into.unlink(missing_ok=True)
        raise
    return into


def _staged(pa: Any, pc: Any, path: Path, batch: Any, schema: Any) -> Any:
    """One batch cast to the staged columns' types; empty values, NaN and infinities refused."""
    columns = []
    for field in schema:
        try:
            column = batch.column(field.name).cast(field.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:  # why: e.g. uint64 past BIGINT
            msg = f"{path}: column {field.name!r} cannot be staged as {field.type}: {err}"
            raise CepError(msg) from err
        if column.null_count:
            msg = f"{path}: column {field.name!r} has empty values, which a CSV copy cannot keep apart"
            raise CepError(msg)
        if field.type == pa.float64() and not pc.all(pc.is_finite(column)).as_py():
            msg = f"{path}: column {field.name!r} holds NaN or infinity (Java's CSV reader spells them apart)"
            raise CepError(msg)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=schema)


_FLINK_FIELD = re.compile(r"Fail to deserialize at field: (.+?)\.\s*$", re.MULTILINE)
_JAVA_INPUT = re.compile(r'NumberFormatException: (?:For input string: )?"?(.*?)"?\s*$', re.MULTILINE)
_FLINK_ROW = re.compile(r"Failed to deserialize CSV row '(.*?)'", re.DOTALL)


def bad_row(error: BaseException, path: Path, columns: Mapping[str, str]) -> CepError | None:
    """The :class:`CepError` naming the line of ``path`` that Flink's strict CSV reading failed on.

    ``None`` if ``error`` is not such a failure. Flink names the column and the value (or the
    row's text); the line is the first after the header that holds it.
    """
    message = str(error)
    field, row = _FLINK_FIELD.search(message), _FLINK_ROW.search(message)
    if field is None and row is None:
        return None
    value = _JAVA_INPUT.search(message)
    names = list(columns)
    column = field.group(1) if field is not None else None
    line = None
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        for number, cells in enumerate(csv.reader(f), start=1):
            if number == 1:
                continue
            if row is not None and ",".join(cells) == row.group(1):
                line = number
            elif column in names and value is not None:
                index = names.index(column)
                line = number if index < len(cells) and cells[index].strip() == value.group(1) else None
            if line is not None:
                break
    where = f"line {line}" if line is not None else "a row"
    what = f"column {column!r} ({columns.get(column or '', '?')})" if column else "its columns"
    text = f": {value.group(1)!r}" if value is not None else (f": {row.group(1)!r}" if row else "")
    msg = f"{path}: {where} does not hold a value of {what}{text}"
    return CepError(msg)


@dataclass(frozen=True, slots=True)
class Positions:
    """Each row's position in its file, found from its time (and key): the events' ``seq``.

    Attributes:
        times: the time column, in file order (never decreasing).
        by_key: ``None`` when times are strictly increasing (a time names one row); else the
            (key, time) index, unique, whose entry order is the file order.
    """

    times: np.ndarray
    by_key: pd.MultiIndex | None

    @classmethod
    def read(cls, path: Path, fmt: str, time: str, key: str, columns: Mapping[str, str]) -> Positions | None:
        """The file's positions, or ``None`` when time and key do not name each row in order."""
        import numpy as np
        import pandas as pd

        times = _column(path, fmt, time, columns).to_numpy()
        steps = np.diff(times)
        if len(steps) and steps.min() < 0:
            return None  # why: out of order; the job's event-time order is not the file's
        if not len(steps) or steps.min() > 0:
            return cls(times, None)
        keys = _column(path, fmt, key, columns, nulls=True)
        if keys.null_count:
            return None  # why: a missing key names no row
        index = pd.MultiIndex.from_arrays([keys.to_pandas(), times])
        return cls(times, index) if index.is_unique else None

    def seqs(
        self, keys: pd.Series, stages: Sequence[Sequence[Sequence[int]]]
    ) -> list[tuple[tuple[int, ...], ...]]:
        """Each match's stages with their events' times replaced by their positions."""
        import numpy as np
        import pandas as pd

        flat = [t for match in stages for stage in match for t in stage]
        if self.by_key is None:
            found = np.searchsorted(self.times, flat)
            found = np.minimum(found, len(self.times) - 1) if len(self.times) else found
            ok = len(self.times) > 0 and bool(
                (self.times[found] == np.asarray(flat, dtype=self.times.dtype)).all()
            )
        else:
            owners = [k for k, match in zip(keys, stages, strict=True) for stage in match for _ in stage]
            found = self.by_key.get_indexer(pd.MultiIndex.from_arrays([owners, flat]))
            ok = bool((found >= 0).all())
        if flat and not ok:
            msg = "a match names an event time that is not in the file (the file changed during the job?)"
            raise CepError(msg)
        it = iter(found.tolist() if flat else [])
        return [tuple(tuple(next(it) for _ in stage) for stage in match) for match in stages]


def _column(path: Path, fmt: str, name: str, columns: Mapping[str, str], *, nulls: bool = False) -> Any:
    """One column of the file, read with Arrow as its SQL type; bad values (and empty ones
    unless ``nulls``) give a CepError."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson  # type: ignore[import-not-found]
    import pyarrow.parquet as pq

    kind = pa.type_for_alias(_ARROW_TYPES.get(columns[name], "string"))
    try:
        if fmt == "parquet":
            column = pq.read_table(path, columns=[name]).column(name)
        elif fmt == "csv":
            options = pacsv.ConvertOptions(include_columns=[name], column_types={name: kind})
            column = pacsv.read_csv(path, convert_options=options).column(name)
        else:
            column = pajson.read_json(path).column(name)
    except (pa.ArrowInvalid, KeyError) as err:
        msg = f"{path}: the {name!r} column cannot be read as {columns[name]}: {err}"
        raise CepError(msg) from err
    if column.null_count and not nulls:
        msg = f"{path}: the {name!r} column has {column.null_count} empty value(s)"
        raise CepError(msg)
    return column.cast(kind)
