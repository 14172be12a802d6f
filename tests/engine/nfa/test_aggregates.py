"""Named aggregates over a stage's taken events: O(1) update on take, copy on branch, both views."""

from __future__ import annotations

import pytest

from tests.engine.oracle import feed, is_type, seqs
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import AggregateSpec, Quantifier, SequencePattern, Stage
from workbench.errors import PatternError


def rising(include_current: bool) -> SequencePattern:
    """a, then b's while the average b price stays below 10 (optionally counting the candidate)."""
    return SequencePattern(
        "p",
        (
            Stage("a", is_type("a")),
            Stage(
                "b", "e.type == 'b' and (avg_b is None or avg_b < 10)", quantifier=Quantifier.one_or_more()
            ),
            Stage("c", is_type("c")),
        ),
        aggregates=(AggregateSpec("avg_b", "avg", "b", "price", include_current=include_current),),
    )


def test_flink_view_excludes_the_candidate_event() -> None:
    # prices 4, 20, 1: excluding the candidate, avg before 20 is 4 -> 20 taken; before 1 it is 12 -> stop
    got = sorted(seqs(feed(rising(False), "abbbc", price=[0, 4, 20, 1, 0])))
    assert (0, 1, 2, 4) in got
    assert all(3 not in m for m in got if 2 in m)


def test_match_recognize_view_includes_the_candidate_event() -> None:
    # including the candidate, avg(4, 20) = 12 -> 20 is rejected; avg(4, 1) = 2.5 -> 1 is taken
    got = sorted(seqs(feed(rising(True), "abbbc", price=[0, 4, 20, 1, 0])))
    assert (0, 1, 3, 4) in got
    assert all(2 not in m for m in got)


def test_branches_do_not_share_aggregate_state() -> None:
    p = SequencePattern(
        "p",
        (
            Stage("a", is_type("a")),
            Stage("b", "e.type == 'b'", quantifier=Quantifier.one_or_more()),
            Stage("c", "e.type == 'c' and n == 2"),
        ),
        aggregates=(AggregateSpec("n", "count", "b"),),
    )
    # each loop prefix (b1 / b1 b2 / b1 b2 b3) carries its own count; only two b's may finish
    assert seqs(feed(p, "abbbc")) == [(0, 1, 2, 4)]


def test_callable_conditions_read_aggregates_from_the_context() -> None:
    p = SequencePattern(
        "p",
        (
            Stage("a", is_type("a"), quantifier=Quantifier.one_or_more()),
            Stage("z", lambda e, ctx: e.type == "z" and ctx["total"] >= 5),
        ),
        aggregates=(AggregateSpec("total", "sum", "a", "price"),),
    )
    assert (0, 1, 2) in seqs(feed(p, "aaz", price=[2, 3, 0]))
    assert all(m != (1, 2) for m in seqs(feed(p, "aaz", price=[2, 3, 0])))


def test_unknown_names_and_functions_are_rejected() -> None:
    with pytest.raises(PatternError, match="unknown name"):
        compile_matcher(SequencePattern("p", (Stage("a", "missing > 1"),)))
    with pytest.raises(PatternError, match="unknown aggregate"):
        compile_matcher(SequencePattern("p", (Stage("a"),), aggregates=(AggregateSpec("x", "nope", "a"),)))
    with pytest.raises(PatternError, match="unknown stage"):
        compile_matcher(
            SequencePattern("p", (Stage("a"),), aggregates=(AggregateSpec("x", "sum", "q", "v"),))
        )
