"""``Engine(order_by=...)``: equal-time events in the order of fields or a key (Flink's EventComparator)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.clock import Rank, tie_order
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.nfa import Contiguity, SequencePattern, SkipStrategy, Stage
from workbench.engine.runtime import Engine, run
from workbench.engine.sharding import ShardedEngine
from workbench.errors import CepError


def _pattern(skip: str = "no_skip", contiguity: Contiguity = Contiguity.STRICT) -> SequencePattern:
    """``a`` then ``b`` with a larger ``v``: both the order and the values of ties matter."""
    return SequencePattern(
        "p",
        (
            Stage("a", types=("a",)),
            Stage("b", "e.v > matched('a')[0].v", contiguity, types=("b",)),
        ),
        skip=SkipStrategy.parse(skip),
    )


def _rows(ds: Sequence[Detection]) -> list[tuple[object, ...]]:
    return [(d.pattern, d.key, d.kind, d.time, d.seqs) for d in ds]


def test_ties_follow_the_field_not_arrival() -> None:
    events = [
        {"type": "b", "time": 5, "key": "k", "v": 9, "rank": 2},
        {"type": "a", "time": 5, "key": "k", "v": 1, "rank": 1},
    ]
    assert run(_pattern(), events).detections == []  # arrival order: b before a
    got = run(_pattern(), events, order_by="rank").detections
    assert [d.seqs for d in got] == [(1, 0)]


@pytest.mark.parametrize(
    "order_by",
    [["rank", "v"], lambda e: (e["rank"], e["v"])],
    ids=["fields", "key-function"],
)
def test_later_fields_break_ties_of_earlier_ones(order_by: object) -> None:
    events = [
        {"type": "b", "time": 1, "key": "k", "v": 3, "rank": 0},
        {"type": "a", "time": 1, "key": "k", "v": 2, "rank": 0},
        {"type": "a", "time": 1, "key": "k", "v": 1, "rank": 0},
    ]
    got = run(_pattern(), events, order_by=order_by).detections  # type: ignore[arg-type]
    assert [d.seqs for d in got] == [(1, 0)]  # a(v=1), a(v=2), b(v=3): strict next pairs a(2) b


def test_equal_time_events_wait_until_time_passes_them() -> None:
    engine = Engine([_pattern()], order_by="rank")
    assert engine.process({"type": "b", "time": 5, "key": "k", "v": 9, "rank": 2}) == []
    assert engine.process({"type": "a", "time": 5, "key": "k", "v": 1, "rank": 1}) == []
    out = engine.process({"type": "c", "time": 6, "key": "k"})  # time passes 5: the tie is sorted
    assert [d.seqs for d in out] == [(1, 0)]


def test_advance_time_releases_the_ties_at_the_watermark() -> None:
    engine = Engine([_pattern()], order_by="rank")
    engine.process({"type": "b", "time": 5, "key": "k", "v": 9, "rank": 2})
    engine.process({"type": "a", "time": 5, "key": "k", "v": 1, "rank": 1})
    assert engine.advance_time(4) == []
    assert [d.seqs for d in engine.advance_time(5)] == [(1, 0)]


def test_finish_releases_the_last_ties() -> None:
    engine = Engine([_pattern()], order_by="rank")
    engine.process({"type": "b", "time": 5, "key": "k", "v": 9, "rank": 2})
    engine.process({"type": "a", "time": 5, "key": "k", "v": 1, "rank": 1})
    assert [d.seqs for d in engine.finish()] == [(1, 0)]


def test_missing_values_sort_last_and_ties_keep_arrival_order() -> None:
    key = tie_order("r")
    assert key is not None
    events = [
        Event("x", 1, fields={}, seq=0),
        Event("x", 1, fields={"r": 2}, seq=1),
        Event("x", 1, fields={"r": math.nan}, seq=2),
        Event("x", 1, fields={"r": 1}, seq=3),
        Event("x", 1, fields={"r": 2}, seq=4),
        Event("x", 1, fields={"r": None}, seq=5),
    ]
    assert [e.seq for e in sorted(events, key=key)] == [3, 1, 4, 0, 2, 5]


def test_type_and_key_order_by_the_event_itself() -> None:
    key = tie_order(["type", "key"])
    assert key is not None
    events = [Event("b", 1, "k1", seq=0), Event("a", 1, "k2", seq=1), Event("a", 1, "k1", seq=2)]
    assert [e.seq for e in sorted(events, key=key)] == [2, 1, 0]


@pytest.mark.parametrize("bad", ["", "  ", "time", "seq", [], ["price", 3]])
def test_a_bad_field_name_is_a_cep_error_naming_it(bad: object) -> None:
    with pytest.raises(CepError, match="order_by"):
        Engine([], order_by=bad)  # type: ignore[arg-type]


def test_order_by_needs_event_time() -> None:
    with pytest.raises(CepError, match="processing"):
        Engine([], time_mode="processing", order_by="v")


def test_values_that_cannot_be_ordered_name_the_field() -> None:
    events = [{"type": "a", "time": 1, "key": "k", "r": "x"}, {"type": "a", "time": 1, "key": "k", "r": 2}]
    with pytest.raises(CepError, match="'r' values"):
        run(_pattern(), events, order_by="r")


def test_a_failing_key_function_is_a_cep_error_naming_the_event() -> None:
    events = [{"type": "a", "time": 1, "key": "k"}, {"type": "a", "time": 1, "key": "k"}]
    with pytest.raises(CepError, match="event #0"):
        run(_pattern(), events, order_by=lambda e: e["nope"])


def test_a_snapshot_keeps_the_held_ties() -> None:
    engine = Engine([_pattern()], order_by="rank")
    engine.process({"type": "b", "time": 5, "key": "k", "v": 9, "rank": 2})
    engine.process({"type": "a", "time": 5, "key": "k", "v": 1, "rank": 1})
    again = Engine([_pattern()], order_by="rank")
    again.restore(engine.snapshot())
    assert [d.seqs for d in again.finish()] == [(1, 0)]


# ---------------------------------------------------------------------- against a brute-force oracle
_event = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["a", "b", "c"]),
        "time": st.integers(0, 4),
        "key": st.sampled_from(["k1", "k2"]),
        "v": st.integers(0, 3),
        "r": st.one_of(st.none(), st.integers(0, 2)),
    }
)


def _oracle(
    patterns: Sequence[SequencePattern], events: Sequence[dict[str, object]], fields: Sequence[str]
) -> list[Detection]:
    """Sort by (time, fields with missing last, arrival), then run without ties to resolve."""

    def rank(i: int) -> tuple[object, ...]:
        e = events[i]
        values = [(e.get(f) is None, e.get(f) or 0) for f in fields]
        return (e["time"], *values, i)

    order = sorted(range(len(events)), key=rank)
    stamped = [
        Event(str(events[i]["type"]), events[i]["time"], events[i]["key"], events[i], i) for i in order
    ]  # type: ignore[arg-type]
    return run(list(patterns), stamped).detections


@settings(max_examples=150, deadline=None)
@given(
    events=st.lists(_event, max_size=14),
    fields=st.sampled_from([["r"], ["r", "v"], ["v", "r"], ["type"]]),
    skip=st.sampled_from(["no_skip", "skip_past_last_event", "skip_to_next"]),
    contiguity=st.sampled_from(list(Contiguity)),
    in_order=st.booleans(),
)
def test_order_by_equals_sorting_first(
    events: list[dict[str, object]], fields: list[str], skip: str, contiguity: Contiguity, in_order: bool
) -> None:
    patterns = [_pattern(skip, contiguity)]
    if in_order:  # in-order arrival: the default clock (out-of-orderness 0)
        events = sorted(events, key=lambda e: e["time"])  # type: ignore[arg-type, return-value]
        got = run(patterns, events, order_by=fields).detections
    else:  # any arrival order, nothing late
        got = run(patterns, events, order_by=fields, out_of_orderness=math.inf).detections
    want = _oracle(patterns, events, fields)
    assert sorted(_rows(got), key=repr) == sorted(_rows(want), key=repr)


@settings(max_examples=60, deadline=None)
@given(events=st.lists(_event, max_size=14), shards=st.integers(1, 3))
def test_sharded_engine_orders_ties_the_same(events: list[dict[str, object]], shards: int) -> None:
    events = sorted(events, key=lambda e: e["time"])  # type: ignore[arg-type, return-value]
    sharded = ShardedEngine([_pattern("no_skip", Contiguity.RELAXED)], shards, order_by=["r", "v"])
    sharded.process_many(events)
    sharded.finish()
    single = run([_pattern("no_skip", Contiguity.RELAXED)], events, order_by=["r", "v"])
    assert sorted(_rows(sharded.detections), key=repr) == sorted(_rows(single.detections), key=repr)


def test_rank_orders_lexicographically() -> None:
    make: Callable[[tuple[object, ...]], Rank] = Rank
    assert make((1, 2)) < make((1, 3))
    assert not make((1, 3)) < make((1, 2))
    assert not make((1, 2)) < make((1, 2))
    assert make((1, None)) < make((2, 0))


def test_a_key_function_reading_a_field_as_an_attribute_is_told_how_to_read_it() -> None:
    events = [
        {"type": "a", "time": 1, "key": "k", "rank": 2},
        {"type": "a", "time": 1, "key": "k", "rank": 1},
    ]
    with pytest.raises(CepError, match=r"AttributeError: .*read it with e\['rank'\]"):
        run(_pattern(), events, order_by=lambda e: e.rank)
