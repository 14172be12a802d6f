"""``python -m benchmarks.run --backend flink-sql|flink`` reports start-up and steady state apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import run
from benchmarks.patterns import benchmark_patterns, group_patterns
from benchmarks.workload import WorkloadSpec, write_csv

pytestmark = [pytest.mark.flink, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.mark.parametrize(("backend", "names"), [("flink-sql", ["P1", "P2"]), ("flink", ["P1", "G2"])])
def test_backend_line_has_startup_and_steady_rate_and_the_engines_counts(
    backend: str, names: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=4_000, seed=3), path)
    argv = ["--csv", str(path), "--limit", "3000", "--backend", backend, "--patterns", ",".join(names)]
    status = run.main(argv)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("pattern=")]
    assert status == 0
    assert [line.split()[0] for line in lines] == [f"pattern={n}" for n in names]
    events = run.read_events(path, 3000)
    patterns = {**benchmark_patterns(), **group_patterns()}
    for line in lines:
        fields = dict(item.split("=", 1) for item in line.split())
        local = run.run_pattern(fields["pattern"], patterns[fields["pattern"]], events)
        assert (int(fields["events"]), int(fields["matches"]), int(fields["checksum"])) == (
            3000,
            local.matches,
            local.checksum,
        )
        assert fields["engine"] == f"{backend}-p1"
        assert float(fields["startup_s"]) > 0
        assert float(fields["steady_events_per_s"]) > 0
        assert re.search(r"\bsteady_events_per_s=\d+\b", line)
        assert local.matches > 0


def test_a_group_is_refused_on_flink_sql(tmp_path: Path) -> None:
    path = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=100, seed=3), path)
    with pytest.raises(SystemExit):
        run.main(["--csv", str(path), "--backend", "flink-sql", "--patterns", "P1,G1"])
