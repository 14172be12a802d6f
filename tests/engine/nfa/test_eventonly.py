"""The event-only plan (conditions that read only the event: P3any's shape) behaves exactly like the
general NFA: detections in order with their instances and times, timeouts, traces, timers, the cap,
warnings and snapshots mid-stream."""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.engine.nfa.test_linear import CONDITIONS, _harness_run, streams
from tests.engine.nfa.test_loop import _engine_run, _outcome
from workbench.engine.nfa import (
    AggregateSpec,
    Contiguity,
    GroupStage,
    NFAMatcher,
    Quantifier,
    SequencePattern,
    SkipStrategy,
    Stage,
)
from workbench.engine.nfa.eventonly import EventOnlyPlan, EventOnlyState
from workbench.engine.nfa.general import GeneralPlan
from workbench.engine.runtime import Engine
from workbench.errors import PatternError

ANY = Contiguity.NONDETERMINISTIC_RELAXED
CONTIGUITIES = [Contiguity.STRICT, Contiguity.RELAXED, ANY, ANY]


@st.composite
def quantifiers(draw: st.DrawFn) -> Quantifier:
    """A stage's count: one, ``times(n)``, ``times(n, m)``, ``timesOrMore(n)``, maybe optional or
    greedy, with any inner contiguity (``allowCombinations`` most often)."""
    lo = draw(st.integers(1, 3))
    hi = draw(st.sampled_from([1, lo, lo + 1, lo + 2, None]))
    hi = lo if hi is not None and hi < lo else hi
    looping = hi is None or hi > 1
    return Quantifier(
        lo,
        hi,
        optional=draw(st.booleans()) and draw(st.booleans()),
        greedy=looping and draw(st.sampled_from([False, False, True])),
        inner=draw(st.sampled_from(CONTIGUITIES)),
    )


@st.composite
def stages(draw: st.DrawFn, name: str, first: bool = False) -> Stage:
    types = draw(st.sampled_from([(), ("a",), ("b",), ("a", "c"), ("c",), ("b", "d")]))
    where = draw(st.sampled_from(CONDITIONS))
    if not types and where is None:
        types = ("b",)
    quantifier = draw(quantifiers()) if draw(st.booleans()) else Quantifier()
    if first and quantifier.optional:
        quantifier = Quantifier(quantifier.min, quantifier.max, inner=quantifier.inner)
    until = draw(st.sampled_from([None, None, "e.v == 5", "e.type == 'd'"])) if quantifier.looping else None
    contiguity = draw(st.sampled_from(CONTIGUITIES))
    return Stage(name, where, contiguity, types=types, quantifier=quantifier, until=until)


@st.composite
def event_only_patterns(draw: st.DrawFn) -> SequencePattern:
    """Two to four stages (sometimes a group) whose conditions read only the event."""
    n = draw(st.integers(2, 4))
    elems: list[Stage | GroupStage] = [draw(stages("s0", first=True))]
    elems += [draw(stages(f"s{i}")) for i in range(1, n)]
    if draw(st.integers(0, 4)) == 0:
        group = GroupStage("g", (draw(stages("g0")), draw(stages("g1"))), draw(st.sampled_from(CONTIGUITIES)))
        elems.insert(draw(st.integers(1, n)), group)
    return SequencePattern(
        "p",
        tuple(elems),
        within_ms=draw(st.sampled_from([None, 3, 6, 15])),
        # why always a cap (200 rarely binds): `timesOrMore` with allowCombinations and no window has
        # exponentially many partial matches, and the general plan (the oracle) then runs for hours
        max_partial_matches=draw(st.sampled_from([200, 200, 3, 8, 20])),
        emit_timeouts=draw(st.booleans()),
    )


@st.composite
def p3any_family(draw: st.DrawFn) -> SequencePattern:
    """P3any's family: ``a followedByAny b{n,m} allowCombinations followedByAny c``."""
    lo = draw(st.integers(1, 3))
    hi = draw(st.sampled_from([lo, lo + 1, lo + 2, None]))
    b_types = draw(st.sampled_from([("b",), ("b", "c"), ()]))
    b = Stage(
        "b",
        draw(st.sampled_from(CONDITIONS)) if b_types else "e.v > 1",
        draw(st.sampled_from([ANY, ANY, Contiguity.RELAXED])),
        types=b_types,
        quantifier=Quantifier(lo, hi, optional=draw(st.booleans()) and draw(st.booleans()), inner=ANY),
    )
    c = Stage("c", draw(st.sampled_from(CONDITIONS)), ANY, types=draw(st.sampled_from([("c",), ("b", "c")])))
    return SequencePattern(
        "p",
        (Stage("a", draw(st.sampled_from(CONDITIONS)), types=("a",)), b, c),
        within_ms=draw(st.sampled_from([None, 4, 8, 20])),
        max_partial_matches=draw(st.sampled_from([None, None, 4, 10, 30])),
        emit_timeouts=draw(st.booleans()),
    )


def _event_only(pattern: SequencePattern) -> NFAMatcher:
    """The pattern's matcher; the example is skipped unless it is valid and runs in the plan."""
    try:
        fast = NFAMatcher(pattern)
    except PatternError:  # why: random options may combine in ways the compiler refuses
        assume(False)
    assume(isinstance(fast.plan, EventOnlyPlan))
    return fast


def _check(pattern: SequencePattern, events: list[dict[str, Any]], snapshot_at: int) -> None:
    fast = _event_only(pattern)
    general = NFAMatcher(pattern, specialise=False)
    assert isinstance(general.plan, GeneralPlan)
    assert _outcome(_engine_run, general, events) == _outcome(_engine_run, fast, events, snapshot_at)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p3any_family(), streams(), st.integers(0, 40))
