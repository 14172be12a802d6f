"""Values an engine cannot use give an EventError naming the event and field, or the right result."""

from __future__ import annotations

import math

import pytest

from tests.engine.feeding import feed_all
from workbench.engine.events import Event
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.runtime import Engine
from workbench.errors import CepError, EventError
from workbench.language import compile_pattern, compile_text


def engine(text: str) -> Engine:
    return Engine([d.pattern for d in compile_text(text)])


def test_two_hundred_where_clauses_compile_and_match_like_their_conjunction() -> None:
    wheres = " ".join(f"where e.x > {i}" for i in range(200))
    e = engine(f"sequence s\n    begin a: a {wheres}\n")
    found = e.process_many([{"type": "a", "time": 1, "x": 199}, {"type": "a", "time": 2, "x": 200}])
    assert [d.events[0].time for d in found] == [2]


def test_a_deeply_nested_condition_still_matches() -> None:
    deep = "(" * 90 + "e.x > 1" + ")" * 90
    e = engine(f"sequence s\n    begin a: a where {deep} and not ({deep} and e.x > 5)\n")
    found = e.process_many([{"type": "a", "time": t, "x": x} for t, x in enumerate([0, 3, 9])])
    assert [d.events[0].fields["x"] for d in found] == [3]


AGG = """
sequence s
    aggregate total = sum(a.v)
    begin a: a one or more
    followed by b: b where total > 1
"""


@pytest.mark.parametrize("bad", ["text", [1], {"x": 1}])
@pytest.mark.parametrize("compiled", [True, False])
def test_an_aggregate_skips_a_wrong_typed_value_and_records_it(bad: object, compiled: bool) -> None:
    e = Engine([NFAMatcher(compile_pattern(AGG), compiled=compiled)])
    found = e.process_many(
        [{"type": "a", "time": 1, "v": 2}, {"type": "a", "time": 2, "v": bad}, {"type": "b", "time": 3}]
    )
    # the event is taken (its stage has no condition); the sum skips its value: total is 2
    assert sorted(tuple(x.seq for x in d.events) for d in found) == [(0, 1, 2), (0, 2)]
    (fault,) = e.errors
    assert fault.where == "aggregate 'total' (sum of 'v')"
    assert (fault.kind, fault.first_seq) == ("TypeError", 1)
    assert f"cannot take {type(bad).__name__} {bad!r}" in fault.message


def test_an_aggregate_skips_blank_values() -> None:
    e = engine(AGG)
    found = e.process_many(
        [{"type": "a", "time": 1, "v": None}, {"type": "a", "time": 2, "v": 2}, {"type": "b", "time": 3}]
    )
    assert found
    assert all(d.kind == "match" for d in found)


def test_an_accumulator_over_an_unhashable_value_names_the_event() -> None:
    e = engine(
        "group g\n    on tick(k as K)\n    @or {\n        @size(2, 1, MapCounter(e.name)) c: tick(k = K)\n}"
    )
    with pytest.raises(EventError, match=r"channel 'c': MapCounter cannot take \[1\]") as err:
        e.process_many(
            [
                {"type": "tick", "time": 0, "k": "a", "name": "x"},
                {"type": "tick", "time": 1, "k": "a", "name": [1]},
            ]
        )
    assert err.value.position == 1


@pytest.mark.parametrize("bad", [math.nan, "10", True, b"1", [5]])
def test_a_watermark_that_is_no_number_is_refused_by_name(bad: object) -> None:
    engine = Engine([d.pattern for d in compile_text("sequence s\n    begin a: a\n    next b: b\n")])
    engine.process({"type": "a", "time": 1})
    with pytest.raises(CepError, match=r"advance_time\(\): the watermark must be a number"):
        engine.advance_time(bad)  # type: ignore[arg-type]
    with pytest.raises(CepError, match=r"finish\(\): the watermark must be a number"):
        engine.finish(bad)  # type: ignore[arg-type]
    assert engine.process({"type": "b", "time": 2})  # the engine still works


