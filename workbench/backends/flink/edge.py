"""Sources and sinks at the cluster's edge: files read by Flink's own connectors, detections to files.

A native (``MATCH_RECOGNIZE``) job over a file never moves an event through Python: Flink's
filesystem connector reads the CSV, JSON-lines or Parquet file (without the ``flink-sql-parquet``
jar, a local Parquet file staged as a typed CSV copy), the SQL planner runs every pattern of the run
in **one** job (one statement set, the source read once), and each pattern's matches go to CSV part
files under ``out/<pattern index>/``. :func:`read_detections` reads them back with Arrow into a DataFrame.

An in-memory DataFrame travels as Arrow batches (``from_pandas``), not row by row.

The event identity is a ``seq`` column: the file's own (``FileSource.seq``) or, without one, the
row's position in the file. :mod:`~workbench.backends.flink.sql_input` says how a local file is
read: a CSV's columns typed (its header line left out of a copy), and positions taken from the
file's times with Arrow when the time (and key) name each row; otherwise Flink numbers the rows in
event-time order (ties in file order) with a running ``COUNT(*) OVER`` (one task). Each pattern
reads only the event types that can change its matches.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.backends.base import BackendError
from workbench.backends.flink.sql_input import (
    PARQUET_JAR,
    Positions,
    bad_row,
    has_parquet,
    headerless_copy,
    local_file,
    parquet_copy,
)
from workbench.backends.flink.sql_query import SqlUnsupported, _quote, match_recognize, positive_stages
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import SequencePattern
from workbench.errors import CepError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa  # type: ignore[import-not-found]  # comes with the flink extra

__all__ = [
    "FORMATS",
    "FileSource",
    "NativeJob",
    "Reading",
    "detect_file",
    "infer_source",
    "read_detections",
    "sql_literal",
    "stage_frame",
]

#: File formats and their Flink ``format`` option.
FORMATS = {"csv": "csv", "json": "json", "jsonl": "json", "parquet": "parquet"}

_ARROW_SQL = (
    ("bool", "BOOLEAN"),
    ("int", "BIGINT"),
    ("uint", "BIGINT"),
    ("double", "DOUBLE"),
    ("float", "DOUBLE"),
    ("string", "STRING"),
    ("large_string", "STRING"),
)

#: The Arrow type a key column of each SQL type is read back as.
_ARROW_OF_SQL = {"BIGINT": "int64", "DOUBLE": "float64", "BOOLEAN": "bool", "STRING": "string"}


def sql_literal(text: str) -> str:
    """A SQL string literal holding ``text`` exactly (quotes doubled; no other character is special)."""
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True, slots=True)
class FileSource:
    """An event file as a Flink table.

    Attributes:
        path: the file (or a directory of part files), any Flink file system URI.
        format: ``csv`` (with a header line), ``json`` (JSON lines) or ``parquet``.
        columns: every column in file order, name -> SQL type (``BIGINT``, ``DOUBLE``, ...).
        time: the event-time column (whole milliseconds, ``BIGINT``).
        key: the partition-key column.
        type: the event-type column.
        seq: a column of unique event ids in arrival order; ``None``: Flink numbers the rows.
    """

    path: str
    format: str
    columns: Mapping[str, str]
    time: str = "t"
    key: str = "key"
    type: str = "type"
    seq: str | None = None

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            msg = f"file format {self.format!r} is not one of {', '.join(sorted(FORMATS))}"
            raise CepError(msg)
        for role in ("time", "key", "type", "seq"):
            name = getattr(self, role)
            if name is not None and name not in self.columns:
                msg = f"the {role} column {name!r} is not a column of {self.path} ({', '.join(self.columns)})"
                raise CepError(msg)
        if self.columns[self.time] != "BIGINT":
            kind = self.columns[self.time]
            msg = f"the time column {self.time!r} must hold whole milliseconds (BIGINT), not {kind}"
            raise CepError(msg)

    def fields(self) -> dict[str, str]:
        """The names conditions use, mapped to the view's columns (``time`` is the time column)."""
        out = {name: name for name in self.columns}
        out.update(type=self.type, time=self.time, t=self.time)
        return out


