"""Generated linear steps and the engine's fused loop give exactly the interpreters' results.

Three engines run the same script of calls (``process``, ``process_many``, ``advance_time``,
snapshot/restore, ``finish``) over random linear patterns and random, partly out-of-order input:
the general NFA on the shared buffer, the interpreted linear plan, and the generated code. Their
detections, trace records, late events, condition errors and warnings must be equal.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.nfa.test_linear import linear_patterns
from workbench.engine.events import Event
from workbench.engine.nfa import Contiguity, NFAMatcher, SequencePattern, SkipStrategy, Stage
from workbench.engine.nfa.codegen import linear_kernel
from workbench.engine.nfa.linear import LinearState
from workbench.engine.runtime import Engine
from workbench.errors import CepRuntimeError

#: field values: numbers, NULLs (None, NaN), a string (``e.v > 2`` raises on it), a bool (not a
#: number for the inlined field test) or no field at all
VALUES = st.one_of(
    st.integers(0, 5), st.sampled_from([None, math.nan, "x", "missing", 2.0, 2.5, math.inf, True, False])
)


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    value = draw(VALUES)
    event: dict[str, Any] = {
        "type": draw(st.sampled_from("abcd")),
        "time": draw(st.integers(0, 40)),
        "key": draw(st.sampled_from(["k1", "k2", "k3"])),
    }
    if value != "missing":
        event["v"] = value
    return event


#: one call: ("one", event), ("many", events), ("advance", t), ("snapshot", None)
Step = tuple[str, Any]


@st.composite
def scripts(draw: st.DrawFn) -> list[Step]:
    out: list[Step] = []
    clock = 0
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["one", "many", "many", "advance", "snapshot"]))
        if kind == "advance":
            clock += draw(st.integers(0, 6))
            out.append((kind, clock))
        elif kind == "snapshot":
            out.append((kind, None))
        else:
            batch = []
            for e in draw(st.lists(events(), max_size=8)):
                # mostly in order (the fused loop), sometimes late or out of order (the general path)
                if draw(st.integers(0, 4)):
                    clock += e["time"] % 4
                    e = {**e, "time": clock}
                batch.append(e)
            out.append((kind, batch[0]) if kind == "one" and batch else ("many", batch))
    return out


def _run(
    matcher: NFAMatcher, script: list[Step], *, trace: bool, strict: bool = False, states: bool = False
) -> str:
    """Everything the run shows; ``states``: also the key states and timers at each snapshot and at
    the end (a linear plan's, so that generated code and interpreter can take turns at any event)."""
    engine = Engine([matcher], trace=trace, strict=strict)
    returned: list[Any] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for kind, arg in script:
                if kind == "one":
                    returned.append(engine.process(arg))
                elif kind == "many":
                    returned.append(engine.process_many(arg))
                elif kind == "advance":
                    returned.append(engine.advance_time(arg))
                else:
                    if states:
                        returned.append(_states(engine))
                    blob = engine.snapshot()
                    engine = _restored(engine, matcher, blob, trace, strict)
            if states:
                returned.append(_states(engine))
            returned.append(engine.finish())
        except CepRuntimeError as err:  # strict runs stop at the first failing condition
            returned.append(("raised", str(err)))
    errors = [f.describe() for f in engine.errors]
    late = [(e.seq, e.time) for e in engine.late]
    # repr: NaN fields compare unequal to themselves once a snapshot has copied the events
    return repr(
        (engine.detections, returned, engine.trace_records, late, errors, [str(w.message) for w in caught])
    )


def _states(engine: Engine) -> list[Any]:
    """Every key's linear state (runs, held matches, counters) and the pending timers."""
    out: list[Any] = [sorted(engine._timers)]
    for key, ks in engine.keys.items():
        for st_ in ks.states.values():
            assert isinstance(st_, LinearState)
            runs = [(r.start_id, r.rid, r.stage, r.start_ts, r.prev_ts, r.inst, r.events) for r in st_.runs]
            held = [(h.key, h.inst, h.events) for h in st_.held]
            out.append((key, runs, held, st_.next_rid, st_.dropped, st_.time, st_.scheduled))
    return out


def _restored(old: Engine, matcher: NFAMatcher, blob: bytes, trace: bool, strict: bool) -> Engine:
    """A new engine (same matcher) restored from ``blob``, carrying the outputs collected so far."""
    engine = Engine([matcher], trace=trace, strict=strict)
    engine.restore(blob)
    engine.detections.extend(old.detections)
    engine.trace_records.extend(old.trace_records)
    engine.errors.extend(old.errors)
    return engine


def _three(pattern: SequencePattern) -> tuple[NFAMatcher, NFAMatcher, NFAMatcher]:
    compiled = NFAMatcher(pattern)
    assert compiled.fast_path == "linear"
    return NFAMatcher(pattern, specialise=False), NFAMatcher(pattern, compiled=False), compiled


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linear_patterns(), scripts(), st.booleans())
def test_generated_code_equals_both_interpreters(
    pattern: SequencePattern, script: list[Step], trace: bool
) -> None:
    general, interpreted, compiled = _three(pattern)
    reference = _run(general, script, trace=trace)
    assert _run(interpreted, script, trace=trace) == reference
    assert _run(compiled, script, trace=trace) == reference
    # the same states, run ids and timers: either can take over at any event
    assert _run(compiled, script, trace=trace, states=True) == _run(
        interpreted, script, trace=trace, states=True
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linear_patterns(), scripts())
def test_strict_runs_raise_at_the_same_event(pattern: SequencePattern, script: list[Step]) -> None:
    general, _, compiled = _three(pattern)
    assert _run(compiled, script, trace=False, strict=True) == _run(general, script, trace=False, strict=True)


