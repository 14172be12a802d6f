"""The generated loop-plan code (:mod:`workbench.engine.nfa.loopgen`) steps exactly like the interpreter.

Three runs of each random loop pattern over each random stream must agree on everything observable:
the generated ``process`` (what ``NFAMatcher`` runs), the loop plan's interpreter
(``LoopPlan.interpret``) and the general NFA on the shared buffer (``specialise=False``):
detections, condition errors (lenient and strict), warnings, traces, and (generated against
interpreted) the per-key states themselves after every event, with a snapshot restored midway.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import warnings
from collections.abc import Hashable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.nfa.test_loop import LOOP_CONDITIONS, loop_patterns
from workbench.engine import native
from workbench.engine.nfa import (
    AggregateSpec,
    Contiguity,
    NFAMatcher,
    Quantifier,
    SequencePattern,
    Stage,
)
from workbench.engine.nfa.loop import LoopPlan, LoopState
from workbench.engine.nfa.loopgen import generate
from workbench.engine.runtime import Engine
from workbench.errors import CepError

RELAXED = Contiguity.RELAXED
#: aggregate conditions the emitter inlines (and a few it hands to the interpreter)
GEN_CONDITIONS: list[Any] = [
    *LOOP_CONDITIONS,
    "-avg_b < -2",
    "not (sum_b > 3)",
    "sum_b is None or count_b >= 2",
    "max_b is not None and e.v >= max_b - 1",
    "avg_b * 2 > e.v + 1",
    "min_b > e.w",  # e.w is missing, None or NaN in most events
    "max_b < e.v or max_b is None",
    "sum_b + e.s > 1",  # e.s is a string: a runtime error on some events
    "e.s > 1",  # an event-only condition that fails
    "count_b // 2 == e.v % 3",
    "avg_b > 1 and e.v < 5",  # a BoolOp: the interpreted condition
    # compared as doubles natively (float and int constants, an event's number), or not (2**53 + 1)
    "avg_b >= 2.5",
    "avg_b == 2.5",
    "avg_b != 1",
    "e.v <= avg_b",
    "avg_b < 9007199254740993",
]
AGGREGATES = (
    AggregateSpec("avg_b", "avg", "b", "v", include_current=True),
    AggregateSpec("sum_b", "sum", "b", "v"),
    AggregateSpec("count_b", "count", "b"),
    AggregateSpec("max_a", "max", "a", "v"),
    AggregateSpec("min_c", "min", "c", "v"),
    AggregateSpec("max_b", "max", "b", "v", include_current=True),
    AggregateSpec("min_b", "min", "b", "v"),
)
VALUES = st.one_of(st.integers(0, 5), st.sampled_from([math.nan, None, 2.5, "x"]))


def gen_patterns() -> st.SearchStrategy[SequencePattern]:
    """``a, b{n,} relaxed, c`` with random conditions (event-only and aggregate), windows and caps."""
    return loop_patterns(GEN_CONDITIONS, AGGREGATES)


@st.composite
def gen_streams(draw: st.DrawFn, ordered: bool = True, base: int | float = 0) -> list[dict[str, Any]]:
    """Events with int, float, NaN, None, string and missing fields, in or out of order (times from
    ``base`` on)."""
    out, t = [], 0
    for _ in range(draw(st.integers(0, 40))):
        t = t + draw(st.integers(0, 3)) if ordered else draw(st.integers(0, 30))
        row: dict[str, Any] = {
            "type": draw(st.sampled_from("abcd")),
            "time": base + t,
            "key": draw(st.sampled_from("kl")),
        }
        if draw(st.integers(0, 9)):
            row["v"] = draw(st.one_of(st.integers(0, 5), st.sampled_from([math.nan, 2.5])))
        if not draw(st.integers(0, 6)):
            row["w"] = draw(VALUES)
        if not draw(st.integers(0, 8)):
            row["s"] = "x"
        out.append(row)
    return out


def gen_streams_from(base: int | float) -> st.SearchStrategy[list[dict[str, Any]]]:
    """:func:`gen_streams` with times from ``base`` on."""
    return gen_streams(base=base)


def interpreted(pattern: SequencePattern) -> NFAMatcher:
    """The matcher running the loop plan's interpreter instead of its generated code."""
    m = NFAMatcher(pattern)
    assert isinstance(m.plan, LoopPlan)
    # the plan's own too: the engine's fused loop calls it from the plan's kernel
    m.process = m.plan.process = m.plan.interpret  # type: ignore[assignment]
    _python_timers(m)
    return m


