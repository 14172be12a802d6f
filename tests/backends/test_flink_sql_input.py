"""How a native job reads its file: the CSV header left out, typed columns, positions from the file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.patterns import benchmark_patterns
from benchmarks.run import read_events
from benchmarks.workload import WorkloadSpec, write_csv
from tests.backends.test_flink_edge import local_matches, on_flink, pair
from workbench.backends.flink.edge import FileSource, NativeJob, Reading, infer_source
from workbench.backends.flink.sql_input import Positions, bad_row, headerless_copy, local_file
from workbench.errors import CepError

pytest.importorskip("pyarrow", reason="pyarrow comes with the flink extra")

COLUMNS = {"t": "BIGINT", "key": "BIGINT", "type": "STRING"}


def write(path: Path, rows: list[tuple[object, ...]], header: str = "t,key,type") -> Path:
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


def test_headerless_copy_leaves_out_exactly_the_header(tmp_path: Path) -> None:
    path = write(tmp_path / "e.csv", [(1, 7, "a"), (2, 8, "b")])
    copy = headerless_copy(path, list(COLUMNS), tmp_path / "in" / "e.csv")
    assert copy is not None
    assert copy.read_text() == "1,7,a\n2,8,b\n"
    # a first line that is not the header (other names, other order, quoted): no copy
    assert headerless_copy(path, ["t", "type", "key"], tmp_path / "x.csv") is None
    quoted = write(tmp_path / "q.csv", [(1, 7, "a")], header='t,"key",type')
    assert headerless_copy(quoted, list(COLUMNS), tmp_path / "y.csv") is None


def test_local_file_is_a_plain_path_or_file_uri(tmp_path: Path) -> None:
    path = write(tmp_path / "e.csv", [(1, 7, "a")])
    assert local_file(str(path)) == path
    assert local_file(f"file://{path}") == path
    assert local_file("s3://bucket/e.csv") is None
    assert local_file(str(tmp_path)) is None  # a directory of part files is read as text


def test_positions_by_time_alone_when_times_rise(tmp_path: Path) -> None:
    path = write(tmp_path / "e.csv", [(10, 1, "a"), (20, 2, "a"), (35, 1, "b")])
    positions = Positions.read(path, "csv", "t", "key", COLUMNS)
    assert positions is not None
    assert positions.by_key is None
    keys = pd.Series([1, 1])
    assert positions.seqs(keys, [((10,), (35,)), ((20,), ())]) == [((0,), (2,)), ((1,), ())]
    with pytest.raises(CepError, match="not in the file"):
        positions.seqs(keys, [((11,), (35,))])


def test_positions_by_key_and_time_when_times_tie(tmp_path: Path) -> None:
    path = write(tmp_path / "e.csv", [(10, 1, "a"), (10, 2, "a"), (12, 2, "b"), (12, 1, "b")])
    positions = Positions.read(path, "csv", "t", "key", COLUMNS)
    assert positions is not None
    assert positions.by_key is not None
    assert positions.seqs(pd.Series([1, 2]), [((10, 12),), ((10, 12),)]) == [((0, 3),), ((1, 2),)]


@pytest.mark.parametrize(
    "rows",
    [
        [(10, 1, "a"), (10, 1, "b")],  # one key, one time, two rows: the time names neither
        [(10, 1, "a"), (9, 2, "b")],  # out of order: the job's order is not the file's
    ],
)
def test_no_positions_when_time_and_key_do_not_name_each_row(
    tmp_path: Path, rows: list[tuple[object, ...]]
) -> None:
    assert Positions.read(write(tmp_path / "e.csv", rows), "csv", "t", "key", COLUMNS) is None


def test_a_bad_time_is_a_cep_error_naming_the_column(tmp_path: Path) -> None:
    path = write(tmp_path / "e.csv", [(10, 1, "a"), ("soon", 1, "b")])
    with pytest.raises(CepError, match="'t' column cannot be read as BIGINT"):
        Positions.read(path, "csv", "t", "key", COLUMNS)
    empty = write(tmp_path / "f.csv", [(10, 1, "a"), ("", 1, "b")])
    with pytest.raises(CepError, match="'t' column has 1 empty"):
        Positions.read(empty, "csv", "t", "key", COLUMNS)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=30))
def test_positions_agree_with_a_brute_force_search(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[int, int]]
) -> None:
    rows: list[tuple[object, ...]] = []
    t = 0
    for step, key in steps:
        t += step
        rows.append((t, key, "a"))
    path = write(tmp_path_factory.mktemp("p") / "e.csv", rows)
    positions = Positions.read(path, "csv", "t", "key", COLUMNS) if rows else None
    pairs = [(k, t) for t, k, _ in rows]
    if len(set(pairs)) < len(pairs):
        assert positions is None
        return
    if positions is None:
        assert not rows
        return
    keys = pd.Series([k for t, k, _ in rows])
    found = positions.seqs(keys, [((t,),) for t, _, _ in rows])
    assert found == [((pairs.index((k, t)),),) for t, k, _ in rows]


def test_bad_row_names_the_line_and_column_flink_failed_on(tmp_path: Path) -> None:
    path = write(tmp_path / "e.csv", [(10, 1, "a"), (11, "x", "b"), (12, 1, "c")])
    error = RuntimeError(  # the shape of Flink 2.3's failure (trimmed)
        "org.apache.flink.runtime.JobException: Recovery is suppressed\n"
        "Caused by: java.lang.RuntimeException: Fail to deserialize at field: key.\n"
        "\tat org.apache.flink.formats.csv.CsvToRowDataConverters.lambda$createRowConverter(...)\n"
        'Caused by: java.lang.NumberFormatException: For input string: "x"\n'
    )
    found = bad_row(error, path, COLUMNS)
    assert isinstance(found, CepError)
    assert str(found) == f"{path}: line 3 does not hold a value of column 'key' (BIGINT): 'x'"
    assert bad_row(RuntimeError("the cluster went away"), path, COLUMNS) is None
    older = RuntimeError("Caused by: java.io.IOException: Failed to deserialize CSV row '12,1,c'.")
    assert "line 4" in str(bad_row(older, path, COLUMNS))


def test_boolean_columns_are_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    path.write_text("t,key,type,ok\n1,1,a,true\n")
    reading = NativeJob([pair()], infer_source(path), tmp_path / "out").reading()
    assert not reading.typed
    assert reading.positions is None


def test_reading_a_local_csv_is_typed_without_header_or_numbering(tmp_path: Path) -> None:
    path = write(tmp_path / "e.csv", [(10, 1, "a"), (11, 2, "b")])
    job = NativeJob([pair()], infer_source(path), tmp_path / "out")
    reading = job.reading()
    assert reading.typed
    assert Path(reading.path).read_text() == "10,1,a\n11,2,b\n"
    assert reading.positions is not None
    ddl = "\n".join(job.ddl(reading))
    assert "`t` BIGINT" in ddl
    assert "STRING" not in ddl.split("CREATE TEMPORARY VIEW")[0].replace("`type` STRING", "")
    assert "TRY_CAST" not in ddl
    assert "COUNT(*) OVER" not in ddl
    assert "`t` AS seq" in ddl


def test_reading_numbers_rows_in_flink_when_the_file_cannot(tmp_path: Path) -> None:
    path = write(tmp_path / "e.csv", [(10, 1, "a"), (10, 1, "b")])
    job = NativeJob([pair()], infer_source(path), tmp_path / "out")
    reading = job.reading()
    assert reading.typed
    assert reading.positions is None
    assert "COUNT(*) OVER" in "\n".join(job.ddl(reading))
    with_seq = FileSource(str(path), "csv", {**COLUMNS}, seq="key")
    reading = NativeJob([pair()], with_seq, tmp_path / "out2").reading()
    assert reading.positions is None
    assert "CAST(`key` AS BIGINT) AS seq" in "\n".join(
        NativeJob([pair()], with_seq, tmp_path / "o").ddl(reading)
    )


def test_a_remote_csv_is_read_as_text(tmp_path: Path) -> None:
    source = FileSource("s3://bucket/e.csv", "csv", COLUMNS)
    reading = NativeJob([pair()], source, tmp_path / "out").reading()
    assert reading == Reading("s3://bucket/e.csv", False, None)


# -- on Flink ------------------------------------------------------------------------------------


@on_flink
@pytest.mark.parametrize("ties", [False, True])
def test_typed_reading_equals_the_local_engine(tmp_path: Path, ties: bool) -> None:
    """Times that rise (the time names the row) and times that tie across keys (key and time do)."""
    from workbench.backends.flink.edge import detect_file

    path = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=2_000), path)
    if ties:
        frame = pd.read_csv(path)
        frame["t"] = frame["t"] // 7 * 7
        frame = frame.drop_duplicates(["key", "t"]).reset_index(drop=True)
        frame.to_csv(path, index=False)
    patterns = [benchmark_patterns()[name] for name in ("P1", "P2", "P4")]
    found = detect_file(patterns, path, tmp_path / "out", parallelism=2)
    actual = list(zip(found["pattern"], found["key"], found["seqs"], strict=True))
    expected = local_matches(patterns, read_events(path))
    assert expected
    assert sorted(actual, key=repr) == sorted(expected, key=repr)


@on_flink
def test_rows_the_time_cannot_name_are_numbered_by_flink(tmp_path: Path) -> None:
    from workbench.backends.flink.edge import detect_file

    path = write(tmp_path / "e.csv", [(0, 1, "a"), (0, 1, "b"), (1, 2, "a"), (1, 2, "a"), (2, 2, "b")])
    found = detect_file([pair()], path, tmp_path / "out")
    actual = list(zip(found["pattern"], found["key"], found["seqs"], strict=True))
    events = pd.read_csv(path).to_dict("records")
    assert actual == local_matches([pair()], events) == [("pair", 1, (0, 1)), ("pair", 2, (3, 4))]


@on_flink
def test_a_malformed_row_is_a_cep_error_naming_its_line(tmp_path: Path) -> None:
    from workbench.backends.flink.edge import detect_file

    path = write(tmp_path / "e.csv", [(0, 1, "a"), (1, 1, "b"), (2, "one", "a"), (3, 1, "b")])
    source = FileSource(str(path), "csv", {"t": "BIGINT", "key": "BIGINT", "type": "STRING"})
    with pytest.raises(CepError, match=r"line 4 does not hold a value of column 'key' \(BIGINT\): 'one'"):
        detect_file([pair()], source, tmp_path / "out")


def test_each_pattern_reads_only_its_columns_and_event_types(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    write_csv(WorkloadSpec(n=50), path)
    patterns = [benchmark_patterns()[name] for name in ("P1", "P2")]
    ddl = NativeJob(patterns, infer_source(path), tmp_path / "out").ddl()
    views = [s for s in ddl if s.startswith("CREATE TEMPORARY VIEW cep_in_")]
    # P1 (``next``) reads every event, and the price; P2 only the types it can use, no field
    assert (
        views[0]
        == "CREATE TEMPORARY VIEW cep_in_0 AS SELECT key_id, rt, seq, `type`, `price` FROM cep_events"
    )
    assert views[1] == (
        "CREATE TEMPORARY VIEW cep_in_1 AS SELECT key_id, rt, seq, `type` FROM cep_events "
        "WHERE `type` = 'login' OR `type` = 'trade' OR `type` = 'update'"
    )
