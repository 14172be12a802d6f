"""Contiguity: next (strict), followedBy (relaxed), followedByAny (non-deterministic relaxed)."""

from __future__ import annotations

from tests.engine.oracle import feed, is_type, seqs
from workbench.engine.nfa import Contiguity, SequencePattern, Stage, begin


def two(contiguity: Contiguity) -> SequencePattern:
    first = Stage("a", is_type("a"), Contiguity.STRICT)
    return SequencePattern("p", (first, Stage("b", is_type("b"), contiguity)))


def test_strict_needs_the_very_next_event() -> None:
    assert seqs(feed(two(Contiguity.STRICT), "acbb")) == []
    assert seqs(feed(two(Contiguity.STRICT), "abb")) == [(0, 1)]


def test_relaxed_skips_only_non_matching_events() -> None:
    # Flink docs: "a c b1 b2" with followedBy gives {a b1} only.
    assert seqs(feed(two(Contiguity.RELAXED), "acbb")) == [(0, 2)]


def test_nondeterministic_relaxed_may_skip_matching_events() -> None:
    assert sorted(seqs(feed(two(Contiguity.NONDETERMINISTIC_RELAXED), "acbb"))) == [(0, 2), (0, 3)]


def test_every_event_can_start_a_match() -> None:
    assert seqs(feed(two(Contiguity.RELAXED), "aab")) == [(0, 2), (1, 2)]


def test_builder_spelling_matches_dataclasses() -> None:
    built = begin("a").where(is_type("a")).followedBy("b").where(is_type("b")).build("p")
    assert built == two(Contiguity.RELAXED)
    assert begin("a").where(is_type("a")).next("b").where(is_type("b")).build("p") == two(Contiguity.STRICT)


def test_strict_loop_inner_contiguity() -> None:
    p = begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).one_or_more().consecutive()
    p = p.followed_by("c").where(is_type("c"))
    got = sorted(seqs(feed(p.build("p"), "abbxbc")))
    # b must start at b1 (relaxed entry takes the first b); the loop is consecutive, so x ends it;
    # the loop may be left early (c is relaxed), hence one match per loop prefix.
    assert got == [(0, 1, 2, 5), (0, 1, 5)]
