"""A match released by time passing carries the watermark that released it (Flink's ``advanceTime``).

Held back behind an older partial match by a skip strategy (FLINK-15873), or completed by a
trailing ``notFollowedBy`` whose window passed: Flink emits it when the watermark passes the
deadline, with the timestamp its operator advances the key's time to -- the key's next buffered
event, else the watermark. At the final flush of ``finish()`` (no finite watermark) the deadline.
"""

from __future__ import annotations

import math

import pytest

from workbench.engine.clock import release_time
from workbench.engine.events import Event
from workbench.engine.nfa import SequencePattern, SkipStrategy, Stage
from workbench.engine.runtime import Engine
from workbench.engine.sharding import ShardedEngine

LONG_MAX = 9223372036854775807
HELD = [
    {"type": "a", "time": 0, "key": "k", "id": 1},  # instance 1: never completes, ends at 10
    {"type": "a", "time": 1, "key": "k", "id": 2},
    {"type": "b", "time": 2, "key": "k", "id": 2},  # completes instance 2: held behind 1
]


def _held_pattern(flink_order: bool, skip: str = "skip_past_last_event") -> SequencePattern:
    return SequencePattern(
        "p",
        (Stage("a", types=("a",)), Stage("b", "e.id == matched('a')[0].id", types=("b",))),
        within_ms=10,
        skip=SkipStrategy.parse(skip),
        flink_order=flink_order,
    )


def _matches(engine: Engine | ShardedEngine) -> list[tuple[tuple[int, ...], float]]:
    return [(d.seqs, d.time) for d in engine.detections if d.kind == "match"]


def _buffered(flink_order: bool, extra: list[dict[str, object]] = ()) -> Engine:  # type: ignore[assignment]
    engine = Engine([_held_pattern(flink_order)], out_of_orderness=math.inf, trace=True)
    engine.process_many([*HELD, *extra])
    return engine


@pytest.mark.parametrize("flink_order", [False, True])
def test_the_released_match_carries_the_watermark(flink_order: bool) -> None:
    engine = _buffered(flink_order)
    engine.advance_time(5)
    assert _matches(engine) == []  # instance 1 is alive until 10
    engine.advance_time(50)
    assert _matches(engine) == [((1, 2), 50)]
    timeouts = [(d.seqs, d.time) for d in engine.detections if d.kind == "timeout"]
    assert timeouts == [((0,), 10)]  # a timed-out partial match keeps its deadline
    held = [r for r in engine.trace_records if r.kind == "held"]
    assert [r.detail["behind"] for r in held] == [1]
    detected = [r for r in engine.trace_records if r.kind == "detected"]
    assert [r.time for r in detected] == [50]


@pytest.mark.parametrize("flink_order", [False, True])
def test_the_keys_next_buffered_event_comes_first(flink_order: bool) -> None:
    # Flink advances the key's time to each buffered timestamp before the watermark
    engine = _buffered(
        flink_order, [{"type": "c", "time": 20, "key": "k"}, {"type": "c", "time": 15, "key": "j"}]
    )
    engine.advance_time(50)
    assert _matches(engine) == [((1, 2), 20)]


@pytest.mark.parametrize("flink_order", [False, True])
def test_the_final_watermark_of_a_bounded_input(flink_order: bool) -> None:
    engine = _buffered(flink_order)
    engine.advance_time(LONG_MAX)  # Flink's final watermark (Long.MAX_VALUE)
    assert _matches(engine) == [((1, 2), LONG_MAX)]
    engine = _buffered(flink_order)
    engine.finish()  # no finite watermark: the deadline that released it
    assert _matches(engine) == [((1, 2), 10)]


def test_a_derived_watermark_releases_at_the_deadline() -> None:
    # in-order input: the watermark follows the events, whatever their type or key; the deadline
    # is the first watermark that ends the older partial match (and unrelated events change nothing)
    engine = Engine([_held_pattern(False)])
    engine.process_many(HELD)
    engine.process({"type": "c", "time": 30, "key": "other"})
    assert _matches(engine) == [((1, 2), 10)]
    engine = Engine([_held_pattern(False)], out_of_orderness=5)
    engine.process_many([*HELD, {"type": "c", "time": 30, "key": "other"}])
    assert _matches(engine) == [((1, 2), 10)]


@pytest.mark.parametrize("shards", [1, 2, 3])
def test_shards_release_at_the_global_watermark(shards: int) -> None:
    # the single engine's clock passes 10 with the event of key 'other' (a derived watermark): a
    # shard that never sees that event must not wait for the closed watermark of advance_time
    events = [*HELD, {"type": "c", "time": 30, "key": "other"}]
    sharded = ShardedEngine([_held_pattern(False)], shards)
    sharded.process_many(events)
    sharded.advance_time(50)
    single = Engine([_held_pattern(False)])
    single.process_many(events)
    single.advance_time(50)
    assert _matches(sharded) == _matches(single) == [((1, 2), 10)]


def test_a_trailing_not_followed_by_completes_at_the_watermark() -> None:
    pattern = SequencePattern(
        "nf",
        (Stage("a", types=("a",)), Stage("b", types=("b",), negated=True)),
        within_ms=10,
    )
    engine = Engine([pattern], out_of_orderness=math.inf)
    engine.process({"type": "a", "time": 0, "key": "k"})
    assert engine.advance_time(9) == []
    assert [(d.seqs, d.time) for d in engine.advance_time(25)] == [((0,), 25)]


def test_release_time_rule() -> None:
    buffer = [(30.0, 0, Event("a", 30, "k")), (20.0, 1, Event("a", 20, "j")), (60.0, 2, Event("a", 60, "k"))]
    assert release_time((50, True), buffer, "k", 10) == 30
    assert release_time((50, True), buffer, "x", 10) == 50
    assert release_time((math.inf, True), [], "k", 10) == 10
    assert release_time((math.inf, True), buffer, "k", 10) == 30
    assert release_time((50, False), buffer, "k", 10) == 10  # derived: the deadline
