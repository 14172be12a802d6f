"""KeyedDriver under a simulated distributed runtime equals the local engine, whatever the interleaving."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from tests.backends.matchers import PairWithin, Ticker, standard_matchers
from tests.backends.simulate import simulate
from tests.backends.strategies import random_options, random_script
from workbench.backends import AdvanceTime, LocalBackend
from workbench.backends.keyed import KeyedDriver, KeyRecord
from workbench.backends.replay import Bound, plan_replay


def assert_same_records(expected: Sequence[Any], actual: Sequence[Any]) -> None:
    """Equal records, in the same order per key and by time (see ``keyed._parent`` for ties)."""
    assert sorted(map(repr, expected)) == sorted(map(repr, actual))
    keys = {r.key for r in expected}
    for key in keys:
        assert [r for r in expected if r.key == key] == [r for r in actual if r.key == key]
    assert [r.time for r in expected] == [r.time for r in actual]


@pytest.mark.parametrize("seed", range(200))
def test_random_scripts_match_local(seed: int) -> None:
    rng = random.Random(seed)
    script = random_script(rng, rng.randint(0, 60))
    options = random_options(rng)
    expected = LocalBackend().run(standard_matchers(), script, **options)
    actual = simulate(standard_matchers(), script, rng=rng, **options)
    assert_same_records(expected.detections, actual.detections)
    assert_same_records(expected.reactions, actual.reactions)
    assert expected.late == actual.late
    assert sorted(map(repr, expected.trace)) == sorted(map(repr, actual.trace))


def test_final_flush_stops_recurring_timers() -> None:
    script = [{"type": "a", "time": 1, "key": "k"}, {"type": "a", "time": 30, "key": "k"}]
    result = simulate([Ticker(period=7)], script, rng=random.Random(0))
    assert [(d.time, d.extra["final"]) for d in result.detections] == [(8, False), (37, True)]
    assert result.detections == LocalBackend().run([Ticker(period=7)], script).detections


def test_horizon_keeps_later_items_unprocessed() -> None:
    script = [{"type": "a", "time": 1}, {"type": "a", "time": 5}, {"type": "b", "time": 40}]
    local = LocalBackend().run([PairWithin(window=10)], script, out_of_orderness=30, until=12)
    sim = simulate([PairWithin(window=10)], script, rng=random.Random(1), out_of_orderness=30, until=12)
    assert [(d.kind, d.seqs) for d in local.detections] == [("timeout", (0,))]
    assert local.detections == sim.detections


def test_plan_marks_late_events_like_the_engine() -> None:
    script = [
        {"type": "a", "time": 5},
        {"type": "a", "time": 4},
        AdvanceTime(10),
        {"type": "a", "time": 10},
        {"type": "a", "time": 11},
    ]
    plan = plan_replay(script)
    assert [late for _, late in plan.events] == [False, True, True, False]
    assert [e.seq for e, _ in plan.events] == [0, 1, 2, 3]
    assert plan.final_after == Bound(11, False)
    assert plan_replay(script, out_of_orderness=1).events[1][1] is False


def test_events_nobody_uses_are_not_buffered() -> None:
    host = KeyedDriver([PairWithin()])
    plan = plan_replay([{"type": "zzz", "time": 1}])
    assert not host.wants(plan.events[0][0])
    assert KeyRecord().is_empty()


def test_key_state_survives_an_idle_matcher_before_another() -> None:
    """The first matcher of an event turns idle; the second one's state must live on (both hosts)."""
    matchers = [PairWithin(), PairWithin("pair-bc", 5, "b", "c")]
    script = [{"type": "b", "time": 2}, {"type": "c", "time": 20}]
    local = LocalBackend().run(matchers, script)
    sim = simulate(matchers, script, rng=random.Random(2))
    assert [(d.pattern, d.kind, d.time) for d in local.detections] == [("pair-bc", "timeout", 7)]
    assert local.detections == sim.detections


@pytest.mark.parametrize("seed", range(150))
def test_in_order_batches_equal_accept_then_advance(seed: int) -> None:
    """``advance_in_order`` gives the outputs and leaves the record that ``accept`` + ``advance`` do."""
    rng = random.Random(seed)
    options = random_options(rng)
    plan = plan_replay(
        random_script(rng, rng.randint(0, 60)), until=options["until"], finish=options["finish"]
    )
    drivers = [
        KeyedDriver(
            standard_matchers(), horizon=plan.horizon, final_after=plan.final_after, tracing=options["trace"]
        )
        for _ in range(2)
    ]
    by_key: dict[Any, list[tuple[Any, int]]] = {}
    for position, (event, late) in enumerate(plan.events):
        if not late and drivers[0].wants(event):
            by_key.setdefault(event.key, []).append((event, position))
    for key, events in by_key.items():
        records = [KeyRecord(key=key), KeyRecord(key=key)]
        while events:
            cut = rng.randint(1, len(events))
            batch, events = events[:cut], events[cut:]
            for event, position in batch:
                drivers[0].accept(records[0], event, position)
            expected, _ = drivers[0].advance(records[0], key, batch[-1][0].time, through=True)
            actual = drivers[1].advance_in_order(records[1], key, batch)
            assert list(map(repr, actual)) == list(map(repr, expected))
            assert repr(records[1]) == repr(records[0])
