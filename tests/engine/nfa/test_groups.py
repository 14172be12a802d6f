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


# Differences from Flink 2.3.0's NFA found by random group patterns against it (each expected
# result below is what Flink's own NFA gives for the same pattern and events).


def _run(text: str, types: str) -> list[tuple[int, ...]]:
    engine = Engine([compile_text(text)[0].pattern])
    engine.process_many([{"type": t, "time": i + 1} for i, t in enumerate(types)])
    engine.finish()
    return [d.seqs for d in engine.detections if d.kind == "match"]


def test_an_optional_group_can_be_skipped_only_before_its_first_event() -> None:
    # (each event the group ignored made one more copy of the skipping match: c x x x d gave 4)
    text = "sequence p\n begin s0: c\n followed by (\n  begin s1: b\n ) optional\n followed by s4: d\n"
    assert _run(text, "cxxxd") == [(0, 4)]
    assert sorted(_run(text, "cxbxd")) == [(0, 2, 4), (0, 4)]
    # the head's own 'optional' still lets the group start at its second stage (Flink 2)
    text = (
        "sequence p\n begin s0: c\n followed by (\n  begin s1: b optional\n  followed by s2: h\n )\n"
        " followed by s4: d\n"
    )
    assert _run(text, "chd") == [(0, 1, 2)]


def test_a_group_s_until_event_cannot_leave_the_group() -> None:
    # (the loop inside the group proceeded on the until event, so the next stage took it)
    text = (
        "sequence p\n begin (\n  begin s0: a one or more\n ) one or more until e.type == 'd'\n"
        " followed by s1: d\n"
    )
    assert _run(text, "ad") == []
    assert _run(text, "axd") == [(0, 2), (0, 2)]


def test_what_flink_refuses_about_groups_and_windows_is_refused() -> None:
    with pytest.raises(PatternError, match="which is inside a group"):
        compile_text("sequence p skip to first s1\n begin s0: a\n followed by (\n  begin s1: b\n )\n")
    zero = SequencePattern(
        "p", (Stage("s0", "e.type == 'a'", within_ms=0), Stage("s1", "e.type == 'b'", within_prev_ms=4))
    )
    with pytest.raises(PatternError, match="cannot be larger than the window length"):
        compile_matcher(zero)  # within(0) switches the window off, but Flink still compares with it


def test_a_previous_event_window_on_a_group_s_first_stage_after_another_stage() -> None:
    # (the language refused it as "the first stage"; only the pattern's first stage has no previous)
    text = (
        "sequence p within 10ms\n begin s0: a\n followed by (\n  begin s1: d within 4ms of previous\n )\n"
        " followed by s3: c\n"
    )
    engine = Engine([compile_text(text)[0].pattern])
    engine.process_many(
        [{"type": t, "time": ms} for t, ms in (("a", 0), ("d", 3), ("c", 4), ("a", 5), ("d", 9))]
    )
    engine.finish()
    assert [(d.kind, d.seqs) for d in engine.detections] == [("match", (0, 1, 2)), ("timeout", (3,))]