def infer_source(path: str | Path, fmt: str | None = None, **roles: str | None) -> FileSource:
    """A :class:`FileSource` whose columns Arrow reads from the file's first block (not the whole file).

    ``fmt`` defaults to the file's suffix; ``roles`` are :class:`FileSource`'s ``time``, ``key``,
    ``type`` and ``seq``.
    """
    path = Path(path)
    fmt = fmt or path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        msg = f"cannot tell the format of {path} (give csv, json or parquet)"
        raise CepError(msg)
    schema = _arrow_schema(path, FORMATS[fmt])
    columns = {f.name: _sql_type(f.name, f.type) for f in schema}
    return FileSource(str(path), FORMATS[fmt], columns, **roles)  # type: ignore[arg-type]


def _arrow_schema(path: Path, fmt: str) -> pa.Schema:
    import pyarrow as pa
    import pyarrow.csv as pacsv  # type: ignore[import-not-found]
    import pyarrow.parquet as pq  # type: ignore[import-not-found]

    if fmt == "parquet":
        return pq.read_schema(path)
    if fmt == "csv":
        with pacsv.open_csv(path) as reader:
            return reader.schema
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    try:
        row = json.loads(first)
    except json.JSONDecodeError as err:
        msg = f"{path}: line 1 is not a JSON object: {err}"
        raise CepError(msg) from err
    if not isinstance(row, dict):
        msg = f"{path}: line 1 is not a JSON object"
        raise CepError(msg)
    return pa.Table.from_pylist([row]).schema


def _sql_type(name: str, kind: pa.DataType) -> str:
    text = str(kind)
    for prefix, sql in _ARROW_SQL:
        if text.startswith(prefix):
            return sql
    msg = f"column {name!r} of type {text} has no SQL column type here"
    raise CepError(msg)


@dataclass(frozen=True, slots=True)
class Reading:
    """How a native job reads its source (see :meth:`NativeJob.reading`).

    Attributes:
        path: the path Flink opens (a header-less copy of a local CSV file, a staged Parquet file).
        typed: Flink reads each column with its type (else a CSV file as text, header included).
        positions: maps the matches' event times back to row positions; ``None``: the ``seq``
            column holds them (the file's own, or numbered by Flink).
        staged: ``path`` is a typed CSV copy of the Parquet file (no ``flink-sql-parquet`` jar).
    """

    path: str
    typed: bool
    positions: Positions | None
    staged: bool = False

    def describe(self, source: FileSource) -> str:
        """How the source is read, for the run's report."""
        staged = "staged as a typed CSV copy (no flink-sql-parquet jar on the classpath)"
        return f"{source.path} {staged if self.staged else f'read by Flink ({source.format})'}"