@pytest.mark.parametrize("bad", [math.nan, -1, "5", None, True])
def test_an_out_of_orderness_that_is_no_number_is_refused(bad: object) -> None:
    with pytest.raises(CepError, match="out_of_orderness must be a number of milliseconds >= 0"):
        Engine([], out_of_orderness=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("one_by_one", [True, False])
def test_a_stamped_event_with_a_time_that_is_no_finite_number_is_refused_by_position(
    bad: float, one_by_one: bool
) -> None:
    # an Event that already carries its seq skips stamping; its time is still checked
    engine = Engine([d.pattern for d in compile_text("sequence s\n    begin a: a\n    next b: b\n")])
    events = [Event("a", 1, "k", {}, 0), Event("a", bad, "k", {}, 1), Event("b", 2, "k", {}, 2)]

    def feed() -> None:
        if one_by_one:
            for event in events:
                engine.process(event)
        else:
            engine.process_many(events)

    with pytest.raises(EventError, match=r"event #1, field 'time': time must be finite"):
        feed()
    assert engine.detections == []
    assert engine.watermark == 1


@pytest.mark.parametrize("built", [True, False])
def test_a_nan_key_is_the_key_none_as_in_a_dataframe(built: bool) -> None:
    # distinct NaN objects compare unequal, so they would otherwise split one key's events apart
    engine = Engine([d.pattern for d in compile_text("sequence s\n    begin a: a\n    followed by b: b\n")])
    raw = [("a", 1, float("nan")), ("b", 2, float("nan")), ("b", 3, None)]
    events = [Event(t, time, k) if built else {"type": t, "time": time, "key": k} for t, time, k in raw]
    engine.process_many(events)
    engine.finish()
    assert [(d.key, d.seqs) for d in engine.detections] == [(None, (0, 1))]


@pytest.mark.parametrize("one_by_one", [True, False])
@pytest.mark.parametrize("built", [True, False])
def test_a_numpy_time_is_the_same_built_in_number(one_by_one: bool, built: bool) -> None:
    # a DataFrame row hands over numpy scalars: np.int64(2) is the time 2, np.float32(1.5) is 1.5
    np = pytest.importorskip("numpy")
    engine = Engine([d.pattern for d in compile_text("sequence s\n    begin a: a\n    followed by b: b\n")])
    raw = [("a", np.float32(1.5), 0), ("b", np.int64(2), 1)]
    events: list[Event | dict[str, object]] = [
        Event(t, time, "k", {}, seq) if built else {"type": t, "time": time, "key": "k"}
        for t, time, seq in raw
    ]
    (d,) = feed_all(engine, events, per_event=one_by_one)
    assert [(type(e.time), e.time) for e in d.events] == [(float, 1.5), (int, 2)]
    with pytest.raises(EventError, match="time must be a number of milliseconds, got bool"):
        engine.process({"type": "a", "time": np.bool_(True), "key": "k"})


@pytest.mark.parametrize("fields", [None, [("x", 1)], "x=1"])
def test_a_built_event_whose_fields_are_no_mapping_is_refused(fields: object) -> None:
    e = engine("group g instance 'k' at 0\n    @or { c: a }")
    with pytest.raises(EventError, match="event fields must be a mapping") as err:
        e.process(Event("a", 0, "k", fields))  # type: ignore[arg-type]
    assert err.value.position == 0


def test_an_unhashable_instance_key_is_refused_where_it_is_written() -> None:
    with pytest.raises(CepError, match=r"line 1, column 18: an instance key is a string, .* not a list"):
        compile_text("group g instance [1] at 0 @or { c: a }")


@pytest.mark.parametrize("compiled", [True, False])
def test_a_skipped_value_leaves_a_spread_as_it_was(compiled: bool) -> None:
    # Welford's update counts the value before it fails on it: the aggregate must come back unchanged
    text = """
sequence s
    aggregate spread = var(b.v)
    begin a: a
    followed by b: b one or more
    followed by c: c where spread == 2.0
"""
    e = Engine([NFAMatcher(compile_pattern(text), compiled=compiled)])
    rows = [("a", None), ("b", 1), ("b", "x"), ("b", 3), ("c", None)]
    found = e.process_many([{"type": t, "time": i, "v": v} for i, (t, v) in enumerate(rows)])
    assert sorted(tuple(x.seq for x in d.events) for d in found) == [(0, 1, 2, 3, 4)]
    assert [f.first_seq for f in e.errors] == [2]


@pytest.mark.parametrize("built", [False, True])
def test_a_str_subclass_type_is_its_text(built: bool) -> None:
    # (numpy's str_, from an object column, was refused: "event type must be a string")
    import numpy as np

    e = engine("sequence s\n    begin a: price\n    next b: price\n")
    rows = [{"type": np.str_("price"), "time": t, "key": "k"} for t in (1, 2)]
    events = [Event(r["type"], r["time"], "k") for r in rows] if built else rows
    found = e.process_many(events)
    assert [d.seqs for d in found] == [(0, 1)]
    assert all(type(x.type) is str for x in found[0].events)
    with pytest.raises(EventError, match="event type must be a string"):
        e.process({"type": 5, "time": 3, "key": "k"})


@pytest.mark.parametrize(
    ("text", "hinted"), [("2026-01-01T08:00:00", True), ("2026-01-01", True), ("soon", False)]
)
def test_a_time_written_as_text_is_refused_and_a_date_says_how_to_read_it(text: str, hinted: bool) -> None:
    with pytest.raises(EventError, match="time must be a number of milliseconds") as err:
        Engine([]).process({"type": "a", "time": text})
    assert ("--time-unit date" in str(err.value)) is hinted
