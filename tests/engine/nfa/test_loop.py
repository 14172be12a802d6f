"""The loop fast path (``a, b{n,} relaxed, c``: P3 / P5 shapes) behaves exactly like the general NFA."""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.nfa.test_linear import CONDITIONS, _harness_run, streams
from workbench.engine.nfa import (
    AggregateSpec,
    Contiguity,
    NFAMatcher,
    Quantifier,
    SequencePattern,
    SkipStrategy,
    Stage,
)
from workbench.engine.runtime import Engine
from workbench.errors import CepError

RELAXED = Contiguity.RELAXED
#: loop conditions: event-only, reading aggregates (both views), reading ``matched``
LOOP_CONDITIONS: list[Any] = [
    *CONDITIONS,
    "avg_b > 2.0037",
    "(sum_b or 0) + e.v < 9",
    "count_b < 3 or e.v > 3",
    "max_a is None or e.v >= max_a",
    "min_c is None and e.v * 2 > sum_b",  # fails while sum_b is None: errors must agree too
    "len(matched('b')) < 3 and e.v != 1",
    lambda e, ctx: ctx["avg_b"] is None or ctx.aggregate("avg_b") <= e.v + 1,
    lambda e, ctx: len(ctx.matched("a")) == 1 and ctx.timestamp >= 0 and e.type != "d",
]
AGGREGATES = (
    AggregateSpec("avg_b", "avg", "b", "v", include_current=True),
    AggregateSpec("sum_b", "sum", "b", "v"),
    AggregateSpec("count_b", "count", "b"),
    AggregateSpec("max_a", "max", "a", "v"),
    AggregateSpec("min_c", "min", "c", "v"),
)


@st.composite
def loop_patterns(
    draw: st.DrawFn,
    loop_conditions: Sequence[Any] = LOOP_CONDITIONS,
    aggregates: tuple[AggregateSpec, ...] = AGGREGATES,
) -> SequencePattern:
    """``begin a, followedBy b.timesOrMore(n), followedBy c`` with random conditions and options
    (``b``'s condition from ``loop_conditions``, reading ``aggregates``)."""
    a = Stage("a", draw(st.sampled_from(CONDITIONS)), types=draw(st.sampled_from([(), ("a",), ("a", "c")])))
    if a.where is None and not a.types:
        a = Stage("a", types=("a",))
    n = draw(st.integers(1, 3))
    b = Stage(
        "b",
        draw(st.sampled_from(loop_conditions)),
        RELAXED,
        types=draw(st.sampled_from([(), ("b",), ("b", "c")])),
        quantifier=Quantifier.one_or_more()
        if n == 1 and draw(st.booleans())
        else Quantifier.times_or_more(n),
    )
    c = Stage(
        "c", draw(st.sampled_from(CONDITIONS)), RELAXED, types=draw(st.sampled_from([(), ("c",), ("b", "c")]))
    )
    if c.where is None and not c.types:
        c = Stage("c", types=("c",))
    if b.where is None and not b.types:
        b = Stage("b", types=("b",), contiguity=RELAXED, quantifier=b.quantifier)
    return SequencePattern(
        "p",
        (a, b, c),
        within_ms=draw(st.sampled_from([None, 4, 8, 20])),
        max_partial_matches=draw(st.sampled_from([None, None, 4, 10])),
        emit_timeouts=draw(st.booleans()),
        aggregates=aggregates,
    )


def _engine_run(matcher: NFAMatcher, events: list[dict[str, Any]], snapshot_at: int | None = None) -> Any:
    """Detections, trace records and warnings; with ``snapshot_at``, restored into a new engine there."""
    engine = Engine([matcher], trace=True)
    detections: list[Any] = []
    traces: list[Any] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i, e in enumerate(events):
            if i == snapshot_at:
                blob = pickle.loads(pickle.dumps(engine.snapshot()))
                detections += engine.detections
                traces += engine.trace_records
                engine = Engine([matcher], trace=True)
                engine.restore(blob)
            engine.process(e)
        engine.advance_time(events[-1]["time"] if events else 0)
        engine.finish()
    return detections + engine.detections, traces + engine.trace_records, [str(w.message) for w in caught]


def _outcome(run: Any, *args: Any) -> Any:
    """The run's result, or the error it raised (a condition may fail: same message either way)."""
    try:
        return run(*args)
    except CepError as err:
        return type(err).__name__, str(err)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_patterns(), streams(), st.integers(0, 40))
def test_loop_path_equals_general_nfa_in_the_engine(
    pattern: SequencePattern, events: list[dict[str, Any]], snapshot_at: int
) -> None:
    fast = NFAMatcher(pattern)
    assert fast.fast_path == "loop"
    general = NFAMatcher(pattern, specialise=False)
    assert general.fast_path is None
    assert _outcome(_engine_run, general, events) == _outcome(_engine_run, fast, events, snapshot_at)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_patterns(), streams(ordered=False))
