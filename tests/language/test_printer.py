"""The printer: canonical text, names and durations, and what it refuses to print."""

from __future__ import annotations

import pytest

from workbench.engine.nfa.pattern import AllOf, AnyOf, SequencePattern, Stage
from workbench.engine.reactions.patterns import Channel, Initiator, ReactionGroup
from workbench.errors import PatternError
from workbench.language import compile_pattern, format_pattern
from workbench.language.printer import format_duration, format_name


@pytest.mark.parametrize(
    ("ms", "text"),
    [(0, "0ms"), (250, "250ms"), (1000, "1s"), (1500, "1500ms"), (90_000, "90s"), (300_000, "5min"),
     (7_200_000, "2h"), (172_800_000, "2d"), (2.5, "2.5ms")],
)  # fmt: skip
def test_durations(ms: float, text: str) -> None:
    assert format_duration(ms) == text


@pytest.mark.parametrize(
    ("name", "text"),
    [("down", "down"), ("a or c", "`a or c`"), ("next", "`next`"), ("1", "`1`"), ("Ünï", "`Ünï`")],
)
def test_names(name: str, text: str) -> None:
    assert format_name(name) == text


def test_canonical_sequence_text() -> None:
    p = compile_pattern(
        "sequence s within 10s skip past last event begin a where e.x > 1 one or more consecutive "
        "followed by any b where e.y < 2 or where e.y > 9 within 5s of previous"
    )
    assert format_pattern(p) == (
        "sequence s\n"
        "    within 10s\n"
        "    skip past last event\n"
        "    begin a where e.x > 1 one or more consecutive\n"
        "    followed by any b where e.y < 2 or where e.y > 9 within 5s of previous"
    )


def test_canonical_group_text() -> None:
    g = ReactionGroup(
        "g",
        "or",
        (Channel("c", "login", match={"protocol": "async"}, where="e.ip != IP", negated=True),),
        timeout_ms=1000,
        initiator=Initiator("login", bind={"IP": "ip"}),
    )
    assert format_pattern(g) == (
        "group g\n"
        "    on login(ip as IP)\n"
        "    @or @timeout(1s) {\n"
        "        @not c: login(protocol = 'async') where e.ip != IP\n"
        "    }"
    )


def test_callable_conditions_have_no_text() -> None:
    p = SequencePattern("p", (Stage("a", lambda e: e.x > 1),))
    with pytest.raises(PatternError, match="callable condition"):
        format_pattern(p)


def test_only_flink_chains_of_conditions_print() -> None:
    ok = SequencePattern("p", (Stage("a", AnyOf((AllOf(("e.x > 1", "e.y > 1")), "e.z == 0"))),))
    assert compile_pattern(format_pattern(ok)) == ok
    bad = SequencePattern("p", (Stage("a", AnyOf(("e.x > 1", AllOf(("e.y", "e.z"))))),))
    with pytest.raises(PatternError, match="where/or chains"):
        format_pattern(bad)


def test_unknown_objects_are_refused() -> None:
    with pytest.raises(PatternError, match="cannot print"):
        format_pattern(object())


@pytest.mark.parametrize(
    "text",
    [
        "sequence s begin a where e.x > 1e400",  # overflows to inf: printed 1e999, not 'inf' (a name)
        "sequence s begin a where e.x > -1e400 and e.y < 1e309",
        "sequence s within 0.0000000001ms begin a next b",  # repr would write 1e-10ms
        "group g const X = 1e400 instance 1e400 @and { a: x where e.v > X }",
        "receive r x(v = -1e400)",
    ],
)
def test_overflowing_numbers_and_tiny_durations_read_back(text: str) -> None:
    pattern = compile_pattern(text)
    assert compile_pattern(format_pattern(pattern)) == pattern