def _python_timers(m: NFAMatcher) -> None:
    """``m``'s window timers expire as the Python plan does (not as a native step's)."""
    python = LoopPlan.on_timer.__get__(m.plan)
    m.on_timer = m.unmeasured_on_timer = m.plan.on_timer = python  # type: ignore[method-assign]


def generated_python(pattern: SequencePattern) -> NFAMatcher:
    """The matcher running the generated Python step (where the native core would run its own)."""
    m = NFAMatcher(pattern)
    assert isinstance(m.plan, LoopPlan)
    m.process = m.plan.process = generate(m.plan)  # type: ignore[assignment]
    _python_timers(m)
    return m


def test_the_fused_loop_keeps_no_state_for_events_that_change_nothing() -> None:
    pattern = SequencePattern(
        "p",
        (
            Stage("a", types=("a",)),
            Stage("b", types=("b",), contiguity=RELAXED, quantifier=Quantifier.one_or_more()),
            Stage("c", types=("c",), contiguity=RELAXED),
        ),
        within_ms=10,
    )
    for matcher in (NFAMatcher(pattern), interpreted(pattern)):
        engine = Engine([matcher])
        engine.process_many([{"type": "d", "time": 1, "key": "k"}, {"type": "b", "time": 2, "key": "k"}])
        assert engine.state_of("p", "k") is None  # neither event can start a partial match
        engine.process_many([{"type": t, "time": 3 + i, "key": "k"} for i, t in enumerate("abdbc")])
        state = engine.state_of("p", "k")
        assert isinstance(state, LoopState)
        assert state.time == 7  # a "d" that changes nothing still moves the key's clock
        assert [d.seqs for d in engine.detections] == [(2, 3, 6), (2, 3, 5, 6)]


def _state(state: LoopState | None) -> Any:
    """Everything a loop state holds, comparable with ``==`` (runs are identity-compared dataclasses;
    aggregates are copied, since later events may update them in place)."""
    if state is None:
        return None
    runs = [
        (
            r.start_id,
            r.rid,
            r.code,
            r.start_ts,
            r.prev_ts,
            r.inst,
            [e.seq for e in r.events],
            [a.copy() for a in r.aggs],
        )
        for runs in (state.hot, state.cold, state.last)
        for r in runs
    ]
    return state.next_rid, state.dropped, state.time, state.scheduled, runs


