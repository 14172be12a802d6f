"""The native path (``MATCH_RECOGNIZE``) stopped with a savepoint and resumed: the uninterrupted matches."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks.patterns import benchmark_patterns
from benchmarks.run import read_events
from benchmarks.workload import WorkloadSpec, write_csv
from workbench.backends import LocalBackend

pytestmark = [
    pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning"),
    pytest.mark.flink,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

ROWS = 2_000
COLUMNS = ("key_id", "seq", "type", "t", "price", "qty", "ip")


def test_native_job_resumes_from_a_savepoint(tmp_path: Path) -> None:
    from pyflink.common import Row, Types
    from pyflink.table import Schema, StreamTableEnvironment
    from pyflink.table.table_result import TableResult

    from tests.backends.flink_jobs import slow_source
    from workbench.backends.flink import make_environment
    from workbench.backends.flink.edge import _read_part_files
    from workbench.backends.flink.savepoints import stop_with_savepoint
    from workbench.backends.flink.sql_query import match_recognize

    path = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=ROWS), path)
    events = read_events(path)
    pattern = benchmark_patterns()["P2"]
    rows = [
        Row(e.key, e.seq, e.type, e.time, e.fields["price"], e.fields["qty"], e.fields["ip"]) for e in events
    ]
    types = [
        Types.STRING(),
        Types.LONG(),
        Types.STRING(),
        Types.LONG(),
        Types.DOUBLE(),
        Types.LONG(),
        Types.STRING(),
    ]
    row_type = Types.ROW_NAMED(list(COLUMNS), types)
    out, savepoints = tmp_path / "out", tmp_path / "savepoints"
    fields = {"type": "type", "time": "t", "t": "t", "price": "price", "qty": "qty", "ip": "ip"}

    def submit(savepoint: str | None, delay_s: float) -> TableResult:
        bundles = {"python.fn-execution.bundle.size": "1"} if delay_s else {}
        env = make_environment(1, checkpoint_interval_ms=300, savepoint=savepoint, config=bundles)
        t_env = StreamTableEnvironment.create(env)
        schema = (
            Schema.new_builder()
            .column_by_expression("rt", "TO_TIMESTAMP_LTZ(t, 3)")
            .watermark("rt", "rt - INTERVAL '0.001' SECOND")
            .build()
        )
        stream = slow_source(env, rows, delay_s, row_type)
        t_env.create_temporary_view("cep_events", t_env.from_data_stream(stream, schema))
        t_env.execute_sql(
            f"CREATE TEMPORARY TABLE cep_matches (key_id STRING, s0 STRING, s1 STRING, s2 STRING) "
            f"WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')"
        )
        return t_env.execute_sql(f"INSERT INTO cep_matches {match_recognize(pattern, 'cep_events', fields)}")

    def committed() -> list[tuple[str, tuple[int, ...]]]:
        table = _read_part_files(out, ["key_id", "s0", "s1", "s2"], "string") if out.exists() else None
        if table is None:
            return []
        return [(row["key_id"], tuple(int(row[s]) for s in ("s0", "s1", "s2"))) for row in table.to_pylist()]

    first = submit(None, 0.01)
    deadline = time.monotonic() + 90
    while not committed() and time.monotonic() < deadline:
        time.sleep(0.2)
    savepoint = stop_with_savepoint(first.get_job_client(), savepoints)
    before = committed()
    expected = [
        (d.key, d.seqs) for d in LocalBackend().run([pattern], events).detections if d.kind == "match"
    ]
    assert 0 < len(before) < len(expected)  # the savepoint cut the run

    submit(savepoint, 0.0).wait()
    assert sorted(committed()) == sorted(expected)