def test_p3any_family_equals_general_nfa(
    pattern: SequencePattern, events: list[dict[str, Any]], snapshot_at: int
) -> None:
    _check(pattern, events, snapshot_at)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_only_patterns(), streams(), st.integers(0, 40))
def test_event_only_patterns_equal_general_nfa(
    pattern: SequencePattern, events: list[dict[str, Any]], snapshot_at: int
) -> None:
    _check(pattern, events, snapshot_at)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_only_patterns(), streams(ordered=False))
def test_event_only_plan_equals_general_nfa_out_of_order(
    pattern: SequencePattern, events: list[dict[str, Any]]
) -> None:
    fast = _event_only(pattern)
    general = NFAMatcher(pattern, specialise=False)
    assert _outcome(_harness_run, general, events) == _outcome(_harness_run, fast, events)


def _p3any(**options: Any) -> SequencePattern:
    return SequencePattern(
        "P3any",
        (
            Stage("a", types=("login",)),
            Stage("b", contiguity=ANY, types=("trade",), quantifier=Quantifier(2, 4, inner=ANY)),
            Stage("c", contiguity=ANY, types=("logout",)),
        ),
        **{"within_ms": 10, **options},
    )


def test_p3any_runs_in_the_event_only_plan_and_matches_every_combination() -> None:
    matcher = NFAMatcher(_p3any())
    assert isinstance(matcher.plan, EventOnlyPlan)
    engine = Engine([matcher])
    types = ["login", "trade", "view", "trade", "trade", "logout"]
    engine.process_many([{"type": t, "time": i, "key": "k"} for i, t in enumerate(types)])
    engine.finish()
    got = [tuple(e.time for e in d.events) for d in engine.detections if d.kind == "match"]
    # every 2..4 of the three trades (1, 3, 4), in the general plan's order
    assert sorted(got) == sorted([(0, 1, 3, 5), (0, 1, 4, 5), (0, 3, 4, 5), (0, 1, 3, 4, 5)])
    assert engine.detections == _general_detections(types)


def _general_detections(types: list[str]) -> list[Any]:
    engine = Engine([NFAMatcher(_p3any(), specialise=False)])
    engine.process_many([{"type": t, "time": i, "key": "k"} for i, t in enumerate(types)])
    engine.finish()
    return engine.detections


def test_the_cap_drops_the_oldest_partial_matches_like_the_general_plan() -> None:
    types = ["login", "trade", "login", "trade", "trade", "logout", "trade", "logout"]
    events = [{"type": t, "time": i, "key": "k"} for i, t in enumerate(types)]
    out = []
    for specialise in (True, False):
        engine = Engine([NFAMatcher(_p3any(max_partial_matches=4), specialise=specialise)])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            engine.process_many(events)
            engine.finish()
        out.append((engine.detections, engine.stats["dropped"], [str(w.message) for w in caught]))
    assert out[0] == out[1]
    assert out[0][1] > 0


def test_patterns_reading_more_than_the_event_are_not_event_only() -> None:
    reads_aggregate = SequencePattern(
        "p",
        (Stage("a", types=("a",)), Stage("b", "avg_v > 1", ANY, types=("b",)), Stage("c", contiguity=ANY)),
        aggregates=(AggregateSpec("avg_v", "avg", "b", "v", include_current=True),),
    )
    negated = SequencePattern(
        "p", (Stage("a"), Stage("x", negated=True, types=("x",)), Stage("c", contiguity=ANY, types=("c",)))
    )
    skipping = _p3any(skip=SkipStrategy("skip_past_last_event"))
    for pattern in (reads_aggregate, negated, skipping):
        assert not isinstance(NFAMatcher(pattern).plan, EventOnlyPlan)
    assert EventOnlyState().partial_matches == 0


@settings(max_examples=40, deadline=None)
@given(
    keys=st.lists(st.integers(0, 4), min_size=1, max_size=200),
    types=st.lists(st.sampled_from(["login", "trade", "logout", "view"]), min_size=200, max_size=200),
    limit=st.integers(1, 40),
)
def test_the_engine_budget_sheds_the_oldest_partial_matches_like_the_general_plan(
    keys: list[int], types: list[str], limit: int
) -> None:
    events = [{"type": typ, "time": i, "key": k} for i, (k, typ) in enumerate(zip(keys, types, strict=False))]
    out = []
    for specialise in (True, False):
        engine = Engine([NFAMatcher(_p3any(within_ms=None), specialise=specialise)], max_live=limit)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            engine.process_many(events)
            engine.finish()
        out.append((engine.detections, engine.stats["dropped"], [str(w.message) for w in caught]))
    assert out[0] == out[1]


def test_a_forged_partial_match_of_the_plan_is_refused_at_restore() -> None:
    import json

    import pytest

    from workbench.engine.snapshot import _digest
    from workbench.errors import CepError

    engine = Engine([NFAMatcher(_p3any())])
    engine.process_many([{"type": t, "time": i, "key": "k"} for i, t in enumerate(["login", "trade"])])
    envelope = json.loads(engine.snapshot())
    text = json.dumps(envelope["state"])
    group = '"workbench.engine.nfa.eventonly:Group"'
    assert group in text
    node = envelope["state"]

    def groups(n: object) -> list[dict[str, Any]]:
        if isinstance(n, dict):
            found = [n["v"]] if n.get("$o") == group.strip('"') else []
            return found + [g for v in n.values() for g in groups(v)]
        if isinstance(n, list):
            return [g for v in n for g in groups(v)]
        return []

    groups(node)[0]["mask"] = 0  # no state bit for its partial matches: the event would skip them
    envelope["digest"] = _digest(envelope["state"])
    with pytest.raises(CepError, match="partial match waiting in state"):
        Engine([NFAMatcher(_p3any())]).restore(json.dumps(envelope).encode())