def _run(
    matcher: NFAMatcher,
    events: list[dict[str, Any]],
    *,
    trace: bool = False,
    strict: bool = False,
    snapshot_at: int | None = None,
    states: bool = False,
    lateness: int = 0,
    after: NFAMatcher | None = None,
) -> Any:
    """Detections, errors, warnings, traces (and the states after each event) of one engine run."""
    engine = Engine([matcher], trace=trace, strict=strict, out_of_orderness=lateness)
    seen: list[Any] = []
    out: list[Any] = []
    keys: list[Hashable] = ["k", "l"]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i, e in enumerate(events):
                if i == snapshot_at:
                    blob = pickle.loads(pickle.dumps(engine.snapshot()))
                    out += engine.detections
                    engine = Engine([after or matcher], trace=trace, strict=strict, out_of_orderness=lateness)
                    engine.restore(blob)
                engine.process(e)
                if states:
                    seen.append([_state(engine.state_of("p", k)) for k in keys])
            engine.advance_time(events[-1]["time"] if events else 0)
            engine.finish()
    except CepError as err:
        return type(err).__name__, str(err), seen
    faults = [(f.where, f.kind, f.message, f.first_seq, f.count) for f in engine.errors]
    # events by seq: a snapshot copies them, and a NaN field equals no copy of itself
    found = [
        (d.key, d.instance, d.kind, d.time, [e.seq for e in d.events], d.channels)
        for d in out + engine.detections
    ]
    return found, faults, [str(w.message) for w in caught], engine.trace_records, seen


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen_patterns(), gen_streams(), st.integers(0, 40), st.booleans())
def test_generated_code_steps_like_the_interpreter(
    pattern: SequencePattern, events: list[dict[str, Any]], snapshot_at: int, strict: bool
) -> None:
    gen = NFAMatcher(pattern)
    assert gen.fast_path == "loop"
    assert gen.process is not gen.plan.interpret  # the generated code runs
    want = _run(interpreted(pattern), events, strict=strict, states=True)
    assert _run(gen, events, strict=strict, states=True) == want
    # a snapshot restores into a new engine halfway, from either form into the other
    want = _run(interpreted(pattern), events, strict=strict, snapshot_at=snapshot_at)
    assert _run(gen, events, strict=strict, snapshot_at=snapshot_at, after=interpreted(pattern)) == want
    assert _run(interpreted(pattern), events, strict=strict, snapshot_at=snapshot_at, after=gen) == want


@pytest.mark.skipif(native.MODULE is None, reason="the native core is not in use here")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen_patterns(), gen_streams(), st.integers(0, 40), st.booleans())
def test_the_native_step_steps_like_the_generated_python_step(
    pattern: SequencePattern, events: list[dict[str, Any]], snapshot_at: int, strict: bool
) -> None:
    nat = NFAMatcher(pattern)
    python = generated_python(pattern)
    if python.process is python.plan.interpret:  # an event-only condition the emitter does not write
        assert nat.process is nat.plan.interpret
        return
    assert type(nat.process).__name__ == "LoopStep"  # the native step runs
    assert type(python.process).__name__ == "function"
    want = _run(python, events, strict=strict, states=True)
    assert _run(nat, events, strict=strict, states=True) == want
    # a snapshot taken from either restores into the other
    want = _run(generated_python(pattern), events, strict=strict, snapshot_at=snapshot_at)
    assert _run(nat, events, strict=strict, snapshot_at=snapshot_at, after=generated_python(pattern)) == want
    assert _run(generated_python(pattern), events, strict=strict, snapshot_at=snapshot_at, after=nat) == want


#: first times at which the native step's window arithmetic changes form: ints of 64 bits, sums and
#: differences past them, ints past them, and floats (with a float window too)
EDGE_TIMES = [2**62, 2**63 - 30, -(2**63) - 5, 2**64, 0.5, 2.0**60]


@pytest.mark.skipif(native.MODULE is None, reason="the native core is not in use here")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen_patterns(), st.sampled_from(EDGE_TIMES).flatmap(gen_streams_from), st.booleans())
def test_the_native_step_keeps_pythons_arithmetic_at_any_time(
    pattern: SequencePattern, events: list[dict[str, Any]], float_window: bool
) -> None:
    """Windows expire at the same events as in Python when times are past 64 bits or floats."""
    if float_window and pattern.within_ms is not None:
        pattern = dataclasses.replace(pattern, within_ms=pattern.within_ms + 0.5)
    nat = NFAMatcher(pattern)
    python = generated_python(pattern)
    if python.process is python.plan.interpret:
        return
    assert type(nat.process).__name__ == "LoopStep"
    assert _run(nat, events, states=True) == _run(python, events, states=True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen_patterns(), gen_streams(), st.booleans())
def test_generated_code_equals_the_general_nfa(
    pattern: SequencePattern, events: list[dict[str, Any]], trace: bool
) -> None:
    general = NFAMatcher(pattern, specialise=False)
    assert general.fast_path is None
    assert _run(NFAMatcher(pattern), events, trace=trace) == _run(general, events, trace=trace)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen_patterns(), gen_streams(ordered=False), st.sampled_from([0, 5]))
