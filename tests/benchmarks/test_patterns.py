"""The eight benchmark patterns on the engine: equal to the brute-force oracle and to the reference."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from benchmarks import run
from benchmarks.patterns import CEP_TEXT, GROUP_TEXT, api_patterns, benchmark_patterns, group_patterns
from benchmarks.reference import PATTERNS, REFERENCE
from benchmarks.workload import WorkloadSpec, iter_rows, write_csv
from tests.benchmarks.oracle import matches as oracle_matches
from workbench.engine.events import Event
from workbench.engine.runtime import Engine
from workbench.engine.sharding import ShardedEngine

# Workloads that stress different things: the defaults (500 keys), few keys with long runs inside the
# windows, skewed keys, and no noise.
# (Sizes keep P3any's combinations in the low thousands: its match count grows as C(trades, 4).)
SMALL = [
    WorkloadSpec(n=3_000, seed=3),
    WorkloadSpec(n=600, keys=3, seed=5, mean_gap_ms=150.0),
    WorkloadSpec(n=1_200, keys=60, seed=7, skew=1.0, mean_gap_ms=120.0),
    WorkloadSpec(n=800, keys=8, seed=11, noise=0.0, mean_gap_ms=250.0),
]


def events_of(spec: WorkloadSpec) -> list[Event]:
    return [
        Event(r.type, r.t, r.key, {"price": r.price, "qty": r.qty, "ip": r.ip}, r.id) for r in iter_rows(spec)
    ]


def engine_matches(engine: Engine | ShardedEngine, events: list[Event]) -> Counter[tuple[int, ...]]:
    for e in events:
        engine.process(e)
    engine.finish()
    assert all(d.kind == "match" for d in engine.detections)  # no time-out output in these patterns
    return Counter(tuple(sorted(d.seqs)) for d in engine.detections)


def test_language_and_api_give_equal_patterns() -> None:
    pytest.importorskip("workbench.language")
    from benchmarks.patterns import language_patterns

    assert set(CEP_TEXT) == set(PATTERNS)
    assert language_patterns() == api_patterns()


@pytest.mark.parametrize("pattern", [*PATTERNS, *GROUP_TEXT])
@pytest.mark.parametrize("spec", SMALL, ids=lambda s: f"n{s.n}-k{s.keys}-s{s.seed}")
def test_engine_equals_oracle(pattern: str, spec: WorkloadSpec) -> None:
    # the eight sequence patterns and the two reaction groups
    events = events_of(spec)
    compiled = {**benchmark_patterns(), **group_patterns()}[pattern]
    got = engine_matches(Engine([compiled]), events)
    want = Counter(tuple(sorted(m)) for m in oracle_matches(pattern, iter_rows(spec)))
    assert got == want


@pytest.mark.parametrize("group", GROUP_TEXT)
def test_groups_give_one_count_in_stream_shards_and_replay(group: str, frame_20k: pd.DataFrame) -> None:
    events = events_of(WorkloadSpec(n=20_000))
    stream = run.run_pattern(group, group_patterns()[group], events)
    shards = run.run_pattern(group, group_patterns()[group], events, shards=3)
    replay = run.run_pattern(group, group_patterns()[group], [], frame=frame_20k)
    oracle = Counter(tuple(sorted(m)) for m in oracle_matches(group, iter_rows(WorkloadSpec(n=20_000))))
    assert stream.matches == sum(oracle.values()) > 100
    assert (
        (shards.matches, shards.checksum)
        == (replay.matches, replay.checksum)
        == (stream.matches, stream.checksum)
    )


@pytest.mark.parametrize("pattern", PATTERNS)
def test_same_matches_on_three_shards(pattern: str) -> None:
    spec = SMALL[2]
    events = events_of(spec)
    one = engine_matches(Engine([benchmark_patterns()[pattern]]), events)
    three = engine_matches(ShardedEngine([benchmark_patterns()[pattern]], 3), events)
    assert one == three


@pytest.mark.parametrize("pattern", PATTERNS)
def test_reference_counts_first_20k_rows(pattern: str) -> None:
    events = events_of(WorkloadSpec(n=20_000))
    result = run.run_pattern(pattern, benchmark_patterns()[pattern], events)
    assert (result.matches, result.checksum) == REFERENCE[pattern][20_000]


@pytest.fixture(scope="module")
def frame_20k(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    csv = tmp_path_factory.mktemp("workload") / "w.csv"
    write_csv(WorkloadSpec(n=20_000), csv)
    return run.read_frame(csv)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_replay_mode_gives_the_reference_counts(pattern: str, frame_20k: pd.DataFrame) -> None:
    """``--mode replay``: the workload as a DataFrame through the user's path, detections as a DataFrame."""
    result = run.run_pattern(pattern, benchmark_patterns()[pattern], [], frame=frame_20k)
    assert (result.mode, result.events) == ("replay", 20_000)
    assert (result.matches, result.checksum) == REFERENCE[pattern][20_000]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_live_mode_gives_the_reference_counts(pattern: str) -> None:
    """``--mode live``: one ``Engine.process`` call per event, the same detections as ``process_many``."""
    events = events_of(WorkloadSpec(n=20_000))
    result = run.run_pattern(pattern, benchmark_patterns()[pattern], events, live=True)
    assert (result.mode, result.events) == ("live", 20_000)
    assert (result.matches, result.checksum) == REFERENCE[pattern][20_000]


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_reference_counts_200k(pattern: str) -> None:
    events = events_of(WorkloadSpec(n=200_000))
    result = run.run_pattern(pattern, benchmark_patterns()[pattern], events)
    assert (result.matches, result.checksum) == REFERENCE[pattern][200_000]


