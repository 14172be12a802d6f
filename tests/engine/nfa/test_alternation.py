"""Alternation and permute against the brute-force reference (the union of the linear expansions).

Random patterns ``[prefix] (branch | branch ...) [suffix]`` and ``[prefix] permute(...) [suffix]``
over the alphabet a/b/c with every contiguity, quantifiers, windows and skip strategies; the
reference is :class:`tests.engine.oracle.ChoiceOracle`, written from the semantics (SQL: the left
branch and the lexicographically first order are preferred).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.nfa.test_oracle import CONTIG, SHORT, TYPES, canonical, skip_of, stage_specs
from tests.engine.oracle import Assignment, ChoiceOracle, OStage, feed, is_type, seqs
from workbench.engine.events import Event
from workbench.engine.nfa import Contiguity, Quantifier, SequencePattern, SkipStrategy, Stage
from workbench.engine.nfa.pattern import Alternation, Permute
from workbench.errors import PatternError
from workbench.testing import NFATestHarness


@st.composite
def choice_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    counter = itertools.count()
    spec = lambda: draw(stage_specs(next(counter)))  # noqa: E731
    prefix = [spec() for _ in range(draw(st.integers(0, 1)))]
    permute = draw(st.booleans())
    if permute:
        branches = [[spec()] for _ in range(draw(st.integers(2, 3)))]
        for b in branches:
            b[0]["optional"] = False
    else:
        branches = [[spec() for _ in range(draw(st.integers(1, 2)))] for _ in range(draw(st.integers(2, 3)))]
        for b in branches:
            if all(s["optional"] for s in b):
                b[0]["optional"] = False
    suffix = [spec() for _ in range(draw(st.integers(0, 1)))]
    types = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=7))
    gaps = draw(st.lists(st.integers(0, 3), min_size=len(types), max_size=len(types)))
    names = [s["name"] for s in prefix + [s for b in branches for s in b] + suffix]
    return {
        "prefix": prefix,
        "branches": branches,
        "suffix": suffix,
        "permute": permute,
        "contiguity": draw(st.sampled_from(CONTIG)),
        "inner": draw(st.sampled_from(CONTIG)),
        "types": types,
        "times": list(itertools.accumulate(gaps)),
        "within": draw(st.sampled_from([None, None, 3, 6])),
        "skip": draw(st.sampled_from(["no_skip", "skip_to_next", "skip_past_last_event", "first", "last"])),
        "target": draw(st.sampled_from(names)),
        "names": names,
    }


def _stage(s: dict[str, Any], contiguity: str) -> Stage:
    q = Quantifier(s["min"], s["max"], s["optional"], inner=Contiguity(s["inner"]))
    return Stage(s["name"], is_type(*s["types"]), Contiguity(contiguity), quantifier=q)


def build(sc: dict[str, Any]) -> SequencePattern:
    prefix = [_stage(s, s["contiguity"]) for s in sc["prefix"]]
    suffix = [_stage(s, s["contiguity"]) for s in sc["suffix"]]
    choice: Alternation | Permute
    if sc["permute"]:
        elements = tuple(_stage(b[0], "strict") for b in sc["branches"])
        choice = Permute(elements, Contiguity(sc["contiguity"]), Contiguity(sc["inner"]))
    else:
        branches = tuple(tuple(_stage(s, s["contiguity"]) for s in b) for b in sc["branches"])
        choice = Alternation(branches, Contiguity(sc["contiguity"]))
    return SequencePattern("p", (*prefix, choice, *suffix), within_ms=sc["within"], skip=skip_of(sc))


def _ostage(s: dict[str, Any], contiguity: str) -> OStage:
    accepts = (lambda ts: lambda e: e.type in ts)(s["types"])
    return OStage(s["name"], accepts, SHORT[contiguity], s["min"], s["max"], s["optional"], SHORT[s["inner"]])


def expansions(sc: dict[str, Any]) -> list[list[OStage]]:
    """Every linear pattern the alternation stands for, most preferred first."""
    prefix = [_ostage(s, s["contiguity"]) for s in sc["prefix"]]
    suffix = [_ostage(s, s["contiguity"]) for s in sc["suffix"]]
    if sc["permute"]:
        orders = itertools.permutations([b[0] for b in sc["branches"]])
        middles = [
            [_ostage(s, sc["contiguity"] if i == 0 else sc["inner"]) for i, s in enumerate(o)] for o in orders
        ]
    else:
        middles = [
            [_ostage(s, sc["contiguity"] if i == 0 else s["contiguity"]) for i, s in enumerate(b)]
            for b in sc["branches"]
        ]
    return [prefix + m + suffix for m in middles]


def run_engine(sc: dict[str, Any], flink_order: bool = False) -> list[Assignment]:
    harness = NFATestHarness(replace(build(sc), flink_order=flink_order))
    for i, (t, tm) in enumerate(zip(sc["types"], sc["times"], strict=True)):
        harness.feed(Event(t, tm, None, {}, i))
    names = sc["names"]
    return [
        tuple((e.seq, names.index(ch)) for e, ch in zip(d.events, d.channels, strict=True))
        for d in harness.detections
        if d.kind == "match"
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choice_scenarios())
def test_alternation_agrees_with_the_reference(sc: dict[str, Any]) -> None:
    events = [
        Event(t, tm, None, {}, i) for i, (t, tm) in enumerate(zip(sc["types"], sc["times"], strict=True))
    ]
    ref = ChoiceOracle(expansions(sc), sc["names"], events, sc["times"], sc["within"])
    skip = skip_of(sc)
    got = [canonical(a) for a in run_engine(sc)]
    if skip.kind == "no_skip":
        assert sorted(got) == sorted(canonical(a) for a in ref.matches())
        flink = [canonical(a) for a in run_engine(sc, flink_order=True)]  # Java heap order, shared buffer
        assert sorted(flink) == sorted(got)
    else:
        assert got == [canonical(a) for a in ref.skip_matches(skip.kind, skip.stage)]


# ---------------------------------------------------------------------- examples


def _alt(*branches: tuple[Stage, ...], contiguity: Contiguity = Contiguity.RELAXED) -> Alternation:
    return Alternation(branches, contiguity)


def test_sub_sequence_or_single_stage() -> None:
    a, c = Stage("a", is_type("a")), Stage("c", is_type("c"))
    p = SequencePattern(
        "p", (Stage("x", is_type("x")), _alt((a, Stage("b", is_type("b"), Contiguity.STRICT)), (c,)))
    )
    assert seqs(feed(p, "xacxab")) == [(0, 2), (3, 4, 5)]


def test_left_branch_preferred_under_skip_past_last_event() -> None:
    both = lambda n: Stage(n, is_type("a"))  # noqa: E731
    p = SequencePattern(
        "p",
        (Stage("x", is_type("x")), _alt((both("l"),), (both("r"),))),
        skip=SkipStrategy("skip_past_last_event"),
    )
    dets = [d for d in feed(p, "xa") if d.kind == "match"]
    assert [d.channels for d in dets] == [("x", "l")]


def test_permute_in_lexicographic_order() -> None:
    p = SequencePattern("p", (Permute(tuple(Stage(n, is_type(n)) for n in "abc"), inner=Contiguity.STRICT),))
    got = [(d.seqs, d.channels) for d in feed(p, "cabxbca") if d.kind == "match"]
    assert got == [((0, 1, 2), ("c", "a", "b")), ((4, 5, 6), ("b", "c", "a"))]


@pytest.mark.parametrize(
    ("stages", "message"),
    [
        ((Alternation(((Stage("a"),),)),), "at least two branches"),
        ((Alternation(((Stage("a"),), ())),), "at least one stage"),
        ((Permute((Stage("a"),)),), "at least two elements"),
        ((Permute((Stage("a"), Stage("b", quantifier=Quantifier(optional=True)))),), "optional"),
        ((Alternation(((Stage("a"),), (Stage("a"),))),), "duplicate stage name"),
        (
            (Stage("x"), Stage("n", negated=True), Alternation(((Stage("a"),), (Stage("b"),)))),
            "negated stage",
        ),
        ((Alternation(((Stage("a"), Stage("n", negated=True)), (Stage("b"),))),), "negated stage cannot end"),
        (
            (Alternation(((Stage("a", quantifier=Quantifier(optional=True)),), (Stage("b"),))),),
            "can match no",
        ),
    ],
)
def test_bad_alternations_are_refused(stages: tuple[Any, ...], message: str) -> None:
    with pytest.raises(PatternError, match=message):
        NFATestHarness(SequencePattern("p", stages, within_ms=10))