def _stage(name: str, where: str | None, contiguity: Contiguity, types: tuple[str, ...] = ()) -> Stage:
    return Stage(name, where, contiguity, types=types)


@pytest.mark.parametrize("skip", ["no_skip", "skip_to_next", "skip_past_last_event"])
@pytest.mark.parametrize("contiguity", list(Contiguity))
def test_every_contiguity_and_skip_on_a_shared_script(skip: str, contiguity: Contiguity) -> None:
    pattern = SequencePattern(
        "p",
        (_stage("a", "e.v > 2", Contiguity.STRICT, ("a",)), _stage("b", "e.v < 4", contiguity, ("b", "c"))),
        within_ms=6,
        skip=SkipStrategy(skip),  # type: ignore[arg-type]
        emit_timeouts=True,
    )
    script: list[Step] = [
        ("many", [{"type": "a", "time": t, "key": "k", "v": t % 6} for t in range(0, 20, 2)]),
        ("many", [{"type": "b", "time": 20 + t, "key": "k", "v": t} for t in range(5)]),
        ("one", {"type": "b", "time": 3, "key": "k", "v": 1}),  # late
        ("advance", 30),
    ]
    general, interpreted, compiled = _three(pattern)
    for trace in (False, True):
        assert _run(compiled, script, trace=trace) == _run(general, script, trace=trace)
        assert _run(interpreted, script, trace=trace) == _run(general, script, trace=trace)


def test_a_condition_that_raises_is_recorded_once_per_kind_as_by_the_interpreter() -> None:
    pattern = SequencePattern(
        "p", (_stage("a", "e.v > 2", Contiguity.STRICT), _stage("b", None, Contiguity.RELAXED, ("b",)))
    )
    script: list[Step] = [
        ("many", [{"type": "a", "time": t, "key": "k", "v": "x" if t % 2 else 3} for t in range(6)])
    ]
    general, _, compiled = _three(pattern)
    result = _run(compiled, script, trace=False)
    assert result == _run(general, script, trace=False)
    assert "3 times" in result


def test_quiet_windows_keep_one_timer_per_key_and_release_quiet_keys() -> None:
    """No timeouts, no trace: expiry only frees memory, so a key keeps one timer, not one per match."""
    pattern = SequencePattern(
        "p", (_stage("a", None, Contiguity.STRICT, ("a",)), _stage("b", None, Contiguity.RELAXED, ("b",))),
        within_ms=10, emit_timeouts=False,
    )  # fmt: skip
    engine = Engine([NFAMatcher(pattern)])
    engine.process_many([Event("a", t, "k") for t in range(5)])
    assert len(engine._timers) == 1
    assert len(engine.state_of("p", "k").runs) == 5
    engine.advance_time(100)
    assert engine.state_of("p", "k") is None  # every window passed: the state is released


def test_the_kernel_is_built_from_the_plan_only() -> None:
    """Stage names and conditions enter the generated text as constants, never as code."""
    hostile = "x'); import os; ('"
    pattern = SequencePattern(
        "p",
        (
            _stage(hostile, "e.v > 1", Contiguity.STRICT, (hostile,)),
            _stage("b", None, Contiguity.RELAXED, ("b",)),
        ),
    )
    kernel = linear_kernel(NFAMatcher(pattern).plan, "_p0_")  # type: ignore[arg-type]
    assert "import" not in kernel.body.replace(repr(hostile), "")
    assert all(name.startswith("_p0_") or name == "len" for name in kernel.consts)


def test_generated_step_and_interpreter_take_turns_on_one_state() -> None:
    """Snapshots taken under one run the other: the state objects are the same classes."""
    pattern = dataclasses.replace(
        SequencePattern(
            "p",
            (
                _stage("a", None, Contiguity.STRICT, ("a",)),
                _stage("b", None, Contiguity.NONDETERMINISTIC_RELAXED, ("b",)),
            ),
        ),
        within_ms=5,
    )
    first = Engine([NFAMatcher(pattern)])
    first.process_many([Event("a", 1, "k"), Event("b", 2, "k")])
    second = Engine([NFAMatcher(pattern, compiled=False)])
    second.restore(first.snapshot())
    second.process_many([Event("b", 3, "k")])
    second.finish()
    reference = Engine([NFAMatcher(pattern, specialise=False)])
    reference.process_many([Event("a", 1, "k"), Event("b", 2, "k"), Event("b", 3, "k")])
    reference.finish()
    assert [d.events for d in first.detections + second.detections] == [
        d.events for d in reference.detections
    ]


