"""flink-sql on Flink: the benchmark patterns and their quantified variants equal the local engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.checksum import Checksum
from benchmarks.patterns import api_patterns
from benchmarks.reference import REFERENCE
from benchmarks.run import read_events
from benchmarks.workload import WorkloadSpec, write_csv
from tests.backends.test_sql_query import EXPRESSIBLE, variant
from workbench.backends import LocalBackend
from workbench.backends.base import RunOptions
from workbench.backends.flink.paths import choose_paths
from workbench.engine.nfa import Contiguity


@pytest.mark.flink
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_expressible_benchmark_patterns_match_reference_on_flink_sql(tmp_path: Path) -> None:
    from workbench.backends import get_backend

    path = tmp_path / "w20k.csv"
    write_csv(WorkloadSpec(n=20_000), path)
    events = read_events(path)
    patterns = [api_patterns()[name] for name in EXPRESSIBLE]
    result = get_backend("flink-sql").run(patterns, events)
    local = LocalBackend().run(patterns, events)
    for name in EXPRESSIBLE:
        checksum = Checksum()
        for d in result.detections:
            if d.pattern == name:
                checksum.add(d.seqs)
        assert (checksum.matches, checksum.value) == REFERENCE[name][20_000]
    key = lambda d: (d.pattern, d.key, d.time, d.seqs, d.channels)  # noqa: E731 - instance ids differ
    assert sorted(map(key, result.detections)) == sorted(map(key, local.detections))


@pytest.mark.flink
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_quantified_benchmark_variants_equal_the_local_engine_on_flink_sql(tmp_path: Path) -> None:
    from workbench.backends import get_backend

    path = tmp_path / "w20k.csv"
    write_csv(WorkloadSpec(n=20_000), path)
    events = read_events(path)
    patterns = [
        variant("P3"),
        variant("P3", inner=Contiguity.STRICT),
        variant("P5", inner=Contiguity.STRICT),
    ]
    result = get_backend("flink-sql").run(patterns, events)
    local = LocalBackend().run(patterns, events)
    key = lambda d: (d.pattern, d.key, d.time, d.seqs, d.channels)  # noqa: E731 - instance ids differ
    assert sorted(map(key, result.detections)) == sorted(map(key, local.detections))
    assert {d.pattern for d in local.detections} == {p.name for p in patterns}


@pytest.mark.flink
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_flink_backend_runs_each_pattern_on_its_path(tmp_path: Path) -> None:
    from workbench.backends.flink import FlinkBackend

    path = tmp_path / "w3k.csv"
    write_csv(WorkloadSpec(n=3_000), path)
    events = read_events(path)
    patterns = [api_patterns()["P1"], api_patterns()["P2any"]]
    lines: list[str] = []
    result = FlinkBackend(report=lines.append).run(patterns, events)
    assert lines == [choice.describe() for choice in choose_paths(patterns, events, RunOptions())]
    assert "'P1' runs natively" in lines[0]
    assert "'P2any' runs on the Python path: stage 'b': 'followed by any'" in lines[1]
    local = LocalBackend().run(patterns, events)
    key = lambda d: (d.pattern, d.key, d.time, d.seqs, d.channels)  # noqa: E731 - instance ids differ
    assert sorted(map(key, result.detections)) == sorted(map(key, local.detections))
    assert {d.pattern for d in result.detections} == {"P1", "P2any"}
