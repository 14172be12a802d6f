"""Measures on sequence patterns: definitions, evaluation per detection and per timeout."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine import Engine
from workbench.engine.detection import MeasureValues
from workbench.engine.expr import parse_expr
from workbench.engine.nfa.builder import begin
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.measures import Measure, measure_kind
from workbench.engine.nfa.pattern import Quantifier, SequencePattern, Stage
from workbench.engine.sharding import ShardedEngine
from workbench.errors import ExpressionError, PatternError
from workbench.language import compile_pattern

MEASURES = {
    "entry": "first(matched('a')).price",
    "n": "count(matched('b'))",
    "mean": "avg(matched('*').price)",
    "took": "last(matched('b')).time - first(matched('a')).time",
}


def _pattern(**changes: object) -> SequencePattern:
    stages = (
        Stage("a", "e.type == 'a'"),
        Stage("b", "e.type == 'b'", quantifier=Quantifier.one_or_more()),
        Stage("c", "e.type == 'c'"),
    )
    options: dict[str, object] = {"within_ms": 100, "measures": MEASURES}
    options.update(changes)
    return SequencePattern("p", stages, **options)  # type: ignore[arg-type]


def _events(prices: list[tuple[str, int]]) -> list[dict[str, object]]:
    return [{"type": t, "time": i * 3, "key": "k", "price": p} for i, (t, p) in enumerate(prices)]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("last(matched('a')).time", "time"),
        ("max(matched('a').t)", "time"),
        ("last(matched('b')).time - first(matched('a')).time", "duration"),
        ("first(matched('a')).time + 5", "time"),
        (
            "(last(matched('b')).t - first(matched('a')).t) + (max(matched('b').t) - last(matched('a')).t)",
            "duration",
        ),
        ("last(matched('a')).time if count(matched('a')) else first(matched('b')).time", "time"),
        ("last(matched('a')).time + last(matched('b')).time", "value"),
        ("count(matched('a'))", "value"),
        ("first(matched('a')).price", "value"),
    ],
)
def test_measure_kind(text: str, kind: str) -> None:
    assert measure_kind(parse_expr(text)) == kind


def test_definitions_are_checked() -> None:
    assert Measure("x", "count(matched('a'))").expr == parse_expr("count(matched('a'))")
    with pytest.raises(PatternError, match="identifier"):
        Measure("not a name", "1")
    with pytest.raises(PatternError, match="column every detection has"):
        Measure("kind", "1")
    with pytest.raises(ExpressionError):
        Measure("x", "count(")
    with pytest.raises(PatternError, match="defined twice"):
        _pattern(measures=(Measure("x", "1"), Measure("x", "2")))
    with pytest.raises(PatternError, match="unknown stage 'zz'"):
        Engine([_pattern(measures={"x": "count(matched('zz'))"})])


def test_mapping_pairs_and_objects_give_the_same_pattern() -> None:
    as_pairs = _pattern(measures=list(MEASURES.items()))
    as_objects = _pattern(measures=tuple(Measure(k, v) for k, v in MEASURES.items()))
    assert _pattern() == as_pairs == as_objects
    built = begin("a").where("e.type == 'a'")
    for name, expr in MEASURES.items():
        built = built.measure(name, expr)
    assert built.build("p").measures == as_objects.measures


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcx"), st.integers(-5, 50)), max_size=12))
def test_measures_agree_with_the_events_of_each_detection(prices: list[tuple[str, int]]) -> None:
    engine = Engine([_pattern()])
    detections = engine.process_many(_events(prices)) + engine.finish()
    for d in detections:
        stages = d.by_stage()
        got = dict(d.measures)
        assert list(got) == list(MEASURES)
        assert got["entry"] == stages["a"][0].fields["price"]
        assert got["mean"] == pytest.approx(sum(e.fields["price"] for e in d.events) / len(d.events))
        if d.kind == "match":
            assert got["n"] == len(stages["b"])
            assert got["took"] == stages["b"][-1].time - stages["a"][0].time
        else:  # a timed-out partial match: measures over stages it never reached are NULL
            reached = "b" in stages
            assert got["n"] == (len(stages["b"]) if reached else None)
            assert got["took"] == (stages["b"][-1].time - stages["a"][0].time if reached else None)


def test_no_measures_no_wrapping_and_no_values() -> None:
    engine = Engine([_pattern(measures={})])
    (d,) = engine.process_many(_events([("a", 1), ("b", 2), ("c", 3)]))
    assert d.measures == {}


def test_a_failing_measure_is_null_and_recorded() -> None:
    engine = Engine(
        [_pattern(measures={"bad": "first(matched('a')).price + 'x'", "ok": "count(matched('b'))"})]
    )
    (d,) = engine.process_many(_events([("a", 1), ("b", 2), ("c", 3)]))
    assert dict(d.measures) == {"bad": None, "ok": 1}
    assert [f.where for f in engine.errors] == ["measure 'bad'"]


def test_measures_survive_pickling_and_sharding() -> None:
    events = _events([("a", 1), ("b", 2), ("b", 4), ("c", 3)] * 2)
    direct = Engine([_pattern()])
    want = direct.process_many(events) + direct.finish()
    assert want
    assert all(d.measures for d in want)
    back = pickle.loads(pickle.dumps(want))
    assert back == want
    assert isinstance(back[0].measures, MeasureValues)
    assert back[0].measures.kinds["took"] == "duration"
    sharded = ShardedEngine([_pattern()], 2)
    got = sharded.process_many(events) + sharded.finish()
    key = lambda d: (d.kind, d.seqs)  # noqa: E731
    assert sorted(((key(d), dict(d.measures)) for d in got), key=repr) == sorted(
        ((key(d), dict(d.measures)) for d in want), key=repr
    )


def test_measures_survive_a_snapshot() -> None:
    events = _events([("a", 1), ("b", 2), ("b", 4), ("c", 3)])
    whole = Engine([_pattern()])
    want = whole.process_many(events) + whole.finish()
    first = Engine([_pattern()])
    got = first.process_many(events[:2])
    second = Engine([_pattern()])
    second.restore(first.snapshot())
    got += second.process_many(events[2:]) + second.finish()
    assert [(d.seqs, dict(d.measures)) for d in got] == [(d.seqs, dict(d.measures)) for d in want]


SHAPES = [
    "sequence s begin a where e.type == 'a' next b where e.type == 'b'",
    "sequence s begin a where e.type == 'a' one or more next b where e.type == 'b'",
    "sequence s within 10ms begin a where e.type == 'a' followed by any b where e.type == 'b'"
    " not followed by c",
    "sequence s skip past last event begin a where e.type == 'a' followed by b where e.type != 'a' times 2",
    "sequence s within 8ms begin a: a followed by b: b one or more followed by c: c",
]


def test_the_shapes_cover_every_plan() -> None:
    assert {NFAMatcher(compile_pattern(t)).fast_path for t in SHAPES} == {"linear", "loop", None}


@pytest.mark.parametrize("text", SHAPES)
@pytest.mark.parametrize("trace", [False, True])
def test_measures_change_no_detection_whatever_plan_runs_the_pattern(text: str, trace: bool) -> None:
    plain = compile_pattern(text)
    measured = compile_pattern(
        text.replace("sequence s", "sequence s measures n = count(a), k = count(price)")
    )
    feed = _events([(t, i) for i, t in enumerate("abacbbaxbcab")])
    want = Engine([plain], trace=trace)
    got = Engine([measured], trace=trace)
    expected = want.process_many(feed) + want.finish()
    detections = got.process_many(feed) + got.finish()
    assert [(d.kind, d.seqs) for d in detections] == [(d.kind, d.seqs) for d in expected]
    assert detections
    for d in detections:
        assert dict(d.measures) == {"n": len(d.by_stage().get("a", [])), "k": len(d.events)}


def test_the_whole_match_and_a_subset_read_rows_in_the_order_taken_when_a_group_repeats() -> None:
    # a repeated group lists its events by stage (a, a, b); SQL's universal variable and subsets
    # read rows in match order: a@1, b@2, a@3, so the last row is the a at 3
    pattern = compile_pattern(
        "sequence s no timeouts subset ab = (a, b) "
        "measures last_p = last(price), last_t = last(time), first_p = first(price), "
        "last_ab = last(ab).price, first_ab = first(ab).price, last_a = last(a).price "
        "begin (begin a: a next b: b optional) times 2 consecutive"
    )
    events = [
        {"type": t, "time": i + 1, "price": p} for i, (t, p) in enumerate([("a", 10), ("b", 20), ("a", 30)])
    ]
    engine = Engine([pattern])
    engine.process_many(events)
    engine.finish()
    (d,) = engine.detections
    assert [e.time for e in d.events] == [1, 3, 2]  # the detection keeps Flink's stage order
    assert dict(d.measures) == {
        "last_p": 30, "last_t": 3, "first_p": 10, "last_ab": 30, "first_ab": 10, "last_a": 30,
    }  # fmt: skip
