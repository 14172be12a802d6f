"""Files at the cluster's edge: Flink reads CSV / JSON lines itself, matches come back through Arrow."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.patterns import benchmark_patterns
from benchmarks.run import read_events
from benchmarks.workload import WorkloadSpec, write_csv
from workbench.backends import LocalBackend
from workbench.backends.flink.edge import FileSource, NativeJob, infer_source, sql_literal
from workbench.engine.nfa import Contiguity, SequencePattern, Stage
from workbench.errors import CepError


def on_flink(test: Callable[..., None]) -> Callable[..., None]:
    """Mark a test that runs a Flink job (skipped without PyFlink; Beam's shutdown warnings ignored)."""
    test = pytest.mark.filterwarnings("ignore::DeprecationWarning")(test)
    test = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")(test)
    return pytest.mark.flink(test)


NATIVE = ("P1", "P2", "P4")


def local_matches(patterns: list[SequencePattern], events: list) -> list[tuple[str, object, tuple[int, ...]]]:
    result = LocalBackend().run(patterns, events)
    return [(d.pattern, d.key, d.seqs) for d in result.detections if d.kind == "match"]


def test_sql_literal_keeps_quotes_as_data() -> None:
    assert sql_literal("it's") == "'it''s'"
    assert sql_literal("'; DROP TABLE x; --") == "'''; DROP TABLE x; --'"


def test_ddl_quotes_hostile_names_and_paths(tmp_path: Path) -> None:
    source = FileSource(
        str(tmp_path / "a'b.csv"),
        "csv",
        {"t": "BIGINT", "k`ey": "STRING", "type": "STRING", "price": "DOUBLE"},
        key="k`ey",
    )
    job = NativeJob([benchmark_patterns()["P1"]], source, tmp_path / "out")
    ddl = "\n".join(job.ddl())
    assert "`k``ey` STRING" in ddl
    assert "'path' = '" + str(tmp_path / "a''b.csv") + "'" in ddl
    assert "`k``ey` = 'k`ey'" in ddl  # the header row is recognised by every column's own name


def test_native_job_refuses_measures_it_cannot_write(tmp_path: Path) -> None:
    from dataclasses import replace

    from workbench.engine.nfa.measures import Measure

    source = FileSource(str(tmp_path / "e.csv"), "csv", {"t": "BIGINT", "key": "STRING", "type": "STRING"})
    pattern = replace(benchmark_patterns()["P1"], measures=(Measure("n", "1"),))
    with pytest.raises(CepError, match="'P1' has measures"):
        NativeJob([pattern], source, tmp_path / "out")


@pytest.mark.parametrize(
    ("columns", "roles", "message"),
    [
        ({"t": "BIGINT", "type": "STRING"}, {}, "key column 'key'"),
        ({"t": "DOUBLE", "key": "STRING", "type": "STRING"}, {}, "whole milliseconds"),
        ({"t": "BIGINT", "key": "STRING", "type": "STRING"}, {"seq": "id"}, "seq column 'id'"),
    ],
)
def test_file_source_refuses_missing_or_mistyped_columns(
    columns: dict[str, str], roles: dict[str, str], message: str
) -> None:
    with pytest.raises(CepError, match=message):
        FileSource("x.csv", "csv", columns, **roles)


def test_infer_source_reads_the_schema_of_each_format(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow", reason="pyarrow comes with the flink extra")
    frame = pd.DataFrame(
        {"t": [1, 2], "key": [7, 8], "type": ["a", "b"], "price": [1.5, 2.0], "ok": [True, False]}
    )
    frame.to_csv(tmp_path / "e.csv", index=False)
    frame.to_json(tmp_path / "e.jsonl", orient="records", lines=True)
    frame.to_parquet(tmp_path / "e.parquet")
    expected = {"t": "BIGINT", "key": "BIGINT", "type": "STRING", "price": "DOUBLE", "ok": "BOOLEAN"}
    for name, fmt in (("e.csv", "csv"), ("e.jsonl", "json"), ("e.parquet", "parquet")):
        source = infer_source(tmp_path / name)
        assert (source.format, dict(source.columns)) == (fmt, expected)
    with pytest.raises(CepError, match="cannot tell the format"):
        infer_source(tmp_path / "e.txt")
    (tmp_path / "bad.jsonl").write_text("[1, 2]\n")
    with pytest.raises(CepError, match="not a JSON object"):
        infer_source(tmp_path / "bad.jsonl")


@on_flink
@pytest.mark.slow
@pytest.mark.parametrize("parallelism", [1, 2])
def test_native_job_over_a_csv_file_equals_local(tmp_path: Path, parallelism: int) -> None:
    from workbench.backends.flink.edge import detect_file

    path = tmp_path / "w3k.csv"
    write_csv(WorkloadSpec(n=3_000), path)
    patterns = [benchmark_patterns()[name] for name in NATIVE]
    found = detect_file(patterns, path, tmp_path / "out", parallelism=parallelism)
    actual = list(zip(found["pattern"], found["key"], found["seqs"], strict=True))
    expected = local_matches(patterns, read_events(path))
    assert sorted(actual, key=repr) == sorted(expected, key=repr)
    for name in NATIVE:  # each pattern's matches in the engine's order
        assert [m for m in actual if m[0] == name] == [m for m in expected if m[0] == name]


def pair() -> SequencePattern:
    return SequencePattern(
        "pair", (Stage("a", types=("a",)), Stage("b", types=("b",), contiguity=Contiguity.STRICT))
    )


PAIR_EVENTS = [
    {"type": "a", "key": 1, "t": 0, "note": "x"},
    {"type": "b", "key": 1, "t": 1, "note": "it's"},
    {"type": "a", "key": 2, "t": 2, "note": ""},
    {"type": "a", "key": 1, "t": 3, "note": "y"},
    {"type": "b", "key": 2, "t": 4, "note": "z"},
    {"type": "b", "key": 1, "t": 5, "note": "w"},
]


@on_flink
@pytest.mark.parametrize("kind", ["json", "frame"])
def test_json_lines_and_staged_frames_keep_integer_keys(tmp_path: Path, kind: str) -> None:
    from workbench.backends.flink.edge import detect_file

    source: Path | pd.DataFrame
    if kind == "json":
        source = tmp_path / "events.jsonl"
        source.write_text("".join(json.dumps(e) + "\n" for e in PAIR_EVENTS))
    else:
        source = pd.DataFrame(PAIR_EVENTS)
    found = detect_file([pair()], source, tmp_path / "out")
    keys = found["key"].tolist()
    assert list(zip(keys, found["seqs"], strict=True)) == [(1, (0, 1)), (2, (2, 4)), (1, (3, 5))]
    assert [type(k) for k in keys] == [int, int, int]
    assert local_matches([pair()], PAIR_EVENTS) == [
        ("pair", k, s) for k, s in zip(keys, found["seqs"], strict=True)
    ]