@dataclass(frozen=True, slots=True)
class NativeJob:
    """Patterns over one file source as one Flink SQL job writing each pattern's matches to files.

    Args:
        patterns: sequence patterns ``MATCH_RECOGNIZE`` can express.
        source: the events.
        out: the output directory (``out/<i>/`` per pattern).
    """

    patterns: Sequence[SequencePattern]
    source: FileSource
    out: Path

    def __post_init__(self) -> None:
        for pattern in self.patterns:
            if pattern.measures:
                # Why: the sinks hold the key and the stages' seqs only; a measure would be lost
                msg = (
                    f"pattern {pattern.name!r} has measures, which file-edge jobs do not write yet: "
                    "run it with the flink-sql backend on a DataFrame, or on the Python path"
                )
                raise SqlUnsupported(msg)

    def reading(self, *, parquet: bool = True) -> Reading:
        """How Flink reads the source: a local CSV file's header left out, positions from the file.

        See :mod:`.sql_input`. Copies a local CSV file (without its header line), or a local Parquet
        file as typed CSV unless ``parquet`` (Flink reads it), under ``out/_input/`` (removed by :meth:`run`).
        """
        src = self.source
        local = local_file(src.path)
        path, typed, staged = src.path, src.format != "csv", src.format == "parquet" and not parquet
        if staged:
            if local is None:
                msg = f"{src.path}: only a local Parquet file can be staged; else Flink needs {PARQUET_JAR}"
                raise BackendError(msg)
            path = str(parquet_copy(local, src.columns, self.out / "_input" / f"{local.stem}.csv"))
        # Why BOOLEAN stays text: Flink's CSV reader takes any word but "true" as false, where a
        # CAST refuses it; no value may change unseen
        if local is not None and src.format == "csv" and "BOOLEAN" not in src.columns.values():
            copy = headerless_copy(local, list(src.columns), self.out / "_input" / local.name)
            if copy is not None:
                path, typed = str(copy), True
        positions = None
        if src.seq is None and local is not None and (typed or src.format != "csv"):
            positions = Positions.read(local, src.format, src.time, src.key, src.columns)
        return Reading(path, typed, positions, staged)

    def ddl(self, reading: Reading | None = None) -> list[str]:
        """The source table, the numbered view, and one sink table per pattern.

        ``reading``: from :meth:`reading`; ``None`` reads the source as given (a CSV file as text,
        its header row filtered out) and numbers the rows in Flink.
        """
        src = self.source
        reading = reading or Reading(src.path, src.format != "csv", None)
        text = not reading.typed
        raw = ", ".join(f"{_quote(n)} STRING" if text else f"{_quote(n)} {t}" for n, t in src.columns.items())
        time_raw = _quote(src.time)
        rt = f"TO_TIMESTAMP_LTZ({time_raw}, 3)"
        if text:
            # Why: a CSV file read as text (not a local file: no header-less copy) has its header
            # line as a row, so every column is STRING here, the header's time (its own name) maps
            # to epoch 0 and is dropped below, and any other row whose time is not a number fails
            # the job (CAST).
            rt = f"TO_TIMESTAMP_LTZ(COALESCE(TRY_CAST({time_raw} AS BIGINT), 0), 3)"
        options = {
            "connector": "filesystem",
            "path": reading.path,
            "format": "csv" if reading.staged else src.format,
        }
        statements = [
            f"CREATE TEMPORARY TABLE cep_file ({raw}, rt AS {rt}, "
            f"WATERMARK FOR rt AS rt - INTERVAL '0.001' SECOND) WITH ({_options(options)})"
        ]
        typed = ", ".join(
            f"CAST({_quote(n)} AS {t}) AS {_quote(n)}" if text else _quote(n) for n, t in src.columns.items()
        )
        where = ""
        if text:
            header = " AND ".join(f"{_quote(n)} = {sql_literal(n)}" for n in src.columns)
            where = f" WHERE NOT ({header})"
        if src.seq is not None:
            seq = f"CAST({_quote(src.seq)} AS BIGINT)"
        elif reading.positions is not None:
            seq = time_raw  # why: the time names the row; Positions maps it back to the row's position
        else:
            seq = "COUNT(*) OVER (ORDER BY rt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - 1"
        statements.append(f"CREATE TEMPORARY VIEW cep_typed AS SELECT {typed}, rt FROM cep_file{where}")
        statements.append(
            f"CREATE TEMPORARY VIEW cep_events AS SELECT *, {_quote(src.key)} AS key_id, {seq} AS seq "
            "FROM cep_typed"
        )
        key_type = src.columns[src.key]
        for i, pattern in enumerate(self.patterns):
            statements.append(
                f"CREATE TEMPORARY VIEW cep_in_{i} AS SELECT {_used(pattern, src)} "
                f"FROM cep_events{_relevant(pattern, src)}"
            )
            stages = ", ".join(f"s{j} STRING" for j in range(len(positive_stages(pattern))))
            sink = {"connector": "filesystem", "path": str(self.out / str(i)), "format": "csv"}
            statements.append(
                f"CREATE TEMPORARY TABLE cep_out_{i} (key_id {key_type}, {stages}) WITH ({_options(sink)})"
            )
        return statements

    def inserts(self, reading: Reading | None = None) -> list[str]:
        """One ``INSERT`` per pattern: its ``MATCH_RECOGNIZE`` query into its sink.

        Rows are ordered by time, then ``seq``; by time alone when the time names each row of a
        key (``reading.positions``: no ties to break, so no comparator on every buffered row).
        """
        fields = self.source.fields()
        order = "rt" if reading is not None and reading.positions is not None else "rt, seq"
        return [
            f"INSERT INTO cep_out_{i} {match_recognize(p, f'cep_in_{i}', fields, order=order)}"
            for i, p in enumerate(self.patterns)
        ]

    def run(self, parallelism: int = 1, config: Mapping[str, str] | None = None) -> Reading:
        """Build and run the job to its end (the sinks' files are committed when it ends).

        Returns how the source was read (give it to :func:`read_detections`). A row of a CSV file
        that Flink cannot read as the columns' types is a :class:`CepError` naming its line.
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment

        from workbench.backends.flink.env import expose_packages

        # Why pipeline.jars counts: a jar given there loads with the job, not in the client
        parquet = "pipeline.jars" in (config or {}) or self.source.format != "parquet" or has_parquet()
        reading = self.reading(parquet=parquet)
        expose_packages()
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        conf = t_env.get_config()
        conf.set("parallelism.default", str(parallelism))
        for name, value in (config or {}).items():
            conf.set(name, value)
        try:
            for statement in self.ddl(reading):
                t_env.execute_sql(statement)
            statements = t_env.create_statement_set()
            for insert in self.inserts(reading):
                statements.add_insert_sql(insert)
            statements.execute().wait()
        except Exception as err:  # why: py4j wraps the job's failure; a bad CSV row is the user's
            local = local_file(self.source.path)
            bad = bad_row(err, local, self.source.columns) if local is not None and reading.typed else None
            if bad is not None:
                raise bad from err
            raise
        finally:
            shutil.rmtree(self.out / "_input", ignore_errors=True)
        return reading


def _used(pattern: SequencePattern, source: FileSource) -> str:
    """The columns a pattern's query reads: the key, ``rt``, ``seq`` and the fields it names.

    Every field the query reads is written as a quoted name, so a column whose quoted name is not
    in the query text is not read; leaving it out before the key exchange saves sending it.
    """
    query = match_recognize(pattern, "cep_events", source.fields())
    used = [_quote(n) for n in source.columns if _quote(n) in query]
    return ", ".join(["key_id", "rt", "seq", *used])


def _relevant(pattern: SequencePattern, source: FileSource) -> str:
    """A ``WHERE`` clause keeping the events whose type can start or change a partial match.

    The engine's own filter (``event_types``: ``None`` when every event matters, e.g. after a
    ``next``); the others change no match, so leaving them out before the key exchange saves
    the matching work and the ``MATCH_RECOGNIZE`` gaps their rows. Row numbers (``seq``) are
    made before it.
    """
    types = compile_matcher(pattern).event_types()
    if types is None:
        return ""
    column = _quote(source.type)
    # OR of equalities, not IN: the planner may turn a long IN list into a join
    return " WHERE " + " OR ".join(f"{column} = {sql_literal(t)}" for t in sorted(types))


def _options(options: Mapping[str, str]) -> str:
    return ", ".join(f"{sql_literal(k)} = {sql_literal(v)}" for k, v in options.items())


def read_detections(job: NativeJob, reading: Reading | None = None) -> pd.DataFrame:
    """The job's matches as one DataFrame, read with Arrow from the committed part files.

    ``reading``: what :meth:`NativeJob.run` returned (its positions turn event times into ``seq``).

    Columns: ``pattern``, ``key``, ``seqs`` (every matched event's ``seq``, in stage order),
    ``stages`` (per positive stage, the tuple of its events' ``seq``), sorted by the last event's
    ``seq`` (arrival order: the local engine's order for in-order input), then pattern order.
    """
    import pandas as pd

    frames = []
    for i, pattern in enumerate(job.patterns):
        n = len(positive_stages(pattern))
        key_type = _ARROW_OF_SQL.get(job.source.columns[job.source.key], "string")
        table = _read_part_files(job.out / str(i), ["key_id", *(f"s{j}" for j in range(n))], key_type)
        if table is None:
            continue
        frame = table.to_pandas()
        stages = [
            tuple(() if v is None or v != v else tuple(int(s) for s in str(v).split(",")) for v in row)
            for row in frame[[f"s{j}" for j in range(n)]].itertuples(index=False)
        ]
        if reading is not None and reading.positions is not None:
            stages = reading.positions.seqs(frame["key_id"], stages)
        frames.append(
            pd.DataFrame(
                {
                    "pattern": pattern.name,
                    "key": frame["key_id"],
                    "stages": stages,
                    "seqs": [tuple(s for stage in st for s in stage) for st in stages],
                    "order": i,
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=["pattern", "key", "seqs", "stages"])
    out = pd.concat(frames, ignore_index=True)
    out["last"] = [s[-1] for s in out["seqs"]]
    out = out.sort_values(["last", "order"], kind="stable").reset_index(drop=True)
    return out.drop(columns=["last", "order"])[["pattern", "key", "seqs", "stages"]]


def _read_part_files(directory: Path, names: list[str], key_type: str) -> pa.Table | None:
    """Every committed part file of a directory (in-progress files start with a dot) as one table."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    files = sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith("."))
    columns: dict[str, Any] = {name: pa.string() for name in names}
    columns[names[0]] = pa.type_for_alias(key_type)
    tables = [
        pacsv.read_csv(
            p,
            read_options=pacsv.ReadOptions(column_names=names),
            convert_options=pacsv.ConvertOptions(column_types=columns, strings_can_be_null=True),
        )
        for p in files
        if p.stat().st_size
    ]
    return pa.concat_tables(tables) if tables else None


def stage_frame(frame: pd.DataFrame, directory: str | Path, **roles: str | None) -> FileSource:
    """Stage an in-memory DataFrame as a CSV file (written by Arrow, column by column) for a job.

    On a real cluster ``directory`` must be on a file system the task managers read (HDFS, S3, a
    shared mount). Parquet would keep the column types exactly, but needs ``flink-sql-parquet``.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "events.csv"
    pacsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), path)
    return infer_source(path, "csv", **roles)


def detect_file(
    patterns: Sequence[SequencePattern],
    events: str | Path | pd.DataFrame | FileSource,
    out: str | Path,
    *,
    parallelism: int = 1,
    config: Mapping[str, str] | None = None,
    report: Callable[[str], None] | None = None,
    **roles: str | None,
) -> pd.DataFrame:
    """Run ``patterns`` natively over a file (or a staged DataFrame); the matches as a DataFrame.

    ``out`` receives the part files (and the staged DataFrame); ``roles`` name the ``time``,
    ``key``, ``type`` and ``seq`` columns (see :class:`FileSource`). ``report`` gets one line per
    pattern saying its path and how the input was read (default: stderr); the lines are also the
    result's ``attrs["paths"]``.
    """
    import pandas as pd

    out = Path(out)
    if isinstance(events, pd.DataFrame):
        source = stage_frame(events, out / "staged", **roles)
    elif isinstance(events, FileSource):
        source = events
    else:
        source = infer_source(events, **roles)
    job = NativeJob(list(patterns), source, out / "matches")
    reading = job.run(parallelism, config)
    over = reading.describe(source)
    lines = [
        f"flink-sql: pattern {p.name!r} runs natively (MATCH_RECOGNIZE) over {over}" for p in job.patterns
    ]
    for line in lines:
        (report or (lambda text: print(text, file=sys.stderr)))(line)
    found = read_detections(job, reading)
    found.attrs["paths"] = lines
    return found
