"""After-match skip strategies (the table of Flink's documentation), hold-back, throw-on-miss."""

from __future__ import annotations

import pytest

from tests.engine.oracle import feed, is_type, seqs
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import SkipStrategy, begin
from workbench.errors import PatternError, SkipStrategyError

TABLE = {
    "no_skip": [(0, 1, 2, 3), (1, 2, 3), (2, 3)],
    "skip_to_next": [(0, 1, 2, 3), (1, 2, 3), (2, 3)],
    "skip_past_last_event": [(0, 1, 2, 3)],
    "skip_to_first:b": [(0, 1, 2, 3), (1, 2, 3), (2, 3)],
    "skip_to_last:b": [(0, 1, 2, 3), (2, 3)],
}


@pytest.mark.parametrize("flink_order", [False, True])
@pytest.mark.parametrize(("skip", "want"), TABLE.items())
def test_documented_table_for_b_plus_c(skip: str, want: list[tuple[int, ...]], flink_order: bool) -> None:
    p = (
        begin("b", skip).where(is_type("b")).one_or_more().greedy().consecutive()
        .followed_by("c").where(is_type("c")).build("p", flink_order=flink_order)
    )  # fmt: skip
    assert seqs(feed(p, "bbbc")) == want


def test_skip_to_next_drops_other_runs_with_the_same_start() -> None:
    p = begin("a", "skip_to_next").where(is_type("a")).followed_by_any("b").where(is_type("b")).build("p")
    assert seqs(feed(p, "abb")) == [(0, 1)]
    q = begin("a").where(is_type("a")).followed_by_any("b").where(is_type("b")).build("q")
    assert seqs(feed(q, "abb")) == [(0, 1), (0, 2)]


def test_completed_match_is_held_back_until_earlier_partial_resolves() -> None:
    # a#0 (v=1) starts first but completes last; a#1's match (completed at #2) waits for it.
    def pattern(skip: str) -> object:
        return (
            begin("a", skip).where(is_type("a")).followed_by("b")
            .where("e.type == 'b' and e.v == matched('a')[0].v").build("p")
        )  # fmt: skip

    args = ("aabb", None)
    v = [1, 2, 2, 1]
    assert seqs(feed(pattern("no_skip"), *args, v=v)) == [(1, 2), (0, 3)]  # type: ignore[arg-type]
    out = feed(pattern("skip_to_next"), *args, v=v)  # type: ignore[arg-type]
    assert [(d.seqs, d.time) for d in out] == [((0, 3), 3), ((1, 2), 3)]
    assert seqs(feed(pattern("skip_past_last_event"), *args, v=v)) == [(0, 3)]  # type: ignore[arg-type]


def test_throw_on_miss() -> None:
    strategy = SkipStrategy("skip_to_first", "b", throw_on_miss=True)
    p = begin("a", strategy).where(is_type("a")).followed_by("b").where(is_type("b")).optional()
    p = p.followed_by("c").where(is_type("c"))
    with pytest.raises(SkipStrategyError, match="'b'"):
        feed(p.build("p"), "ac")
    first = SkipStrategy("skip_to_first", "a", throw_on_miss=True)
    q = begin("a", first).where(is_type("a")).followed_by("c").where(is_type("c")).build("q")
    with pytest.raises(SkipStrategyError, match="first element"):
        feed(q, "ac")
    lenient = SkipStrategy("skip_to_first", "b")
    r = begin("a", lenient).where(is_type("a")).followed_by("b").where(is_type("b")).optional()
    assert seqs(feed(r.followed_by("c").where(is_type("c")).build("r"), "ac")) == [(0, 1)]


def test_skip_target_must_exist() -> None:
    p = begin("a", "skip_to_last:nope").followed_by("b").build("p")
    with pytest.raises(PatternError, match="'nope'"):
        compile_matcher(p)
    with pytest.raises(PatternError, match="target"):
        SkipStrategy("skip_to_first")
    with pytest.raises(PatternError, match="unknown skip"):
        SkipStrategy.parse("skip_somewhere")