def test_loop_path_equals_general_nfa_out_of_order(
    pattern: SequencePattern, events: list[dict[str, Any]]
) -> None:
    fast = NFAMatcher(pattern)
    assert fast.fast_path == "loop"
    general = NFAMatcher(pattern, specialise=False)
    assert _outcome(_harness_run, general, events) == _outcome(_harness_run, fast, events)


def test_long_runs_emit_every_prefix_like_the_general_nfa() -> None:
    # P3's documented example: L T1 T2 T3 O1 T4 O2 gives {T1,T2}+O1, {T1,T2,T3}+O1, {T1..T4}+O2.
    p = SequencePattern(
        "P3",
        (
            Stage("a", types=("login",)),
            Stage("b", contiguity=RELAXED, types=("trade",), quantifier=Quantifier.times_or_more(2)),
            Stage("c", contiguity=RELAXED, types=("logout",)),
        ),
        within_ms=100,
    )
    kinds = ["login", "trade", "trade", "trade", "logout", "trade", "logout"]
    events = [{"type": k, "time": i, "key": "u", "v": 0} for i, k in enumerate(kinds)]
    fast = NFAMatcher(p)
    assert fast.fast_path == "loop"
    detections = _engine_run(fast, events)[0]
    matches = [[e.seq for e in d.events] for d in detections if d.kind == "match"]
    # the longer prefix first: the run that just took T3 is older than the one waiting since T3
    assert matches == [[0, 1, 2, 3, 4], [0, 1, 2, 4], [0, 1, 2, 3, 5, 6]]
    assert detections == _engine_run(NFAMatcher(p, specialise=False), events)[0]


def test_only_the_loop_shape_takes_the_loop_path() -> None:
    a, c = Stage("a", types=("a",)), Stage("c", contiguity=RELAXED, types=("c",))
    loop = Stage("b", contiguity=RELAXED, types=("b",), quantifier=Quantifier.one_or_more())
    assert NFAMatcher(SequencePattern("p", (a, loop, c))).fast_path == "loop"
    assert NFAMatcher(SequencePattern("p", (a, loop, c)), specialise=False).fast_path is None
    others = [
        Stage("b", contiguity=RELAXED, types=("b",), quantifier=Quantifier(1, None, greedy=True)),
        Stage("b", contiguity=RELAXED, types=("b",), quantifier=Quantifier(1, None, inner=Contiguity.STRICT)),
        Stage("b", contiguity=RELAXED, types=("b",), quantifier=Quantifier(2, 4)),
        Stage("b", contiguity=RELAXED, types=("b",), quantifier=Quantifier(1, None, optional=True)),
        Stage("b", contiguity=Contiguity.STRICT, types=("b",), quantifier=Quantifier.one_or_more()),
        Stage("b", contiguity=RELAXED, types=("b",), until="e.v > 3", quantifier=Quantifier.one_or_more()),
    ]
    for b in others:
        assert NFAMatcher(SequencePattern("p", (a, b, c))).fast_path is None, b
    any_c = Stage("c", contiguity=Contiguity.NONDETERMINISTIC_RELAXED, types=("c",))
    assert NFAMatcher(SequencePattern("p", (a, loop, any_c))).fast_path is None
    assert NFAMatcher(SequencePattern("p", (a, loop))).fast_path is None
    skip = SequencePattern("p", (a, loop, c), skip=SkipStrategy("skip_past_last_event"))
    assert NFAMatcher(skip).fast_path is None
    assert NFAMatcher(SequencePattern("p", (a, loop, c), flink_order=True)).fast_path is None


def test_aggregates_are_copied_per_branch_not_shared() -> None:
    # Two logins share no aggregate state: the second run's average starts fresh.
    p = SequencePattern(
        "P5",
        (
            Stage("a", types=("login",)),
            Stage("b", "avg_b > 5", RELAXED, types=("trade",), quantifier=Quantifier.one_or_more()),
            Stage("c", contiguity=RELAXED, types=("logout",)),
        ),
        aggregates=(AggregateSpec("avg_b", "avg", "b", "v", include_current=True),),
    )
    rows = [("login", 0), ("trade", 9), ("login", 0), ("trade", 2), ("trade", 8), ("logout", 0)]
    events = [{"type": k, "time": i, "key": "u", "v": v} for i, (k, v) in enumerate(rows)]
    fast, general = NFAMatcher(p), NFAMatcher(p, specialise=False)
    assert fast.fast_path == "loop"
    got = _engine_run(fast, events)
    assert got == _engine_run(general, events)
    # login 0 takes 9, 2 (avg 5.5), 8; login 2 skips 2 (avg 2) and takes 8
    matches = sorted([e.seq for e in d.events] for d in got[0] if d.kind == "match")
    assert matches == [[0, 1, 3, 4, 5], [0, 1, 3, 5], [0, 1, 5], [2, 4, 5]]
