"""The linear fast path (chains of single-event stages) behaves exactly like the general NFA."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.engine.nfa.test_index import rich_patterns
from tests.engine.nfa.test_oracle import build, scenarios
from workbench.conformance import sequences
from workbench.conformance.runner import RunOptions
from workbench.engine import runtime
from workbench.engine.families import compile_matcher
from workbench.engine.matcher import Matcher
from workbench.engine.nfa import (
    Contiguity,
    GroupStage,
    NFAMatcher,
    Quantifier,
    SequencePattern,
    SkipStrategy,
    Stage,
)
from workbench.engine.runtime import Engine
from workbench.errors import CepError, PatternError
from workbench.testing import NFATestHarness

CONTIGUITIES = list(Contiguity)
CONDITIONS = [
    None,
    "e.v > 2",
    "e.type == 'a' or e.v == 0",
    "e.type in ('b', 'c') and e.v < 4",
    "e.v % 2 == 1",
    "2 <= e.v",
    "e.v != 'x'",
]


@st.composite
def stages(draw: st.DrawFn, name: str) -> Stage:
    types = draw(st.sampled_from([(), ("a",), ("b",), ("a", "c"), ("c",)]))
    where = draw(st.sampled_from(CONDITIONS))
    if not types and where is None:
        types = ("b",)
    times = draw(st.sampled_from([1, 1, 1, 2]))
    inner = draw(st.sampled_from(CONTIGUITIES))
    quantifier = Quantifier.times(times) if times > 1 else Quantifier()
    quantifier = Quantifier(quantifier.min, quantifier.max, inner=inner)
    return Stage(name, where, draw(st.sampled_from(CONTIGUITIES)), types=types, quantifier=quantifier)


@st.composite
def linear_patterns(draw: st.DrawFn) -> SequencePattern:
    n = draw(st.integers(1, 4))
    elems: list[Stage | GroupStage] = [draw(stages(f"s{i}")) for i in range(n)]
    if n >= 2 and draw(st.booleans()):  # notFollowedBy between two stages (one or two in a row)
        at = draw(st.integers(1, n - 1))
        for k in range(draw(st.integers(1, 2))):
            where = draw(st.sampled_from(CONDITIONS[1:]))
            types = draw(st.sampled_from([(), ("c",), ("d",)]))
            elems.insert(at, Stage(f"x{k}", where, Contiguity.RELAXED, negated=True, types=types))
    if n >= 2 and draw(st.booleans()):
        group = GroupStage("g", (draw(stages("g0")), draw(stages("g1"))), draw(st.sampled_from(CONTIGUITIES)))
        elems.insert(draw(st.integers(1, n)), group)
    return SequencePattern(
        "p",
        tuple(elems),
        within_ms=draw(st.sampled_from([None, 3, 6, 15])),
        max_partial_matches=draw(st.sampled_from([None, None, 3, 8])),
        emit_timeouts=draw(st.booleans()),
        skip=SkipStrategy(draw(st.sampled_from(["no_skip", "skip_to_next", "skip_past_last_event"]))),
    )


@st.composite
def streams(draw: st.DrawFn, ordered: bool = True) -> list[dict[str, Any]]:
    n = draw(st.integers(0, 40))
    out, t = [], 0
    for _ in range(n):
        t = t + draw(st.integers(0, 3)) if ordered else draw(st.integers(0, 30))
        out.append(
            {
                "type": draw(st.sampled_from("abcd")),
                "time": t,
                "key": draw(st.sampled_from(["k1", "k2"])),
                "v": draw(st.integers(0, 5)),
            }
        )
    return out


def _engine_run(matcher: NFAMatcher, events: list[dict[str, Any]]) -> tuple[Any, ...]:
    engine = Engine([matcher], trace=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for e in events:
            engine.process(e)
        engine.advance_time(events[-1]["time"] if events else 0)
        engine.finish()
    return engine.detections, engine.trace_records, [str(w.message) for w in caught]


def _harness_run(matcher: NFAMatcher, events: list[dict[str, Any]]) -> tuple[Any, ...]:
    h = NFATestHarness(matcher)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for e in events:
            h.feed(e)
        h.advance(1000)
    return h.detections, [str(w.message) for w in caught]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linear_patterns(), streams())
def test_fast_path_equals_general_nfa_in_the_engine(
    pattern: SequencePattern, events: list[dict[str, Any]]
) -> None:
    fast = NFAMatcher(pattern)
    assert fast.specialised
    general = NFAMatcher(pattern, specialise=False)
    assert not general.specialised
    assert _engine_run(general, events) == _engine_run(fast, events)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linear_patterns(), streams(ordered=False))
def test_fast_path_equals_general_nfa_out_of_order(
    pattern: SequencePattern, events: list[dict[str, Any]]
) -> None:
    # The NFA-level harness feeds events in input order whatever their timestamps.
    fast = NFAMatcher(pattern)
    assert fast.specialised
    assert _harness_run(NFAMatcher(pattern, specialise=False), events) == _harness_run(fast, events)


def test_only_chains_of_single_event_stages_are_specialised() -> None:
    a, b = Stage("a", types=("a",)), Stage("b", types=("b",))
    assert NFAMatcher(SequencePattern("p", (a, b))).specialised
    looping = Stage("b", types=("b",), quantifier=Quantifier.one_or_more())
    negated = Stage("x", types=("x",), negated=True)
    not_next = Stage("x", types=("x",), contiguity=Contiguity.STRICT, negated=True)
    callable_b = Stage("b", lambda e: e.type == "b")
    assert NFAMatcher(SequencePattern("p", (a, negated, b))).specialised
    for stages_ in [(a, looping), (a, not_next, b), (a, negated), (a, callable_b)]:
        assert not NFAMatcher(SequencePattern("p", stages_, within_ms=5)).specialised
    skip = SequencePattern("p", (a, b), skip=SkipStrategy("skip_to_first", "b"))
    assert not NFAMatcher(skip).specialised
    assert NFAMatcher(SequencePattern("p", (a, b), skip=SkipStrategy("skip_past_last_event"))).specialised


DATA = Path(__file__).resolve().parents[2] / "data" / "conformance"
CASES = sorted((DATA / "flink").glob("*.json")) + [
    p for p in sorted((DATA / "prova").glob("*.json")) if '"sequence"' in p.read_text()
]


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_conformance_case_passes_on_the_general_nfa_too(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus runs on the fast path by default; here every case runs with it switched off."""

    def general(pattern: object) -> Matcher:
        if isinstance(pattern, SequencePattern):
            return NFAMatcher(pattern, specialise=False)
        return compile_matcher(pattern)

    for module in (sequences, runtime):  # every place the case's pattern is compiled
        monkeypatch.setattr(module, "compile_matcher", general)
    case = json.loads(path.read_text(encoding="utf-8"))
    assert sequences.run_case(case, RunOptions()) == []


