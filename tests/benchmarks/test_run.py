"""The chunked replay of ``benchmarks.run`` gives the counts of one replay of the whole file."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import run
from benchmarks.patterns import benchmark_patterns
from benchmarks.workload import WorkloadSpec, write_csv


@pytest.mark.parametrize("name", ["P1", "P3", "P4any"])
def test_slices_give_the_counts_of_one_replay(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=6_000, seed=2), path)
    pattern = benchmark_patterns()[name]
    frame = run.read_frame(path)
    whole = run.run_pattern(name, pattern, [], frame=frame)
    monkeypatch.setattr(run, "CHUNK_ROWS", 1_700)
    sliced = run.replay_file_chunked(name, pattern, path, len(frame))
    assert (sliced.events, sliced.matches, sliced.checksum) == (whole.events, whole.matches, whole.checksum)
    assert sliced.mode == "replay"
