"""The benchmark workload's first 20k rows on Flink: the reference counts and checksums, p=1 and 2."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks.checksum import Checksum
from benchmarks.patterns import benchmark_patterns
from benchmarks.reference import REFERENCE
from benchmarks.run import read_events
from benchmarks.workload import WorkloadSpec, write_csv
from workbench.backends import LocalBackend
from workbench.engine.runtime import RunResult

pytestmark = [
    # Beam's gRPC reader thread reports "Multiplexer hanging up" when a job ends; harmless.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning"),
    pytest.mark.flink,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

ROWS = 20_000


def counts(result: RunResult) -> dict[str, tuple[int, int]]:
    """Per pattern: matches and PATTERNS.md checksum."""
    sums = {name: Checksum() for name in REFERENCE}
    for d in result.detections:
        if d.kind == "match":
            sums[d.pattern].add(d.seqs)
    return {name: (c.matches, c.value) for name, c in sums.items()}


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bench") / "w20k.csv"
    write_csv(WorkloadSpec(n=ROWS), path)
    return path


@pytest.mark.parametrize("parallelism", [1, 2])
def test_first_20k_rows_match_reference(parallelism: int, workload: Path) -> None:
    from workbench.backends.flink import run_matchers

    events = read_events(workload)
    patterns = list(benchmark_patterns().values())
    start = time.perf_counter()
    result = run_matchers(patterns, events, parallelism=parallelism)
    seconds = time.perf_counter() - start
    assert counts(result) == {name: REFERENCE[name][ROWS] for name in REFERENCE}
    assert result.detections == LocalBackend().run(patterns, events).detections
    print(f"flink p={parallelism}: {ROWS} events x {len(patterns)} patterns in {seconds:.1f} s")


def test_benchmark_cli_reports_flink_lines(workload: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.run import main

    status = main(["--csv", str(workload), "--patterns", "P1", "--backend", "flink", "--parallelism", "2"])
    line = capsys.readouterr().out.strip()
    matches, checksum = REFERENCE["P1"][ROWS]
    assert line.startswith(f"pattern=P1 events={ROWS} matches={matches} ")
    assert f" checksum={checksum} engine=flink-p2 " in line
    assert status == 0
