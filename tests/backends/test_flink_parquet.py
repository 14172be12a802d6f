"""Parquet without Flink's Parquet jar: the client stages a typed CSV copy, batch by batch, exactly."""

from __future__ import annotations

import csv
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.patterns import benchmark_patterns
from benchmarks.run import read_events
from benchmarks.workload import WorkloadSpec, write_csv
from tests.backends.test_flink_edge import local_matches, on_flink
from workbench.backends.flink.edge import NativeJob, infer_source
from workbench.backends.flink.sql_input import parquet_copy
from workbench.errors import CepError

pa = pytest.importorskip("pyarrow", reason="pyarrow comes with the flink extra")
pq = pytest.importorskip("pyarrow.parquet")
pacsv = pytest.importorskip("pyarrow.csv")

COLUMNS = {"t": "BIGINT", "key": "STRING", "type": "STRING", "price": "DOUBLE", "qty": "BIGINT"}


def read_back(path: Path, columns: Mapping[str, str], *, header: bool = False) -> list[tuple[object, ...]]:
    """The staged copy parsed as Flink's CSV reader parses it: RFC 4180 cells, Java's number parsing
    (Python's ``int``/``float`` read the same decimal strings to the same values)."""
    parse = {"BIGINT": int, "DOUBLE": float, "STRING": str}
    kinds = [parse[k] for k in columns.values()]
    with open(path, encoding="utf-8", newline="") as f:
        rows = csv.reader(f)
        if header:
            next(rows)
        return [tuple(kind(cell) for kind, cell in zip(kinds, row, strict=True)) for row in rows]


def workload_rows(path: Path, columns: Mapping[str, str]) -> list[tuple[object, ...]]:
    """The rows of a CSV file with a header line, parsed like :func:`read_back`."""
    return read_back(path, columns, header=True)


def bits(row: tuple[object, ...]) -> tuple[object, ...]:
    """A row with its floats as their bit patterns (``-0.0`` and ``0.0`` differ)."""
    return tuple(struct.pack("<d", v) if isinstance(v, float) else v for v in row)


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["a,b", 'say "hi"', "two\nlines", "cr\rlf\r\n", "", " padded ", "#", '"', ",", "é🙂"]
)
FLOAT = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.1, -0.0, 5e-324, 1.7976931348623157e308, 1 / 3, 2.5e-8, 123456789012345678.0]
)
ROWS = st.lists(
    st.tuples(st.integers(-(2**63), 2**63 - 1), TEXT, TEXT, FLOAT, st.integers(-(2**63), 2**63 - 1)),
    min_size=1,
    max_size=40,
)


@given(rows=ROWS, batch_rows=st.integers(1, 7), group_rows=st.integers(1, 9))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_staging_round_trips_random_frames_exactly(
    tmp_path: Path, rows: list[tuple[Any, ...]], batch_rows: int, group_rows: int
) -> None:
    names = list(COLUMNS)
    table = pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})
    source = tmp_path / "e.parquet"
    pq.write_table(table, source, row_group_size=group_rows)
    copy = parquet_copy(source, COLUMNS, tmp_path / "in" / "e.csv", batch_rows=batch_rows)
    assert [bits(r) for r in read_back(copy, COLUMNS)] == [bits(r) for r in rows]


def test_float32_is_widened_as_the_local_engine_reads_it(tmp_path: Path) -> None:
    table = pa.table({"t": pa.array([1, 2], pa.int64()), "x": pa.array([0.1, 1e-3], pa.float32())})
    pq.write_table(table, tmp_path / "e.parquet")
    columns = dict(infer_source(tmp_path / "e.parquet", time="t", key="t", type="t").columns)
    copy = parquet_copy(tmp_path / "e.parquet", columns, tmp_path / "e.csv")
    assert [r[1] for r in read_back(copy, columns)] == pd.read_parquet(tmp_path / "e.parquet")["x"].tolist()
    assert read_back(copy, columns)[0][1] != 0.1  # the float32 nearest 0.1, not 0.1


