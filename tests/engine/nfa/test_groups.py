"""Group patterns: a sub-pattern with its own quantifier and contiguity."""

from __future__ import annotations

import pytest

from tests.engine.oracle import feed, is_type, seqs
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import GroupStage, Quantifier, SequencePattern, Stage, begin
from workbench.engine.runtime import Engine
from workbench.errors import PatternError
from workbench.language import compile_text


def ab() -> object:
    return begin("a").where(is_type("a")).next("b").where(is_type("b"))


def test_group_times() -> None:
    p = begin(ab()).times(2).build("p")  # type: ignore[arg-type]
    out = feed(p, "abab")
    assert seqs(out) == [(0, 2, 1, 3)]  # listed stage by stage: a's, then b's
    assert out[0].by_stage() == {"a": list(out[0].events[:2]), "b": list(out[0].events[2:])}


def test_group_one_or_more_then_strict_next() -> None:
    p = begin("s").where(is_type("s")).followed_by(ab()).one_or_more()  # type: ignore[arg-type]
    p = p.next("c").where(is_type("c"))
    assert seqs(feed(p.build("p"), "sababc")) == [(0, 1, 3, 2, 4, 5)]
    assert seqs(feed(p.build("p"), "sabc")) == [(0, 1, 2, 3)]


def test_optional_group() -> None:
    p = begin("s").where(is_type("s")).followed_by(ab()).optional()  # type: ignore[arg-type]
    p = p.followed_by("c").where(is_type("c"))
    assert sorted(seqs(feed(p.build("p"), "sabc"))) == [(0, 1, 2, 3), (0, 3)]


def test_group_inner_contiguity_applies_between_iterations() -> None:
    p = begin("s").where(is_type("s")).followed_by(ab()).times(2).consecutive()  # type: ignore[arg-type]
    p = p.followed_by("c").where(is_type("c"))
    assert seqs(feed(p.build("p"), "sabxabc")) == []
    assert seqs(feed(p.build("p"), "sababc")) == [(0, 1, 3, 2, 4, 5)]
    relaxed = begin("s").where(is_type("s")).followed_by(ab()).times(2)  # type: ignore[arg-type]
    relaxed = relaxed.followed_by("c").where(is_type("c"))
    assert seqs(feed(relaxed.build("p"), "sabxabc")) == [(0, 1, 4, 2, 5, 6)]


def test_group_until() -> None:
    def pattern(until: str | None) -> SequencePattern:
        group = GroupStage("g", (Stage("a", is_type("a")),), quantifier=Quantifier.one_or_more(), until=until)
        return SequencePattern("p", (Stage("s", is_type("s")), group, Stage("c", is_type("c"))))

    free = sorted(seqs(feed(pattern(None), "saauac")))
    assert (0, 1, 2, 4, 5) in free
    stopped = sorted(seqs(feed(pattern("e.type == 'u'"), "saauac")))
    assert stopped == [(0, 1, 2, 5), (0, 1, 5)]
    single = GroupStage("g", (Stage("a", is_type("a")),), until="e.type == 'u'")
    with pytest.raises(PatternError, match="looping"):
        compile_matcher(SequencePattern("p", (Stage("s", is_type("s")), single)))


def test_group_names_are_unique_and_groups_not_greedy() -> None:
    dup = SequencePattern("p", (Stage("a"), GroupStage("g", (Stage("a"),))))
    with pytest.raises(PatternError, match="duplicate"):
        compile_matcher(dup)
    with pytest.raises(PatternError, match="group"):
        compile_matcher(begin("s").followed_by(ab()).one_or_more().greedy().build("p"))  # type: ignore[arg-type]


def test_a_repeated_group_whose_stages_are_all_optional_ends() -> None:
    """``(g one or more optional) times 2 or more``: the group's round can take nothing, so its
    PROCEED edges form a cycle and each event's closure went round it for ever (found against
    Flink's NFA by a random group pattern). The closure now stops where a path comes round again;
    the matches are those of the bounded ``times 2`` (as many ways to split the events, more times)."""
    found: dict[str, set[tuple[int, ...]]] = {}
    for quantifier in ("times 2 or more", "one or more", "times 2"):
        text = (
            "sequence s\n    begin (\n        begin g where e.name == 'a' one or more optional\n"
            f"    ) {quantifier}\n    followed by z where e.name == 'z'\n"
        )
        engine = Engine([compile_text(text)[0].pattern])
        engine.process_many([{"type": "x", "time": t, "name": n} for t, n in ((1, "a"), (2, "a"), (3, "z"))])
        engine.finish()
        found[quantifier] = {d.seqs for d in engine.detections}
    assert (
        found["times 2 or more"]
        == found["one or more"]
        == found["times 2"]
        == {(0, 1, 2), (0, 2), (1, 2), (2,)}
    )
