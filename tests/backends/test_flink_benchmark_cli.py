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


def test_flink_sql_skips_what_match_recognize_cannot_express_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=3_000, seed=3), path)
    assert run.main(["--csv", str(path), "--backend", "flink-sql", "--patterns", "P2any,P1,P5,G1"]) == 0
    out, err = capsys.readouterr()
    assert [line.split()[0] for line in out.splitlines() if line.startswith("pattern=")] == ["pattern=P1"]
    for name, why in (("P2any", "followed by any"), ("P5", "no_skip"), ("G1", "reaction group")):
        line = next(line for line in err.splitlines() if line.startswith(f"# {name}: not run on flink-sql"))
        assert why in line