def test_staging_streams_in_bounded_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=5_000), path)
    pq.write_table(pacsv.read_csv(path), tmp_path / "w.parquet", row_group_size=2_000)
    columns = dict(infer_source(tmp_path / "w.parquet").columns)
    sizes: list[int] = []
    writer = pacsv.CSVWriter

    class Recorder:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.writer = writer(*args, **kwargs)

        def __enter__(self) -> Recorder:
            return self

        def __exit__(self, *exc: object) -> None:
            self.writer.close()

        def write_batch(self, batch: Any) -> None:
            sizes.append(batch.num_rows)
            self.writer.write_batch(batch)

    monkeypatch.setattr(pacsv, "CSVWriter", Recorder)
    copy = parquet_copy(tmp_path / "w.parquet", columns, tmp_path / "w-copy.csv", batch_rows=300)
    assert sum(sizes) == 5_000
    assert max(sizes) <= 300
    assert len(sizes) >= 5_000 // 300
    assert read_back(copy, columns) == workload_rows(path, columns)


@pytest.mark.parametrize(
    ("column", "message"),
    [
        (pa.array([True, False]), r"column 'x' \(BOOLEAN\)"),
        (pa.array([1.5, float("nan")]), "column 'x' holds NaN"),
        (pa.array([1.5, float("-inf")]), "column 'x' holds NaN or infinity"),
        (pa.array([1, None], pa.int64()), "column 'x' has empty values"),
        (pa.array(["a", None]), "column 'x' has empty values"),
        (pa.array([1, 2**64 - 1], pa.uint64()), "column 'x' cannot be staged as int64"),
    ],
)
def test_values_the_copy_would_change_are_refused_naming_the_column(
    tmp_path: Path, column: Any, message: str
) -> None:
    pq.write_table(pa.table({"t": [1, 2], "x": column}), tmp_path / "e.parquet")
    columns = dict(infer_source(tmp_path / "e.parquet", key="t", type="t").columns)
    with pytest.raises(CepError, match=message):
        parquet_copy(tmp_path / "e.parquet", columns, tmp_path / "in" / "e.csv")
    assert not (tmp_path / "in" / "e.csv").exists()  # no partial copy left behind


def test_timestamp_columns_are_refused_naming_the_column(tmp_path: Path) -> None:
    stamps = pa.array([0, 1], pa.timestamp("ms"))
    pq.write_table(pa.table({"t": [1, 2], "at": stamps}), tmp_path / "e.parquet")
    with pytest.raises(CepError, match="column 'at' of type timestamp"):
        infer_source(tmp_path / "e.parquet", key="t", type="t")


def test_reading_without_the_jar_stages_a_typed_csv(tmp_path: Path) -> None:
    path = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=200), path)
    pq.write_table(pacsv.read_csv(path), tmp_path / "w.parquet")
    job = NativeJob([benchmark_patterns()["P1"]], infer_source(tmp_path / "w.parquet"), tmp_path / "out")
    native = job.reading()
    assert (native.path, native.staged, native.typed) == (str(tmp_path / "w.parquet"), False, True)
    staged = job.reading(parquet=False)
    assert (staged.staged, staged.typed) == (True, True)
    assert staged.positions is not None
    assert read_back(Path(staged.path), job.source.columns) == workload_rows(path, job.source.columns)
    ddl = "\n".join(job.ddl(staged))
    assert f"'path' = '{staged.path}', 'format' = 'csv'" in ddl
    assert "`price` DOUBLE" in ddl
    assert "staged as a typed CSV copy" in staged.describe(job.source)


@on_flink
def test_parquet_without_its_jar_gives_the_local_engines_detections_at_p2(tmp_path: Path) -> None:
    from workbench.backends.flink.edge import detect_file
    from workbench.backends.flink.sql_input import has_parquet

    path = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=2_000), path)
    table = pacsv.read_csv(path)
    tricky = ['a,b "c"', "new\nline", '"', "", "é,🙂"]
    ip = pa.array([tricky[i % len(tricky)] for i in range(table.num_rows)])
    table = table.set_column(table.schema.get_field_index("ip"), "ip", ip)
    pq.write_table(table, tmp_path / "w.parquet", row_group_size=300)
    patterns = [benchmark_patterns()[name] for name in ("P1", "P2", "P4")]
    assert not has_parquet()  # the fallback is what this environment exercises
    lines: list[str] = []
    found = detect_file(
        patterns, tmp_path / "w.parquet", tmp_path / "out", parallelism=2, report=lines.append
    )
    actual = list(zip(found["pattern"], found["key"], found["seqs"], strict=True))
    expected = local_matches(patterns, read_events(path))
    assert expected
    assert sorted(actual, key=repr) == sorted(expected, key=repr)
    assert len(lines) == 3
    assert all("staged as a typed CSV copy" in line for line in lines)
    assert found.attrs["paths"] == lines
    assert not (tmp_path / "out" / "matches" / "_input").exists()
