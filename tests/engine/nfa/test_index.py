"""The event-type index (partial matches are visited only by events that can change them) and the cap."""

from __future__ import annotations

import dataclasses
import warnings

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.engine.oracle import feed, is_type, seqs
from workbench.engine.events import Event
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import Contiguity, Quantifier, SequencePattern, Stage, begin
from workbench.engine.runtime import Engine
from workbench.errors import PatternError
from workbench.testing import NFATestHarness


class Counter:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, e: Event) -> bool:
        self.calls += 1
        return bool(e.get("ok", True))


def test_wakes_sets() -> None:
    m = compile_matcher(begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).build("p"))
    assert m.wakes("b") == frozenset({"b"})
    strict = compile_matcher(begin("a").where(is_type("a")).next("b").where(is_type("b")).build("p"))
    assert strict.wakes("b") is None  # any other event kills the run: must be visited
    opaque = compile_matcher(begin("a").where(is_type("a")).followed_by("b").where("e.price > 3").build("p"))
    assert opaque.wakes("b") is None  # unknown condition: fall back to visiting


def test_waiting_runs_are_not_visited_by_unrelated_events() -> None:
    counter = Counter()
    p = SequencePattern("p", (Stage("a", is_type("a")), Stage("b", counter, types=("b",))))
    h = NFATestHarness(p)
    for i in range(200):
        h.feed({"type": "a", "time": i})
    for i in range(1000):
        h.feed({"type": "x", "time": 200 + i})
    assert counter.calls == 0
    assert len(h.state(None).runs) == 200
    h.feed({"type": "b", "time": 2000})
    assert counter.calls == 200
    assert len(h.detections) == 200


def test_without_type_information_every_run_is_checked() -> None:
    counter = Counter()
    p = SequencePattern("p", (Stage("a", is_type("a")), Stage("b", counter)))
    h = NFATestHarness(p)
    for i in range(20):
        h.feed({"type": "a", "time": i})
    h.feed({"type": "x", "time": 100, "ok": False})
    assert counter.calls >= 20


def test_index_gives_the_same_matches_as_full_scan() -> None:
    typed = begin("a").where(is_type("a")).followed_by_any("b").where(is_type("b")).build("p")
    chain = begin("a").where("e.type == 'a' or e.get('z') == 1").followed_by_any("b")
    opaque = chain.where("e.type == 'b' or e.get('z') == 1").build("q")
    stream = "axbbxab"
    assert sorted(seqs(feed(typed, stream))) == sorted(seqs(feed(opaque, stream)))


def test_cap_on_partial_matches_warns_and_counts() -> None:
    p = SequencePattern("p", (Stage("a", is_type("a")), Stage("b", is_type("b"))), max_partial_matches=10)
    h = NFATestHarness(p)
    for i in range(10):
        h.feed({"type": "a", "time": i})
    with pytest.warns(RuntimeWarning, match="max_partial_matches"):
        h.feed({"type": "a", "time": 10})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per pattern and run: no second warning
        for i in range(11, 25):
            h.feed({"type": "a", "time": i})
    state = h.state(None)
    assert state.partial_matches == 10
    assert state.dropped == 15
    h.feed({"type": "b", "time": 100})
    assert sorted(d.seqs[0] for d in h.detections) == list(range(15, 25))  # the oldest were dropped


def test_engine_routes_only_relevant_types_and_windows_still_expire() -> None:
    p = begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).within(10).build("p")
    m = compile_matcher(p)
    assert m.event_types() == frozenset({"a", "b"})
    assert (
        compile_matcher(begin("a").where(is_type("a")).next("b").where(is_type("b")).build("q")).event_types()
        is None
    )
    engine = Engine([m])
    engine.process({"type": "a", "time": 0})
    for t in range(1, 30):
        engine.process({"type": "x", "time": t})
    assert [(d.kind, d.seqs, d.time) for d in engine.detections] == [("timeout", (0,), 10)]


@st.composite
def rich_patterns(draw: st.DrawFn) -> SequencePattern:
    """Random patterns with negations, greedy loops, until, windows (type-test conditions)."""
    n = draw(st.integers(2, 4))
    stages: list[Stage] = []
    for i in range(n):
        types = tuple(sorted(draw(st.sets(st.sampled_from("abcd"), min_size=1, max_size=2))))
        negated = i > 0 and draw(st.booleans()) and not stages[-1].quantifier.optional
        contiguity = Contiguity.STRICT if i == 0 else draw(st.sampled_from(list(Contiguity)))
        if negated:
            contiguity = draw(st.sampled_from([Contiguity.STRICT, Contiguity.RELAXED]))
            stages.append(Stage(f"s{i}", is_type(*types), contiguity, negated=True))
            continue
        lo = draw(st.integers(1, 2))
        hi = draw(st.sampled_from([1, 2, 3, None]))
        hi = None if hi is None else max(hi, lo)
        looping = hi is None
        inner = draw(st.sampled_from(list(Contiguity)))
        greedy = lo != hi and inner is not Contiguity.NONDETERMINISTIC_RELAXED and draw(st.booleans())
        optional = draw(st.booleans()) and not (stages and stages[-1].quantifier.greedy)
        until = is_type(draw(st.sampled_from("abcd"))) if looping and draw(st.booleans()) else None
        prev = draw(st.sampled_from([None, 2, 4])) if lo == hi == 1 else None
        q = Quantifier(lo, hi, optional, greedy, inner)
        stages.append(
            Stage(f"s{i}", is_type(*types), contiguity, quantifier=q, until=until, within_prev_ms=prev)
        )
    return SequencePattern("p", tuple(stages), within_ms=draw(st.sampled_from([None, 4, 8])))


@settings(max_examples=300, deadline=None)
@given(rich_patterns(), st.lists(st.sampled_from("abcdx"), min_size=1, max_size=12))
def test_indexed_and_full_scan_agree_on_rich_patterns(pattern: SequencePattern, types: list[str]) -> None:
    try:
        compile_matcher(pattern)
    except PatternError:
        assume(False)

    def run(flink_order: bool) -> list[tuple[object, ...]]:
        p = dataclasses.replace(pattern, flink_order=flink_order)
        out = feed(p, types, times=[i // 2 for i in range(len(types))])
        return sorted((d.kind, d.time, tuple(sorted(d.seqs)), d.channels) for d in out)

    assert run(False) == run(True)
