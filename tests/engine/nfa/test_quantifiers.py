"""Quantifiers: times, ranges, oneOrMore, timesOrMore, optional, greedy, allowCombinations, until."""

from __future__ import annotations

import pytest

from tests.engine.oracle import feed, is_type, seqs
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import Quantifier, begin
from workbench.errors import PatternError


def test_times_exact() -> None:
    p = begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).times(2).build("p")
    assert seqs(feed(p, "abxbb")) == [(0, 1, 3)]
    assert seqs(feed(p, "abb")) == [(0, 1, 2)]
    assert seqs(feed(p, "ab")) == []


def test_loop_at_the_end_emits_eagerly_one_match_per_event() -> None:
    p = begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).one_or_more().build("p")
    assert seqs(feed(p, "abbb")) == [(0, 1), (0, 1, 2), (0, 1, 2, 3)]


def test_times_range_and_or_more() -> None:
    p = begin("a").where(is_type("a")).next("b").where(is_type("b")).times(2, 3).build("p")
    assert seqs(feed(p, "abbbb")) == [(0, 1, 2), (0, 1, 2, 3)]
    q = begin("a").where(is_type("a")).next("b").where(is_type("b")).times_or_more(2).build("q")
    assert seqs(feed(q, "abbbb")) == [(0, 1, 2), (0, 1, 2, 3), (0, 1, 2, 3, 4)]


def test_optional_middle_stage_gives_both_paths() -> None:
    p = (
        begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).optional()
        .followed_by("c").where(is_type("c")).build("p")
    )  # fmt: skip
    assert sorted(seqs(feed(p, "abc"))) == [(0, 1, 2), (0, 2)]


def test_optional_tail_emits_the_prefix_immediately() -> None:
    p = begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).optional().build("p")
    out = feed(p, "ab")
    assert [(d.seqs, d.time) for d in out] == [((0,), 0), ((0, 1), 1)]


def test_pattern_of_only_optional_stage_never_emits_empty() -> None:
    p = begin("a").where(is_type("a")).one_or_more().optional().build("p")
    assert all(d.events for d in feed(p, "xax"))


def test_greedy_keeps_only_the_longest_loop() -> None:
    base = begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).one_or_more()
    lazy = base.followed_by("c").where(is_type("c")).build("lazy")
    greedy = base.greedy().followed_by("c").where(is_type("c")).build("greedy")
    assert sorted(seqs(feed(lazy, "abbc"))) == [(0, 1, 2, 3), (0, 1, 3)]
    assert seqs(feed(greedy, "abbc")) == [(0, 1, 2, 3)]
    # the guard: the next stage cannot take what the loop could still take
    both = base.greedy().followed_by("c").where(is_type("b", "c")).build("both")
    assert seqs(feed(both, "abbc")) == [(0, 1, 2, 3)]


def test_allow_combinations_gives_all_subsets() -> None:
    # SameElementITCase.testZeroOrMoreSameElement flavour: every subset of 5 b's (32 with the empty one)
    p = (
        begin("a").where(is_type("a")).followed_by_any("b").where(is_type("b")).one_or_more()
        .allow_combinations().optional().followed_by("c").where(is_type("c")).build("p")
    )  # fmt: skip
    assert len(seqs(feed(p, "abbbbbc"))) == 32


def test_until_stops_the_loop_and_can_be_taken_by_the_next_stage() -> None:
    p = (
        begin("a").where(is_type("a")).followed_by("b").where(is_type("b", "u")).one_or_more()
        .until("e.type == 'u'").followed_by("c").where(is_type("c", "u")).build("p")
    )  # fmt: skip
    got = seqs(feed(p, "abbub"))
    assert (0, 1, 2, 3) in got
    assert all(4 not in m for m in got)


@pytest.mark.parametrize(
    ("builder", "message"),
    [
        (lambda: begin("a").until("True"), "only applicable to looping"),
        (lambda: begin("a").times(2).until("True"), "only applicable to looping"),
        (lambda: begin("a").greedy(), "single-event"),
        (lambda: begin("a").one_or_more().allow_combinations().greedy(), "allowCombinations"),
        (lambda: begin("a").one_or_more().greedy().followed_by("b").optional(), "greedy"),
        (lambda: begin("a").times(3, 2), "bad quantifier"),
        (lambda: begin("a").followed_by("a"), "duplicate"),
    ],
)
def test_malformed_quantifiers_are_rejected(builder: object, message: str) -> None:
    with pytest.raises(PatternError, match=message):
        compile_matcher(builder().build("p"))  # type: ignore[operator]


def test_times_zero_to_m_is_optional() -> None:
    q = Quantifier.times(0, 2)
    assert (q.min, q.max, q.optional) == (1, 2, True)


@pytest.mark.parametrize(
    ("lo", "hi", "reason"),
    [(1, 10**12, "a count above 1000 is not supported"), (2000, None, "above 1000"), (1, 2.5, "whole counts"),
     (float("nan"), 3, "whole counts"), ("1", 2, "whole counts")],
)  # fmt: skip
def test_a_quantifier_built_in_python_is_refused_like_its_text(lo: object, hi: object, reason: str) -> None:
    # the language refuses these counts; an object built without it (an API user, a case file) is
    # refused too, at once, instead of an automaton of 10**12 states that never finishes compiling
    with pytest.raises(PatternError, match=reason):
        Quantifier(lo, hi)  # type: ignore[arg-type]
