"""The Flink operator itself (``MatcherFunction``) under a simulated Flink runtime equals the local engine.

The runtime here behaves as Flink's keyed operator does where it matters: it keeps one state per
key (pickled when durable), fires a key's event-time timers once the watermark reaches them, in
any order across keys, and its watermark lags the records' timestamps by any amount. It feeds the
operator the job's real input records, per event or batched per key (``plan_records(batch=)``),
so the operator's immediate processing of in-order input, the batches, the grouped outputs and
both key stores are checked against the local engine on random scripts.
"""

from __future__ import annotations

import math
import pickle
import random
from collections.abc import Hashable, Sequence
from typing import Any

import pytest

from tests.backends.matchers import standard_matchers
from tests.backends.strategies import random_options, random_script
from tests.backends.test_keyed import assert_same_records
from workbench.backends import LocalBackend
from workbench.engine.runtime import RunResult

pytestmark = [pytest.mark.flink, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

END = 2**63 - 1


class FakeState:
    """A keyed ``ValueState`` holding pickled values, per the runtime's current key (its own, as Flink's)."""

    def __init__(self, runtime: FakeRuntime) -> None:
        self.runtime = runtime
        self.values: dict[str, bytes] = {}

    def value(self) -> object:
        blob = self.values.get(self.runtime.key)
        return None if blob is None else pickle.loads(blob)

    def update(self, value: object) -> None:
        self.values[self.runtime.key] = pickle.dumps(value)

    def clear(self) -> None:
        self.values.pop(self.runtime.key, None)


class FakeRuntime:
    """Context, timer service and runtime context of one operator instance."""

    def __init__(self) -> None:
        self.key = ""
        self.watermark: int | None = None
        self.timers: set[tuple[int, str]] = set()
        self.states: dict[str, FakeState] = {}

    def timer_service(self) -> FakeRuntime:
        return self

    def current_watermark(self) -> int | None:
        return self.watermark

    def register_event_time_timer(self, t: int) -> None:
        self.timers.add((t, self.key))

    def get_current_key(self) -> str:
        raise AssertionError("the operator must not ask (wrong in thread mode at p > 1)")

    def get_state(self, descriptor: Any) -> FakeState:
        return self.states.setdefault(descriptor.name, FakeState(self))


def run_operator(
    matchers: Sequence[Any],
    script: Sequence[Any],
    *,
    rng: random.Random,
    durable: bool,
    batch: int,
    hold: int | None = None,
    **options: Any,
) -> tuple[RunResult, FakeRuntime, Any]:
    """One run through the real operator, fed as Flink would feed it (random watermark lag).

    ``hold``: the operator's, its outputs grouped (``None``: random, when grouped and not durable).
    The operator's output records are on ``operator.records`` (for a test that counts them).
    """
    from workbench.backends.flink.function import MatcherFunction, record_key
    from workbench.backends.flink.run import FlinkRun, plan_records, results_of, run_offsets

    run = FlinkRun(matchers, script, **options)
    hosts, offsets = [run.host()], run_offsets([run])
    bound = run.out_of_orderness
    records = plan_records([run], hosts, offsets, batch=batch if bound == 0 else 0)
    grouped = hold is not None or rng.random() < 0.5
    hold = hold if hold is not None else rng.choice((0, 1, 4, 1000)) if grouped and not durable else 0
    operator = MatcherFunction(hosts, offsets, bound=bound, durable=durable, grouped=grouped, hold=hold)
    runtime = FakeRuntime()
    operator.open(runtime)
    outputs: list[Any] = []

    def fire(watermark: int) -> None:
        runtime.watermark = watermark
        while due := sorted({k for t, k in runtime.timers if t <= watermark}):
            runtime.key = rng.choice(due)  # why random: Flink fires different keys in any order
            t = min(t for t, k in runtime.timers if k == runtime.key and t <= watermark)
            runtime.timers.discard((t, runtime.key))
            outputs.extend(operator.on_timer(t, runtime))

    max_ts = -(2**63)
    for record in records:
        runtime.key = record_key(record)
        outputs.extend(operator.process_element(record, runtime))
        max_ts = max(max_ts, record[3])
        if rng.random() < 0.4 and math.isfinite(bound):
            target = max_ts - math.ceil(bound) - 1
            if runtime.watermark is None or target > runtime.watermark:
                low = target if runtime.watermark is None else runtime.watermark
                fire(rng.randint(low, target))
    fire(END)
    operator.records = outputs
    (result,) = results_of([run], outputs)
    return result, runtime, operator


@pytest.mark.parametrize("seed", range(120))
def test_operator_matches_local(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.backends.flink import run as flink_run

    monkeypatch.setattr(flink_run, "BATCH_LIMIT", 3)  # why: split a key's stretch into several batches
    rng = random.Random(seed)
    script = random_script(rng, rng.randint(0, 60))
    options = random_options(rng)
    expected = LocalBackend().run(standard_matchers(), script, **options)
    actual, _, _ = run_operator(
        standard_matchers(),
        script,
        rng=rng,
        durable=seed % 2 == 0,
        batch=rng.choice((0, 1, 5, 50)),
        **options,
    )
    assert_same_records(expected.detections, actual.detections)
    assert_same_records(expected.reactions, actual.reactions)
    assert expected.late == actual.late
    assert sorted(map(repr, expected.trace)) == sorted(map(repr, actual.trace))


@pytest.mark.parametrize("durable", [True, False])
def test_forgotten_keys_leave_nothing_in_either_store(durable: bool) -> None:
    from tests.backends.test_flink_state import idle_key_events, login_then_trade

    events = idle_key_events(300)
    result, runtime, operator = run_operator(
        [login_then_trade()], events, rng=random.Random(3), durable=durable, batch=40, forget_idle_keys=True
    )
    assert len([d for d in result.detections if d.kind == "match"]) == 150
    assert operator._state.records == {}
    assert len(runtime.states) == (2 if durable else 1)
    assert all(state.values == {} for state in runtime.states.values())


def test_equal_keys_share_one_batch_and_one_flink_key() -> None:
    from workbench.backends.flink.function import EventBatch, record_key
    from workbench.backends.flink.run import FlinkRun, batch_records

    events: list[dict[str, Hashable]] = [
        {"type": "a", "time": 1, "key": 1},
        {"type": "a", "time": 2, "key": 1.0},
        {"type": "a", "time": 2, "key": "1"},
        {"type": "a", "time": 3, "key": True},
    ]
    run = FlinkRun(standard_matchers(), events)
    records = batch_records(0, run.plan.events, 0, 10)
    assert len(records) == 2
    assert len({record_key(r) for r in records}) == 2
    first = records[0][1]
    assert isinstance(first, EventBatch)
    assert [position for *_, position in first.items] == [0, 1, 3]
    assert [e.seq for e, _, _ in first.events()] == [0, 1, 3]


def test_batches_go_out_by_earliest_on_time_event_and_keep_each_keys_order() -> None:
    from workbench.backends.flink.run import FlinkRun, batch_records

    rng = random.Random(7)
    events = [{"type": "a", "time": t // 3, "key": rng.choice("pqrs")} for t in range(200)]
    run = FlinkRun(standard_matchers(), events)
    records = batch_records(0, run.plan.events, 0, 17)
    stamps = [r[3] for r in records]
    assert stamps == sorted(stamps)
    positions: dict[Hashable, list[int]] = {}
    for record in records:
        for item in record[1].items:  # type: ignore[union-attr]
            positions.setdefault(item[2], []).append(item[6])
    assert sorted(p for ps in positions.values() for p in ps) == list(range(200))
    assert all(ps == sorted(ps) for ps in positions.values())


@pytest.mark.parametrize("seed", range(6))
def test_held_outputs_go_out_together_at_the_end_or_when_enough(seed: int) -> None:
    from tests.backends.test_flink_state import login_then_trade
    from workbench.backends.flink.function import HeldOutputs

    events = [
        {"type": t, "key": f"k{k}", "t": 10 * i + k}
        for i in range(40)
        for k in range(5)
        for t in ("login", "trade")
    ]
    expected = LocalBackend().run([login_then_trade()], events)
    matches = len(expected.detections)
    assert matches > 100
    for hold, most in ((10**6, 1), (100, matches // 100 + 1)):
        rng = random.Random(seed)
        actual, _, operator = run_operator(
            [login_then_trade()], events, rng=rng, durable=False, batch=rng.choice((1, 7, 50)), hold=hold
        )
        assert_same_records(expected.detections, actual.detections)
        records = [r for r in operator.records if isinstance(r[1], HeldOutputs)]
        assert records == operator.records  # only held records, and few of them
        assert 1 <= len(records) <= most