def test_generated_code_with_late_and_out_of_order_events(
    pattern: SequencePattern, events: list[dict[str, Any]], lateness: int
) -> None:
    want = _run(interpreted(pattern), events, lateness=lateness, states=True)
    assert _run(NFAMatcher(pattern), events, lateness=lateness, states=True) == want
    general = _run(NFAMatcher(pattern, specialise=False), events, lateness=lateness)
    assert _run(NFAMatcher(pattern), events, lateness=lateness) == general


def test_tracing_runs_the_interpreter_with_the_same_records() -> None:
    p = SequencePattern(
        "p",
        (
            Stage("a", types=("a",)),
            Stage("b", "avg_b > 1", RELAXED, types=("b",), quantifier=Quantifier.one_or_more()),
            Stage("c", contiguity=RELAXED, types=("c",)),
        ),
        within_ms=10,
        aggregates=(AggregateSpec("avg_b", "avg", "b", "v", include_current=True),),
    )
    events = [{"type": t, "time": i, "key": "k", "v": i % 4} for i, t in enumerate("abdbbcabbbc")]
    traced = _run(NFAMatcher(p), events, trace=True)
    assert traced == _run(interpreted(p), events, trace=True)
    assert traced[3]  # trace records were written
    assert traced[0] == _run(NFAMatcher(p), events)[0]


def test_waits_of_older_partial_matches_merge_into_the_list_in_order() -> None:
    # Two overlapping partial matches: the older one's new waits for "c" must go before the
    # newer one's older waits (the generated code merges by start id, not by a full re-sort),
    # and the sum/count/avg updates are inlined in the generated code.
    p = SequencePattern(
        "p",
        (
            Stage("a", types=("a",)),
            Stage(
                "b", "avg_b > 1 and count_b < 9", RELAXED, types=("b",), quantifier=Quantifier.one_or_more()
            ),
            Stage("c", "e.v > 0", RELAXED, types=("c",)),
        ),
        within_ms=40,
        emit_timeouts=True,
        aggregates=(
            AggregateSpec("avg_b", "avg", "b", "v", include_current=True),
            AggregateSpec("count_b", "count", "b"),
            AggregateSpec("sum_b", "sum", "b", "v"),
        ),
    )
    events = [
        {"type": t, "time": i, "key": "k", "v": v}
        for i, (t, v) in enumerate(
            zip("abababdbbdbcbdbbcc", [0, 3, 0, 2, 0, 4, 0, 1, 5, 0, 2, 0, 3, 0, 9, 1, 0, 2], strict=True)
        )
    ]
    want = _run(interpreted(p), events, states=True)
    got = _run(NFAMatcher(p), events, states=True)
    assert got == want
    assert len(got[0]) > 10  # matches and time-outs of both partial matches
    assert got[0] == _run(NFAMatcher(p, specialise=False), events)[0]


@pytest.mark.skipif(native.MODULE is None, reason="the native core is not in use here")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from("aaabbbbbcd"), min_size=5, max_size=70),
    st.sampled_from([None, 15, 30]),
    st.sampled_from(["e.v >= 0", "avg_b > 1", "avg_b < 2 or e.v > 2", "count_b < 4"]),
)
def test_many_overlapping_partial_matches_keep_the_python_steps_order(
    types: list[str], window: int | None, condition: str
) -> None:
    # One key and many overlapping partial matches: long lists, whose new members (an older partial
    # match's waits, a start) the native step inserts far back, where the Python step re-sorts
    p = SequencePattern(
        "p",
        (
            Stage("a", types=("a",)),
            Stage("b", condition, RELAXED, types=("b",), quantifier=Quantifier.one_or_more()),
            Stage("c", types=("c",)),
        ),
        within_ms=window,
        aggregates=(
            AggregateSpec("avg_b", "avg", "b", "v", include_current=True),
            AggregateSpec("count_b", "count", "b"),  # its input is the event: no plain number
        ),
    )
    events = [{"type": t, "time": i, "key": "k", "v": i % 4} for i, t in enumerate(types)]
    nat = NFAMatcher(p)
    assert type(nat.process).__name__ == "LoopStep"
    assert _run(nat, events, states=True) == _run(generated_python(p), events, states=True)


