"""notNext / notFollowedBy: in the middle, at the end (pending until the window passes), errors."""

from __future__ import annotations

import pytest

from tests.engine.oracle import feed, is_type, seqs
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import begin
from workbench.engine.runtime import run
from workbench.errors import PatternError


def test_not_next_in_the_middle() -> None:
    p = begin("a").where(is_type("a")).not_next("x").where(is_type("x")).followed_by("b").where(is_type("b"))
    assert seqs(feed(p.build("p"), "axb")) == []
    assert seqs(feed(p.build("p"), "ayb")) == [(0, 2)]


def test_not_next_at_the_end_is_confirmed_by_the_next_event() -> None:
    p = begin("a").where(is_type("a")).not_next("x").where(is_type("x")).build("p")
    out = feed(p, "ay")
    assert [(d.seqs, d.time) for d in out] == [((0,), 1)]
    assert seqs(feed(p, "ax")) == []


def test_not_followed_by_in_the_middle() -> None:
    p = (
        begin("a").where(is_type("a")).not_followed_by("x").where(is_type("x"))
        .followed_by("b").where(is_type("b")).build("p")
    )  # fmt: skip
    assert seqs(feed(p, "ayxb")) == []
    assert seqs(feed(p, "ayb")) == [(0, 2)]


def test_not_followed_by_after_a_loop_also_applies_between_its_events() -> None:
    p = (
        begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).times(2)
        .not_followed_by("x").where(is_type("x")).followed_by("d").where(is_type("d")).build("p")
    )  # fmt: skip
    assert seqs(feed(p, "abxbd")) == []
    assert seqs(feed(p, "abbd")) == [(0, 1, 2, 3)]


def test_not_followed_by_at_the_end_waits_for_the_window() -> None:
    p = (
        begin("a").where(is_type("a")).followed_by("b").where(is_type("b"))
        .not_followed_by("x").where(is_type("x")).within(5).build("p")
    )  # fmt: skip
    # harness: time passes only with events -> released by the event at t=9 (the window ends at 5)
    out = feed(p, "abyz", times=[0, 1, 2, 9])
    assert [(d.seqs, d.time) for d in out if d.kind == "match"] == [((0, 1), 9)]
    assert seqs(feed(p, "abxz", times=[0, 1, 2, 9])) == []
    # engine: a timer releases it at the deadline t_first + window, without further events
    res = run(p, [{"type": "a", "time": 0}, {"type": "b", "time": 1}])
    assert [(d.seqs, d.time) for d in res.detections if d.kind == "match"] == [((0, 1), 5)]


def test_not_followed_by_at_the_end_needs_a_window() -> None:
    p = begin("a").where(is_type("a")).not_followed_by("x").where(is_type("x")).build("p")
    with pytest.raises(PatternError, match=r"'x'.*window"):
        compile_matcher(p)


@pytest.mark.parametrize(
    "builder",
    [
        lambda: begin("a").not_next("x").one_or_more(),
        lambda: begin("a").not_followed_by("x").optional(),
        lambda: begin("a").not_followed_by("x").times(2),
    ],
)
def test_quantified_negations_are_rejected(builder: object) -> None:
    with pytest.raises(PatternError, match="NOT pattern"):
        builder()  # type: ignore[operator]


def test_optional_before_a_negation_is_rejected() -> None:
    p = begin("a").followed_by("b").optional().not_next("x").followed_by("c").build("p")
    with pytest.raises(PatternError, match=r"'b'.*optional"):
        compile_matcher(p)
