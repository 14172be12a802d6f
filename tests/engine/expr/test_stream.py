"""The key's stream in conditions: ``prev(e, n)``, ``first/last(a, n)`` and sliding windows.

* Text, tree and printer agree (round trip), and malformed uses are reported where they are.
* The evaluator reads the stream the matcher points it at, and is NULL without one.
* Through the engine, ``prev(e, n)`` and the windows agree with brute-force oracles computed here
  from the event list (Hypothesis), per key, with other event types in between, with ties in time
  and NULL values; a snapshot taken midway restores the stream.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.feeding import across_a_snapshot
from workbench.engine import run
from workbench.engine.events import Event
from workbench.engine.expr import compile_expr, parse_expr, print_expr
from workbench.engine.expr.ir import Attr, Name, Offset, Window
from workbench.engine.expr.stream import KeyStream, format_size, reading, window_marks
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.pattern import SequencePattern, Stage
from workbench.engine.nfa.streamed import StreamMatcher, compile_sequence
from workbench.engine.reactions.patterns import Channel, Initiator, ReactionGroup
from workbench.engine.runtime import Engine
from workbench.errors import CepError, ExpressionError

# ---------------------------------------------------------------------------- text and trees


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("prev(e, 1)", Offset(1)),
        ("prev(e, 3).price", Attr(Offset(3), "price")),
        ("avg(e.price over last 5min)", Window("avg", Attr(Name("e"), "price"), 300_000, "ms")),
        ("count(e over last 100 events)", Window("count", Name("e"), 100, "events")),
        ("max(e.x over last 1.5s)", Window("max", Attr(Name("e"), "x"), 1500, "ms")),
        ("sum(e.x over last 250ms)", Window("sum", Attr(Name("e"), "x"), 250, "ms")),
    ],
)
def test_text_reads_into_the_stream_nodes(text: str, tree: object) -> None:
    assert parse_expr(text) == tree
    assert parse_expr(print_expr(parse_expr(text))) == tree


@pytest.mark.parametrize(
    "text",
    [
        "e.price > 1.1 * avg(e.price over last 5min) and prev(e, 2) is not None",
        "count(e over last 10 events) >= 3 or min(e.x over last 2h) < prev(e, 1).x",
        "std((e.x if e.x > 0 else -e.x) over last 1d) > 1",
        "last(matched('a'), 2).price < first(matched('a'), 3).price",
        "prev(matched('a'), 2).price > 0",
    ],
)
def test_printing_is_a_fixed_point(text: str) -> None:
    tree = parse_expr(text)
    printed = print_expr(tree)
    assert parse_expr(printed) == tree
    assert print_expr(parse_expr(printed)) == printed


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("prev(e, 0)", r"prev\(e, n\) takes a constant whole number", 9),
        ("prev(e, n)", r"prev\(e, n\) takes a constant whole number", 9),
        ("prev(e, 1.5)", r"prev\(e, n\) takes a constant whole number", 9),
        ("(e.x over last 5min)", "follows the only argument of an aggregate", 6),
        ("len(e.x over last 5min)", "applies to one argument of", 1),
        ("avg(e.x over last 0 events)", "size is positive", 1),
        ("avg(x over last 5min)", "a value of the current event only", 5),
        ("avg(matched('a') over last 5min)", "a value of the current event only", 5),
        ("avg(prev(e, 1).x over last 5min)", "a value of the current event only", 5),
    ],
)
def test_malformed_uses_are_reported_where_they_are(text: str, message: str, column: int) -> None:
    with pytest.raises(ExpressionError, match=message) as info:
        parse_expr(text)
    assert info.value.span is not None
    assert info.value.span.column == column


def test_only_the_exact_window_shape_is_rewritten() -> None:
    assert window_marks("e.over > 1") == ("e.over > 1", {})
    assert window_marks("f('over last 5min')")[1] == {}
    assert window_marks("avg(e.x over last 5 lightyears)")[1] == {}
    with pytest.raises(ExpressionError):
        parse_expr("avg(e.x over last 5 lightyears)")
    assert format_size(86_400_000, "ms") == "1d"
    assert format_size(1.5, "ms") == "1.5ms"


# ---------------------------------------------------------------------------- evaluation


def test_offsets_read_the_stream_and_are_null_without_one() -> None:
    stream = KeyStream(2)
    older, newer = Event("a", 1, "k", {"price": 1}), Event("b", 2, "k", {"price": 2})
    stream.history.extend([older, newer])
    one, two, price = (compile_expr(t) for t in ("prev(e, 1)", "prev(e, 2)", "prev(e, 2).price"))
    now = Event("a", 3, "k", {"price": 3})
    assert one.evaluate(now) is None
    assert price.evaluate(now) is None
    with reading(stream):
        assert one.evaluate(now) is newer
        assert two.evaluate(now) is older
        assert price.evaluate(now) == 1
    stream.history.popleft()
    with reading(stream):
        assert two.evaluate(now) is None
        assert price.evaluate(now) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("last([1, 2, 3])", 3),
        ("last([1, 2, 3], 1)", 3),
        ("last([1, 2, 3], 3)", 1),
        ("last([1, 2, 3], 4)", None),
        ("first([1, 2, 3], 2)", 2),
        ("first([], 1)", None),
        ("first([1, None], 2)", None),
        ("prev([1, 2, 3], 2)", 2),
        ("last([1, 2], None)", None),
    ],
)
def test_nth_first_and_last(text: str, value: object) -> None:
    assert compile_expr(text)({}) == value


def test_nth_needs_a_whole_number_from_one() -> None:
    for text in ("last([1], 0)", "first([1], 'a')", "last([1], True)"):
        with pytest.raises(ValueError, match="whole number from 1"):
            compile_expr(text)({})


# ---------------------------------------------------------------------------- through the engine

TYPES = ("a", "b")


@st.composite
def streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(0, 30))
    events, t = [], 0
    for _ in range(n):
        t += draw(st.sampled_from([0, 1, 1, 2, 5]))  # ties in time too
        price = draw(st.one_of(st.none(), st.integers(-5, 20)))
        events.append({"type": draw(st.sampled_from(TYPES)), "time": t, "key": draw(st.sampled_from("xy")),
                       "price": price})  # fmt: skip
    return events


def _matched(pattern: SequencePattern, events: list[dict[str, Any]]) -> list[int]:
    return sorted(d.events[0].seq for d in run([pattern], events).detections)


def _oracle_window(events: list[dict[str, Any]], i: int, size: int, by_time: bool) -> list[dict[str, Any]]:
    """The events of window ``size`` for event ``i``: same key and type, up to and including it."""
    me = events[i]
    same = [e for e in events[: i + 1] if e["key"] == me["key"] and e["type"] == me["type"]]
    if by_time:
        return [e for e in same if e["time"] > me["time"] - size]
    return same[-size:]


AGGREGATES: dict[str, Callable[[list[int]], object]] = {
    "sum": sum,
    "count": len,
    "min": lambda xs: min(xs) if xs else None,
    "max": lambda xs: max(xs) if xs else None,
}


@settings(max_examples=60, deadline=None)
@given(
    events=streams(),
    func=st.sampled_from(sorted(AGGREGATES)),
    size=st.integers(1, 6),
    by_time=st.booleans(),
    data=st.data(),
)
def test_windows_agree_with_a_brute_force_oracle(
    events: list[dict[str, Any]], func: str, size: int, by_time: bool, data: st.DataObject
) -> None:
    expected = []
    for i, e in enumerate(events):
        window = _oracle_window(events, i, size, by_time)
        value = AGGREGATES[func]([w["price"] for w in window if w["price"] is not None])
        off = data.draw(st.sampled_from([0, 0, 1]))  # the guess is right, or off by one
        e["guess"] = None if value is None else value + off
        if value is not None and off == 0:
            expected.append(i)
    unit = "ms" if by_time else " events"
    where = f"e.guess == {func}(e.price over last {size}{unit})"
    assert _matched(SequencePattern("w", (Stage("s", where=where),)), events) == expected


@settings(max_examples=60, deadline=None)
@given(events=streams(), n=st.integers(1, 4), data=st.data())
def test_prev_agrees_with_a_brute_force_oracle(
    events: list[dict[str, Any]], n: int, data: st.DataObject
) -> None:
    expected = []
    for i, e in enumerate(events):
        before = [x for x in events[:i] if x["key"] == e["key"]]
        value = before[-n]["price"] if len(before) >= n else None
        off = data.draw(st.sampled_from([0, 0, 1]))
        e["guess"] = None if value is None else value + off
        if value is not None and off == 0:
            expected.append(i)
    where = f"e.type == 'a' and e.guess == prev(e, {n}).price"  # the plan uses 'a'; prev sees all types
    expected = [i for i in expected if events[i]["type"] == "a"]
    assert _matched(SequencePattern("p", (Stage("s", where=where),)), events) == expected


def test_prev_is_the_keys_previous_event_whatever_stage_took_it() -> None:
    pattern = SequencePattern(
        "rise",
        (
            Stage("low", where="e.type == 'tick' and e.price < 10"),
            Stage("high", where="e.type == 'tick' and e.price > prev(e, 1).price", contiguity="relaxed"),
        ),
    )
    assert isinstance(compile_sequence(pattern), StreamMatcher)
    ticks = [("tick", 5), ("news", None), ("tick", 7), ("tick", 6), ("tick", 8)]
    events = [{"type": t, "time": i, "key": "k", "price": p} for i, (t, p) in enumerate(ticks)]
    found = [tuple(e.seq for e in d.events) for d in run([pattern], events).detections]
    # 7 follows a 'news' event without a price: NULL, not a rise; 8 rises over 6 (taken by no stage)
    assert found[0] == (0, 4)


def test_a_pattern_without_the_stream_keeps_the_plain_matcher() -> None:
    assert isinstance(compile_sequence(SequencePattern("p", (Stage("s", where="e.x > 1"),))), NFAMatcher)


def test_the_stream_survives_a_snapshot() -> None:
    pattern = SequencePattern(
        "p", (Stage("s", where="e.price > prev(e, 2).price + count(e over last 2 events)"),)
    )
    events = [{"type": "t", "time": i, "key": "k", "price": p} for i, p in enumerate([1, 9, 4, 2, 8, 0, 7])]
    straight = _matched(pattern, events)
    got = sorted(d.events[0].seq for d in across_a_snapshot(lambda: Engine([pattern]), events, 3))
    assert got == straight == [2, 4]


def test_a_window_value_that_fails_is_a_recorded_fault() -> None:
    pattern = SequencePattern("p", (Stage("s", where="sum((e.price + 1) over last 3 events) > 0"),))
    events = [
        {"type": "t", "time": 0, "key": "k", "price": "x"},
        {"type": "t", "time": 1, "key": "k", "price": 1},
    ]
    result = run([pattern], events)
    assert [d.events[0].seq for d in result.detections] == [1]
    assert any("window" in f.where for f in result.errors)


def test_other_families_reject_the_stream() -> None:
    channel = Channel("c", "login", where="prev(e, 1) is None")
    group = ReactionGroup("g", "or", channels=(channel,), initiator=Initiator("login"))
    with pytest.raises(CepError, match="work in sequence patterns"):
        Engine([group])


def test_the_cursor_pickles_as_a_reference_to_the_one_module_cursor() -> None:

    from workbench.engine.expr.stream import CURSOR

    assert pickle.loads(pickle.dumps(CURSOR)) is CURSOR  # Flink ships generated conditions pickled


@pytest.mark.parametrize(
    ("func", "values", "expected", "skipped"),
    [
        # a skipped value still takes its event's place in the window (as a NULL does)
        ("sum", [5, "n/a", 7, True, 6], [5, 5, 7, 7, 6], 2),  # a string or a bool is no number
        ("avg", [4, "n/a", 8, 6], [4.0, 4.0, 8.0, 7.0], 1),
        ("max", [5, "x", 7, 2], [5, 5, 7, 7], 1),  # a string cannot be compared with the numbers held
        ("min", ["b", 3, "a", "c"], ["b", "b", "a", "a"], 1),  # strings compare among themselves
        ("count", [5, "n/a", None, True], [1, 2, 1, 1], 0),  # count takes any value but NULL
    ],
)
def test_a_window_skips_a_value_it_cannot_take_and_records_it(
    func: str, values: list[object], expected: list[object], skipped: int
) -> None:
    events = [
        {"type": "t", "time": i, "key": "k", "v": v, "seen": w}
        for i, (v, w) in enumerate(zip(values, expected, strict=True))
    ]
    pattern = SequencePattern("w", (Stage("s", where=f"e.seen == {func}(e.v over last 2 events)"),))
    result = run([pattern], events)
    assert sorted(d.events[0].seq for d in result.detections) == list(range(len(values)))
    assert sum(f.count for f in result.errors) == skipped
    assert all(f.kind == "TypeError" and f.where.startswith("window") for f in result.errors)