# ---------------------------------------------------------------------- own paths vs shared buffer
def _full_run(matcher: NFAMatcher, types: list[str], times: list[int]) -> tuple[Any, ...]:
    events = [
        {"type": ty, "time": t, "key": "k" if i % 3 else "j"}
        for i, (ty, t) in enumerate(zip(types, times, strict=True))
    ]
    return _engine_run(matcher, events)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rich_patterns(), st.lists(st.sampled_from("abcdx"), min_size=1, max_size=14), st.data())
def test_own_paths_equal_the_shared_buffer_on_rich_patterns(
    pattern: SequencePattern, types: list[str], data: st.DataObject
) -> None:
    """Negations, greedy loops, until, windows, previous-event windows, skip strategies."""
    skip = data.draw(st.sampled_from(["no_skip", "skip_to_next", "skip_past_last_event", "first", "last"]))
    target = data.draw(st.sampled_from([s.name for s in pattern.stages]))
    strategy = SkipStrategy(f"skip_to_{skip}", target) if skip in ("first", "last") else SkipStrategy(skip)  # type: ignore[arg-type]
    pattern = dataclasses.replace(pattern, skip=strategy, emit_timeouts=data.draw(st.booleans()))
    try:
        general = NFAMatcher(pattern, specialise=False)
    except PatternError:
        assume(False)
    times = sorted(data.draw(st.lists(st.integers(0, 12), min_size=len(types), max_size=len(types))))
    assert _full_run(general, types, times) == _full_run(NFAMatcher(pattern), types, times)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_own_paths_equal_the_shared_buffer_on_oracle_scenarios(sc: dict[str, Any]) -> None:
    """Optional and quantified stages with every contiguity, allowCombinations, skip strategies."""
    pattern = build(sc)
    assert _full_run(NFAMatcher(pattern, specialise=False), sc["types"], sc["times"]) == _full_run(
        NFAMatcher(pattern), sc["types"], sc["times"]
    )


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_conformance_case_in_indexed_order_is_identical_on_both_paths(path: Path) -> None:
    """The adapter runs cases with ``flink_order`` (the general NFA): here every case runs in the
    default order through the fast paths and through the general NFA, with identical detections."""
    case = json.loads(path.read_text(encoding="utf-8"))
    try:
        built = sequences.build_pattern(case["pattern"], "p", emit_timeouts=True)
        pattern = dataclasses.replace(built, flink_order=False)
        general = NFAMatcher(pattern, specialise=False)
    except CepError:
        assert case.get("expect_error")
        return

    def run(matcher: NFAMatcher) -> tuple[Any, ...]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if "operator" in case:
                    return tuple(sequences._run_operator(matcher, case.get("events", []), case["operator"]))
                return tuple(
                    sequences._run_harness(matcher, case.get("events", []), case.get("final_advance_ms"))
                )
        except CepError as err:
            return (type(err).__name__, str(err))

    assert run(general) == run(NFAMatcher(pattern))


def test_a_match_held_twice_behind_a_capped_instance_is_traced_once_per_completion() -> None:
    # found by the property above: instance 2 completes at events 6 and 7 while instance 1 (capped
    # later) holds both back; the event-7 completion alone is traced "held" then, as in the general plan
    pattern = SequencePattern(
        "p",
        (
            Stage("s0", "e.v > 2", Contiguity.STRICT),
            Stage("s1", None, Contiguity.RELAXED, types=("b",)),
            Stage("s2", "e.type == 'a' or e.v == 0", Contiguity.NONDETERMINISTIC_RELAXED),
            Stage("s3", "e.v % 2 == 1", Contiguity.NONDETERMINISTIC_RELAXED),
        ),
        skip=SkipStrategy("skip_to_next"),
        max_partial_matches=3,
    )
    rows = [("a", "k1", 3), ("a", "k1", 3), ("b", "k1", 0), ("a", "k1", 0)]
    rows += [("a", "k2", 0), ("a", "k2", 0), ("b", "k1", 1), ("a", "k1", 1)]
    events = [{"type": typ, "time": 0, "key": key, "v": v} for typ, key, v in rows]
    fast = NFAMatcher(pattern)
    assert fast.specialised
    assert _engine_run(NFAMatcher(pattern, specialise=False), events) == _engine_run(fast, events)