LINE = re.compile(
    r"^pattern=(\w+) events=(\d+) matches=(\d+) seconds=\d+\.\d{3} events_per_s=\d+ checksum=(\d+) "
    r"engine=workbench peak_mb=\d+\.\d parse_s=\d+\.\d{3} mode=stream$"
)


def test_cli_output_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=2_000), csv)
    status = run.main(["--csv", str(csv), "--patterns", "P1,P5", "--repeat", "2", "--in-process"])
    assert status == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    want = {
        p: Counter(tuple(sorted(m)) for m in oracle_matches(p, iter_rows(WorkloadSpec(n=2_000))))
        for p in ("P1", "P5")
    }
    for m in parsed:
        assert m is not None
        name, events, count = m.group(1), int(m.group(2)), int(m.group(3))
        assert events == 2_000
        assert count == sum(want[name].values())


def test_cli_one_pass_agrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=3_000, seed=3), csv)
    assert run.main(["--csv", str(csv), "--patterns", ",".join(PATTERNS), "--in-process", "--one-pass"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == len(PATTERNS)
    assert "8 patterns in one engine" in err
    assert "results equal" in err


def test_cli_checks_reference_and_forks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "w200k.csv"
    write_csv(WorkloadSpec(n=200_000), csv)  # the reference file: its first 20k rows have reference counts
    status = run.main(["--csv", str(csv), "--limit", "20000", "--patterns", "P4"])
    out, err = capsys.readouterr()
    assert status == 0
    assert LINE.match(out.strip())
    assert "equal to REFERENCE_COUNTS.md (878, 724369482)" in err


def test_cli_rejects_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="expected the header"):
        run.read_events(bad)
    with pytest.raises(SystemExit):
        run.main(["--csv", str(bad), "--patterns", "P9"])


def test_cli_sharded_in_worker_processes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=3_000, seed=3), csv)
    args = ["--csv", str(csv), "--patterns", "P3", "--in-process"]
    assert run.main(args) == 0
    single = LINE.match(capsys.readouterr().out.strip())
    assert run.main([*args, "--shards", "3", "--processes", "2"]) == 0
    sharded = LINE.match(capsys.readouterr().out.strip())
    assert single is not None
    assert sharded is not None
    assert (sharded.group(3), sharded.group(4)) == (single.group(3), single.group(4))
    assert int(single.group(3)) == len(oracle_matches("P3", iter_rows(WorkloadSpec(n=3_000, seed=3))))


@pytest.mark.parametrize("spec", SMALL[1:], ids=lambda s: f"n{s.n}-k{s.keys}-s{s.seed}")
def test_incremental_aggregate_equals_rescanning(spec: WorkloadSpec) -> None:
    # P5 with the O(1) accumulator and P5 with Flink's recomputation from the matched events agree.
    from benchmarks.scaling import p5_pattern

    events = events_of(spec)
    incremental = engine_matches(Engine([p5_pattern(rescan=False)]), events)
    rescanning = engine_matches(Engine([p5_pattern(rescan=True)]), events)
    assert incremental == rescanning
    assert sum(incremental.values()) > 0


@pytest.mark.parametrize("spec", SMALL, ids=lambda s: f"n{s.n}-k{s.keys}-s{s.seed}")
def test_p5_by_hand_equals_the_oracle(spec: WorkloadSpec) -> None:
    # the hand-written floor of ``benchmarks.scaling --only floor`` finds P5's matches, no more
    from benchmarks.scaling import p5_by_hand

    got = Counter(tuple(sorted(e.seq for e in m)) for m in p5_by_hand(events_of(spec)))
    assert got == Counter(tuple(sorted(m)) for m in oracle_matches("P5", iter_rows(spec)))
    assert sum(got.values()) > 0
