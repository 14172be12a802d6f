"""``emit into`` on Flink: a chain of keyed operators gives the local engine's results exactly."""

from __future__ import annotations

import random

import pytest

from workbench.backends.base import RunOptions
from workbench.backends.local import LocalBackend
from workbench.engine.runtime import RunResult
from workbench.language import compile_patterns

pytestmark = [pytest.mark.flink, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

#: two levels: bursts of failures, and pairs of bursts
TWO = """
sequence burst measures n = count(f), last_v = last(f).v emit into burst begin f: fail times 3
sequence pair measures total = sum(b.n), vs = first(b).last_v + last(b).last_v begin b: burst times 2
"""

#: three levels: three failed-login bursts from one IP within an hour are an attack; an attack
#: followed by a successful login (an input type) within 10 minutes is a takeover
THREE = """
sequence burst
    partition by ip
    within 1min
    measures fails = count(f), started = first(f).time
    emit into burst
    begin f where e.type == 'login_failed' times 3
sequence attack
    partition by ip
    within 1h
    no timeouts
    measures bursts = count(b), fails = sum(b.fails)
    emit into attack
    begin b: burst times 3
sequence takeover
    partition by ip
    within 10min
    measures fails = a.fails
    begin a: attack
    followed by s: login_ok
"""


def _two_events() -> list[dict[str, object]]:
    rng = random.Random(7)
    return [{"type": "fail", "time": t, "key": rng.choice("abc"), "v": rng.randint(0, 9)} for t in range(40)]


def _three_events() -> list[dict[str, object]]:
    rng = random.Random(11)
    events: list[dict[str, object]] = []
    t = 0
    for _ in range(160):
        t += rng.choice([0, 5_000, 15_000, 40_000, 400_000])  # ties, bursts, and gaps past the windows
        kind = "login_ok" if rng.random() < 0.15 else "login_failed"
        events.append({"type": kind, "time": t, "key": rng.choice(["10.0.0.7", "10.0.0.9"])})
    return events


def _local(text: str, events: list[dict[str, object]]) -> RunResult:
    return LocalBackend().execute(compile_patterns(text), events, RunOptions())


@pytest.mark.parametrize("parallelism", [1, 2])
def test_two_and_three_level_chains_equal_the_local_engine(parallelism: int) -> None:
    pytest.importorskip("pyflink")
    from workbench.backends.flink import FlinkRun, run_many

    cases = [(TWO, _two_events()), (THREE, _three_events())]
    runs = [FlinkRun(tuple(compile_patterns(text)), tuple(events)) for text, events in cases]
    results = run_many(runs, parallelism=parallelism)
    for (text, events), got in zip(cases, results, strict=True):
        want = _local(text, events)
        kinds = {(d.pattern, d.kind) for d in want.detections}
        assert {"pair", "attack", "takeover"} & {p for p, _ in kinds}  # the chains do reach their ends
        assert got.detections == want.detections
        assert got.late == want.late
    three = results[1].detections
    derived = [e for d in three if d.pattern != "burst" for e in d.events if e.seq < -1]
    assert derived
    assert all(e.fields for e in derived)  # the measures crossed operators as fields
    assert any(d.pattern == "takeover" and d.kind == "match" for d in three)


def test_the_backend_runs_emitters_and_their_consumers_on_the_python_path() -> None:
    pytest.importorskip("pyflink")
    from workbench.backends.flink import FlinkBackend

    lines: list[str] = []
    patterns = compile_patterns(TWO)
    events = _two_events()
    got = FlinkBackend(report=lines.append).execute(patterns, events, RunOptions())
    assert got.detections == _local(TWO, events).detections
    assert "'burst' runs on the Python path" in lines[0]
    assert "emits into 'burst'" in lines[0]
    assert "'pair' runs on the Python path" in lines[1]
    assert "reads the derived type(s) 'burst'" in lines[1]
