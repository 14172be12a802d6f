"""The Flink backend returns what the local engine returns, at parallelism 1 and 2."""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.backends.matchers import PairWithin, Ticker, standard_matchers
from tests.backends.strategies import random_options, random_script
from workbench.backends import AdvanceTime, Backend, LocalBackend
from workbench.engine.runtime import RunResult

pytestmark = [
    # Beam's gRPC reader thread reports "Multiplexer hanging up" when a job ends; harmless.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning"),
    pytest.mark.flink,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:pyflink"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:apache_beam"),
]


def same_result(expected: RunResult, actual: RunResult) -> None:
    assert Counter(map(repr, expected.detections)) == Counter(map(repr, actual.detections))
    for key in {d.key for d in expected.detections}:
        assert [d for d in expected.detections if d.key == key] == [
            d for d in actual.detections if d.key == key
        ]
    assert Counter(map(repr, expected.reactions)) == Counter(map(repr, actual.reactions))
    assert expected.late == actual.late
    assert Counter(map(repr, expected.trace)) == Counter(map(repr, actual.trace))


@pytest.mark.parametrize("parallelism", [1, 2])
def test_random_scripts_equal_local(parallelism: int) -> None:
    from workbench.backends.flink import FlinkRun, run_many

    runs, expected = [], []
    for seed in range(60):
        rng = random.Random(seed)
        script = random_script(rng, rng.randint(0, 80), keys=rng.choice((1, 3, 6)))
        options = random_options(rng)
        expected.append(LocalBackend().run(standard_matchers(), script, **options))
        runs.append(FlinkRun(standard_matchers(), script, **options))
    actual = run_many(runs, parallelism=parallelism)
    assert len(actual) == len(expected)
    for exp, act in zip(expected, actual, strict=True):
        same_result(exp, act)
    assert sum(len(r.detections) for r in actual) > 500
    assert sum(len(r.late) for r in actual) > 20


def test_backend_matrix(backend: Backend) -> None:
    script = [
        {"type": "a", "time": 1, "key": "u1"},
        {"type": "a", "time": 2, "key": "u2"},
        {"type": "b", "time": 4, "key": "u1"},
        {"type": "a", "time": 3, "key": "u1"},
        AdvanceTime(30),
        {"type": "b", "time": 25, "key": "u2"},
        {"type": "c", "time": 40, "key": "u2"},
    ]
    result = backend.run([PairWithin(window=10), Ticker(period=7)], script, out_of_orderness=2, trace=True)
    assert [(d.pattern, d.key, d.kind, d.time, d.seqs) for d in result.detections] == [
        ("pair", "u1", "match", 4, (0, 2)),
        ("ticker", "u1", "match", 8, (0, 3, 2)),
        ("ticker", "u2", "match", 9, (1,)),
        ("pair", "u2", "timeout", 12, (1,)),
        ("pair", "u1", "timeout", 13, (3,)),
        ("ticker", "u2", "match", 47, (5,)),
    ]
    assert [e.seq for e in result.late] == [4]
    assert (
        result.detections
        == LocalBackend()
        .run([PairWithin(window=10), Ticker(period=7)], script, out_of_orderness=2)
        .detections
    )


def test_stop_with_savepoint_and_resume(tmp_path: Path) -> None:
    """Stop a checkpointed job with a savepoint mid-stream, resume it: nothing lost, nothing doubled."""
    from pyflink.datastream import StreamExecutionEnvironment

    from tests.backends.flink_jobs import file_sink, read_committed, slow_source
    from workbench.backends.flink import FlinkRun, make_environment, results_of
    from workbench.backends.flink.pipeline import detect
    from workbench.backends.flink.run import plan_records, run_offsets
    from workbench.backends.flink.savepoints import stop_with_savepoint

    rng = random.Random(7)
    script = random_script(rng, 300, keys=5)
    matchers = standard_matchers()
    runs = [FlinkRun(matchers, script, out_of_orderness=3)]
    hosts = [r.host() for r in runs]
    records = plan_records(runs, hosts, run_offsets(runs))
    out_dir, savepoints = tmp_path / "out", tmp_path / "savepoints"

    def build(savepoint: str | None, delay_s: float) -> StreamExecutionEnvironment:
        # Bundles of one record make the slow Python map hold the source back (back-pressure), so the
        # source is still running when the savepoint is taken.
        bundles = {"python.fn-execution.bundle.size": "1"} if delay_s else {}
        env = make_environment(2, checkpoint_interval_ms=300, savepoint=savepoint, config=bundles)
        outputs = detect(slow_source(env, records, delay_s), hosts, [0], out_of_orderness=3)
        file_sink(outputs, out_dir)
        return env

    t0 = time.monotonic()
    client = build(None, 0.01).execute_async("cep-savepoint-first")
    print("submitted", time.monotonic() - t0)
    deadline = time.monotonic() + 60

    def detections_committed() -> int:
        return len([o for _, o in read_committed(out_dir) if o.kind == "detection"])

    # Wait for a committed detection, not just any output: a first checkpoint can commit only
    # other records, and the savepoint must cut the run after some detections.
    while not detections_committed() and time.monotonic() < deadline:
        time.sleep(0.2)
    print("first output", time.monotonic() - t0)
    savepoint = stop_with_savepoint(client, savepoints)
    print("savepoint", time.monotonic() - t0)
    first = read_committed(out_dir)
    expected = LocalBackend().run(matchers, script, out_of_orderness=3)
    assert 0 < len([o for _, o in first if o.kind == "detection"]) < len(expected.detections)

    build(savepoint, 0.0).execute("cep-savepoint-resumed")
    print("resumed done", time.monotonic() - t0)
    (actual,) = results_of(runs, read_committed(out_dir))
    same_result(expected, actual)


@pytest.mark.flink
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_keys_equal_in_python_are_one_key_on_flink() -> None:
    from workbench.backends.flink import run_matchers
    from workbench.engine.nfa import Contiguity, SequencePattern, Stage

    pattern = SequencePattern("pair", (Stage("a", types=("a",)), Stage("b", contiguity=Contiguity.STRICT)))
    events = [
        {"type": "a", "key": 1, "t": 0},
        {"type": "b", "key": 1.0, "t": 1},
        {"type": "a", "key": True, "t": 2},
        {"type": "b", "key": 1, "t": 3},
        {"type": "a", "key": "1", "t": 4},
        {"type": "b", "key": "1", "t": 5},
    ]
    flink = run_matchers([pattern], events)
    local = LocalBackend().run([pattern], events)
    assert [(d.key, d.seqs) for d in flink.detections] == [(d.key, d.seqs) for d in local.detections]
    assert [d.seqs for d in flink.detections] == [(0, 1), (2, 3), (4, 5)]