def _batch(matcher: NFAMatcher, events: list[dict[str, Any]]) -> Any:
    """Detections and final per-key states of one ``process_many`` call (the fused loop, kernels)."""
    engine = Engine([matcher])
    try:
        engine.process_many(events)
        states = [engine.state_of("p", k) for k in ("k", "l")]
        states = [_state(s) if isinstance(s, LoopState) else None for s in states]
        engine.finish()
    except CepError as err:
        return type(err).__name__, str(err)
    found = [
        (d.key, d.instance, d.kind, d.time, [e.seq for e in d.events], d.channels) for d in engine.detections
    ]
    return found, states


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen_patterns(), gen_streams())
def test_the_fused_loop_steps_like_one_event_at_a_time(
    pattern: SequencePattern, events: list[dict[str, Any]]
) -> None:
    # The kernel skips the step for an event that can change nothing, and its timer expires
    # partial matches inline: same detections (time-outs too) and states as event by event.
    want = _batch(interpreted(pattern), events)
    assert _batch(NFAMatcher(pattern), events) == want
    general = _batch(NFAMatcher(pattern, specialise=False), events)  # no kernel, no timer kernel
    assert general[0] == want[0]
    per_event = Engine([NFAMatcher(pattern)])
    try:
        for e in events:
            per_event.process(e)
        states = [_state(per_event.state_of("p", k)) for k in ("k", "l")]
    except CepError:
        return
    assert isinstance(want[1], list)
    assert want[1] == states


def _fed(pattern: SequencePattern, events: list[dict[str, Any]], feed_back: bool, forget: bool) -> Any:
    """One ``process_many`` call with a callback that records (and may feed an event back)."""
    seen: list[Any] = []

    def on_detection(d: Any) -> None:
        seen.append((d.key, d.instance, d.kind, d.time, [e.seq for e in d.events]))
        if feed_back and d.kind == "match" and len(seen) < 4:
            engine.process_many([{"type": "b", "time": d.time, "key": d.key, "v": 1}])

    engine = Engine([NFAMatcher(pattern)], on_detection=on_detection, forget_idle_keys=forget)
    states: list[Any] = []
    half = len(events) // 2
    try:
        for part in (events[:half], events[half:]):  # why halves: the states in between count too
            engine.process_many(part)
            states += [_state(s) if isinstance(s, LoopState) else s for s in map(engine.state_of, "pp", "kl")]
            states.append(sorted(engine._timers))  # the pending timers, their order numbers too
        engine.finish()
    except CepError as err:
        return type(err).__name__, str(err), seen
    return seen, states, type(engine._loop).__name__


@pytest.mark.skipif(native.MODULE is None, reason="the native core is not in use here")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen_patterns(), gen_streams(ordered=False), st.booleans(), st.booleans())
def test_the_native_loop_runs_like_the_generated_loop(
    pattern: SequencePattern, events: list[dict[str, Any]], feed_back: bool, forget: bool
) -> None:
    # late and out-of-order events (the general path and back), a callback (no inline delivery),
    # events fed back from it, idle keys forgotten: the same as the generated loop, in Python
    from unittest import mock

    from workbench.engine import fused

    native_run = _fed(pattern, events, feed_back, forget)
    with mock.patch.object(fused, "_native_loop", return_value=None):
        python_run = _fed(pattern, events, feed_back, forget)
    if len(native_run) == 3 and events:
        # why: the native loop ran unless the step is the interpreter (a condition not written)
        assert (
            native_run[2] == "LoopFeed" or NFAMatcher(pattern).plan.process.__class__.__name__ != "LoopStep"
        )
        assert python_run[2] == "function"
    assert native_run[:2] == python_run[:2]