@pytest.mark.parametrize("skip", ["no_skip", "skip_past_last_event"])
@pytest.mark.parametrize("contiguity", list(Contiguity))
def test_not_followed_by_and_branches_keep_the_interpreters_states(skip: str, contiguity: Contiguity) -> None:
    """A stopped partial match spends the run ids the NFA spends, beside live ones (generated inline)."""
    pattern = SequencePattern(
        "p",
        (
            _stage("a", None, Contiguity.STRICT, ("a",)),
            _stage("b", "e.v > 1", Contiguity.NONDETERMINISTIC_RELAXED, ("b",)),
            Stage("x", "e.v < 3", Contiguity.RELAXED, negated=True, types=("c",)),
            _stage("d", "e.v != 2", contiguity, ("b", "c", "d")),
        ),
        within_ms=9,
        skip=SkipStrategy(skip),  # type: ignore[arg-type]
    )
    kinds = "abcbdcbacdbbdacd"
    script: list[Step] = [
        ("many", [{"type": k, "time": i // 2, "key": "k", "v": (i * 7) % 5} for i, k in enumerate(kinds)]),
        ("snapshot", None),
        (
            "many",
            [{"type": k, "time": 8 + i // 3, "key": "k", "v": (i * 3) % 4} for i, k in enumerate(kinds)],
        ),
    ]
    general, interpreted, compiled = _three(pattern)
    assert _run(compiled, script, trace=False) == _run(general, script, trace=False)
    assert _run(compiled, script, trace=False, states=True) == _run(
        interpreted, script, trace=False, states=True
    )


def test_an_event_type_spelled_like_a_placeholder_stays_a_literal() -> None:
    """The fused loop fills in only whole ``{ctx}`` lines, never text inside a condition's literal."""
    odd = "{ctx}"
    pattern = SequencePattern(
        "p",
        (_stage("a", None, Contiguity.STRICT, (odd,)), _stage("b", "e.v > 1", Contiguity.RELAXED, ("b",))),
    )
    script: list[Step] = [
        ("many", [{"type": odd, "time": 0, "key": "k"}, {"type": "b", "time": 1, "key": "k", "v": 2}])
    ]
    general, _, compiled = _three(pattern)
    result = _run(compiled, script, trace=False)
    assert result == _run(general, script, trace=False)
    assert "'b'" in result  # the match (a, b) was found


@pytest.mark.parametrize("where", ["e.v > 2", "2 < e.v", "e.v >= 2.5", "e.v == 'x'", "e.v != 3"])
def test_inlined_field_tests_equal_the_interpreter_on_every_kind_of_value(where: str) -> None:
    """Numbers (int, float, inf), NULLs, strings, bools and a missing field: the same detections and
    the same recorded condition errors as the general plan."""
    pattern = SequencePattern(
        "p", (_stage("a", None, Contiguity.STRICT, ("a",)), _stage("b", where, Contiguity.RELAXED, ("b",)))
    )
    values: list[Any] = [1, 2, 3, 2.5, 2.49, math.inf, -math.inf, math.nan, None, "x", "y", True, False]
    values.append("missing")
    batch: list[dict[str, Any]] = []
    for i, v in enumerate(values):
        batch.append({"type": "a", "time": 2 * i, "key": "k"})
        batch.append({"type": "b", "time": 2 * i + 1, "key": "k", **({} if v == "missing" else {"v": v})})
    general, _, compiled = _three(pattern)
    assert _run(compiled, [("many", batch)], trace=False) == _run(general, [("many", batch)], trace=False)
    kernel = linear_kernel(compiled.plan, "_p0_")  # type: ignore[arg-type]
    assert "e.fields.get('v')" in kernel.body  # the test is inlined, not a call per event


def test_a_pattern_too_long_for_python_s_compiler_runs_interpreted() -> None:
    # (3,000 'next' stages nest the generated step past Python's compiler: a RecursionError that
    # the language reported as "the pattern text nests too deeply"; the language now stops at
    # 1,000 stages, the API does not)
    stages = tuple(Stage(f"a{i}", types=("x",)) for i in range(3000))
    matcher = NFAMatcher(SequencePattern("s", stages))
    assert not matcher.compiled
    engine = Engine([matcher])
    engine.process_many([{"type": "x", "time": i, "key": "k"} for i in range(5)])
    state = engine.state_of("s", "k")
    assert len(state.runs) == 5  # one partial match per event, each a stage further
