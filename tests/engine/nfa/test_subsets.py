"""Named subsets of stages (SQL ``SUBSET``) read by measures: definitions and evaluation."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.nfa.test_measures import _events
from tests.engine.nfa.test_measures import _pattern as measures_pattern
from workbench.engine import Engine
from workbench.engine.detection import Detection
from workbench.engine.nfa.measures import Subsets
from workbench.engine.nfa.pattern import GroupStage, SequencePattern, Stage
from workbench.errors import PatternError

SUBSETS = {"ab": ("a", "b"), "ca": ("c", "a"), "bee": ("b",)}
MEASURES = {
    "mean_ab": "avg(matched('ab').price)",
    "n_ca": "count(matched('ca'))",
    "first_ca": "first(matched('ca')).price",
    "last_ab": "last(matched('ab')).time",
    "sum_bee": "sum(matched('bee').price)",
    "prices_ca": "[x.price for x in matched('ca')]",
}


def _pattern(**changes: object) -> SequencePattern:
    """The measures tests' pattern (a, one or more b, c) with these measures and subsets."""
    return measures_pattern(**{"measures": MEASURES, "subsets": SUBSETS, **changes})


def _by_hand(d: Detection, members: tuple[str, ...]) -> list[dict[str, Any]]:
    """The fields of the detection's events whose stage is one of ``members``, in match order."""
    return [{**e.fields, "time": e.time} for c, e in zip(d.channels, d.events, strict=True) if c in members]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcx"), st.integers(-5, 50)), max_size=14))
def test_subset_measures_equal_a_recomputation_over_the_stages(prices: list[tuple[str, int]]) -> None:
    engine = Engine([_pattern()])
    detections = engine.process_many(_events(prices)) + engine.finish()
    for d in detections:
        got = dict(d.measures)
        ab, ca, bee = (_by_hand(d, SUBSETS[s]) for s in ("ab", "ca", "bee"))
        # matches and timeouts alike: a subset reads the events the (partial) match has
        assert got["mean_ab"] == (pytest.approx(sum(e["price"] for e in ab) / len(ab)) if ab else None)
        assert got["n_ca"] == len(ca)
        assert got["first_ca"] == (ca[0]["price"] if ca else None)
        assert got["last_ab"] == (ab[-1]["time"] if ab else None)
        assert got["sum_bee"] == sum(e["price"] for e in bee)
        assert got["prices_ca"] == [e["price"] for e in ca]
        if d.kind == "match":  # a before c, in match order, whatever order the subset lists them
            stages = d.by_stage()
            assert ca == [{**e.fields, "time": e.time} for e in stages["a"] + stages["c"]]


def test_a_subset_of_every_stage_is_the_universal_variable() -> None:
    measures = {"sub": "avg(matched('all').price)", "uni": "avg(matched('*').price)"}
    engine = Engine([_pattern(measures=measures, subsets={"all": ("c", "b", "a")})])
    detections = engine.process_many(_events([("a", 1), ("b", 2), ("b", 7), ("c", 3), ("a", 4)]))
    detections += engine.finish()
    assert detections
    assert all(d.measures["sub"] == d.measures["uni"] for d in detections)


def test_subsets_in_groups_and_timeouts() -> None:
    group = GroupStage("g", (Stage("x", "e.type == 'x'"), Stage("y", "e.type == 'y'")))
    p = SequencePattern(
        "p",
        (Stage("a", "e.type == 'a'"), group, Stage("c", "e.type == 'c'")),
        within_ms=50,
        subsets={"ay": ("a", "y")},
        measures={"n": "count(matched('ay'))", "c_price": "last(matched('c')).price"},  # type: ignore[arg-type]
    )
    engine = Engine([p])
    rows = [("a", 1), ("x", 2), ("y", 3), ("c", 4), ("a", 5), ("x", 6)]
    done = engine.process_many(_events(rows))
    timeouts = engine.finish()
    assert [dict(d.measures) for d in done] == [{"n": 2, "c_price": 4}]
    assert [dict(d.measures) for d in timeouts] == [{"n": 1, "c_price": None}]


@pytest.mark.parametrize(
    ("subsets", "message"),
    [
        ({"a": ("a", "b")}, "subset 'a': a stage has that name"),
        ({"*": ("a",)}, "identifier"),
        ({"e": ("a",)}, "identifier"),
        ({"matched": ("a",)}, "identifier"),
        ({"ab": ()}, "at least one stage"),
        ({"ab": ("a", "zz")}, "unknown stage 'zz'"),
        ({"ab": ("a", "a")}, "listed twice"),
        ({"ab": "ab"}, "tuple of stage names"),
        ([("ab", ("a",)), ("ab", ("b",))], "defined twice"),
        (5, "subsets must map names"),
    ],
)
def test_definitions_are_checked(subsets: object, message: str) -> None:
    with pytest.raises(PatternError, match=message):
        _pattern(subsets=subsets)


def test_an_unknown_subset_is_an_unknown_stage() -> None:
    with pytest.raises(PatternError, match="unknown stage 'ac'"):
        Engine([_pattern(measures={"n": "count(matched('ac'))"})])


def test_subsets_are_frozen_hashable_and_pickle() -> None:
    p = _pattern()
    assert isinstance(p.subsets, Subsets)
    assert p.subsets == SUBSETS
    assert p == _pattern(subsets=list(SUBSETS.items()))
    assert hash(p.subsets) == hash(Subsets(SUBSETS))
    assert pickle.loads(pickle.dumps(p)) == p
    with pytest.raises(TypeError):
        p.subsets["x"] = ("a",)  # type: ignore[index]
    events = _events([("a", 1), ("b", 2), ("c", 3)])
    want = Engine([p]).process_many(events)
    assert [dict(d.measures) for d in Engine([pickle.loads(pickle.dumps(p))]).process_many(events)] == [
        dict(d.measures) for d in want
    ]
