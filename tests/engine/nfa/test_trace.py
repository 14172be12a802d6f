"""Every way a partial match ends leaves a trace record, identically on every matcher path."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from workbench.engine.detection import TraceKind, TraceRecord
from workbench.engine.nfa import Contiguity, NFAMatcher, Quantifier, SequencePattern, SkipStrategy, Stage
from workbench.engine.runtime import Engine
from workbench.language import compile_pattern
from workbench.session.explain import explain
from workbench.widgets.model import TimelineModel

STRICT, ANY = Contiguity.STRICT, Contiguity.NONDETERMINISTIC_RELAXED


def _trace(matcher: NFAMatcher, events: list[dict[str, Any]]) -> list[TraceRecord]:
    engine = Engine([matcher], trace=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # max_partial_matches warns by design
        engine.process_many(events)
        engine.finish()
    return engine.trace_records


def _all_paths(
    pattern: SequencePattern, events: list[dict[str, Any]], fast_path: str | None
) -> list[TraceRecord]:
    """The trace on the general interpreter; the fast path (if any) must give the same one."""
    general = NFAMatcher(pattern, specialise=False)
    fast = NFAMatcher(pattern)
    assert fast_path == fast.fast_path
    records = _trace(general, events)
    assert records == _trace(fast, events)
    return records


def _ends(records: list[TraceRecord], instance: int) -> list[TraceRecord]:
    ending = (TraceKind.PRUNED, TraceKind.TIMED_OUT, TraceKind.DETECTED, TraceKind.VIOLATED)
    return [r for r in records if r.instance == instance and r.kind in ending]


def _events(spec: str) -> list[dict[str, Any]]:
    """``"a@0 b@5"`` -> events of key ``k``."""
    out = []
    for item in spec.split():
        typ, t = item.split("@")
        out.append({"type": typ, "time": int(t), "key": "k"})
    return out


BRUTE_FORCE = (
    "sequence brute_force partition by user within 1min "
    "begin fails: login_failed times 3 next success: login_ok"
)


@pytest.mark.parametrize("specialise", [True, False])
def test_repro_strict_contiguity_break_ends_the_run_and_explain_says_so(specialise: bool) -> None:
    pattern = compile_pattern(BRUTE_FORCE)
    assert isinstance(pattern, SequencePattern)
    events = [
        {"type": typ, "time": t, "key": "alice", "user": "alice"}
        for typ, t in [
            ("login_failed", 0),
            ("login_failed", 9000),
            ("login_failed", 20000),
            ("captcha", 24000),
            ("login_ok", 31000),
        ]
    ]
    records = _trace(NFAMatcher(pattern, specialise=specialise), events)
    last = [r for r in records if r.instance == 1][-1]
    assert (last.kind, last.time, last.event_seq) == (TraceKind.PRUNED, 24000, 3)
    assert last.detail["reason"] == "strict contiguity broken by event #3"
    assert last.detail["waiting"] == "success"
    text = explain(pattern, records, [], {}, key="alice", instance=1)
    first = text.splitlines()[0]
    assert "pruned at t=24000" in first
    assert "strict contiguity broken by event #3" in first
    assert "still open" not in text
    timeline = TimelineModel(records)
    ended = timeline.instances[("brute_force", "alice", 1)]
    assert ended.end == 24000
    assert ended.ended_by(24000)


def test_strict_contiguity_linear() -> None:
    pattern = SequencePattern("p", (Stage("a", types=("a",)), Stage("b", contiguity=STRICT, types=("b",))))
    records = _all_paths(pattern, _events("a@0 c@1 a@2 b@3"), "linear")
    assert [r.kind for r in _ends(records, 1)] == [TraceKind.PRUNED]
    expected = {"reason": "strict contiguity broken by event #1", "event": 1, "waiting": "b"}
    assert _ends(records, 1)[0].detail == expected
    assert [r.kind for r in _ends(records, 2)] == [TraceKind.DETECTED]


def test_strict_contiguity_after_a_loop_on_the_general_path() -> None:
    pattern = SequencePattern(
        "p",
        (
            Stage("a", types=("a",), quantifier=Quantifier(1, None, inner=STRICT)),
            Stage("b", contiguity=STRICT, types=("b",)),
        ),
    )
    records = _all_paths(pattern, _events("a@0 a@1 c@2"), None)
    ends = _ends(records, 1)
    assert ends
    assert all(r.kind == TraceKind.PRUNED and r.event_seq == 2 for r in ends)
    assert {"strict contiguity broken by event #2"} == {r.detail["reason"] for r in ends}


def test_relaxed_loop_before_a_strict_stage_survives_other_events() -> None:
    pattern = SequencePattern(
        "p",
        (
            Stage("a", types=("a",), quantifier=Quantifier.one_or_more()),
            Stage("b", contiguity=STRICT, types=("b",)),
        ),
    )
    records = _all_paths(pattern, _events("a@0 c@1"), None)
    assert _ends(records, 1) == []


def test_strict_contiguity_with_a_negation_on_the_linear_path() -> None:
    pattern = SequencePattern(
        "p",
        (
            Stage("a", types=("a",)),
            Stage("x", types=("x",), negated=True),
            Stage("b", contiguity=STRICT, types=("b",)),
        ),
    )
    records = _all_paths(pattern, _events("a@0 c@1"), "linear")
    assert [r.kind for r in _ends(records, 1)] == [TraceKind.PRUNED]
    assert _ends(records, 1)[0].detail["reason"] == "strict contiguity broken by event #1"


def test_negation() -> None:
    pattern = SequencePattern(
        "p",
        (
            Stage("a", types=("a",)),
            Stage("x", types=("x",), negated=True),
            Stage("b", types=("b",)),
        ),
    )
    records = _all_paths(pattern, _events("a@0 x@1 b@2"), "linear")
    ends = _ends(records, 1)
    assert [r.kind for r in ends] == [TraceKind.VIOLATED, TraceKind.PRUNED]
    assert ends[-1].detail == {"reason": "negation violated by event #1", "event": 1}
    assert ends[-1].event_seq == 1


def test_window() -> None:
    pattern = SequencePattern("p", (Stage("a", types=("a",)), Stage("b", types=("b",))), within_ms=10)
    records = _all_paths(pattern, _events("a@0 c@20"), "linear")
    ends = _ends(records, 1)
    assert [(r.kind, r.time) for r in ends] == [(TraceKind.TIMED_OUT, 10)]


def test_window_on_the_loop_path() -> None:
    pattern = SequencePattern(
        "p",
        (
            Stage("a", types=("a",)),
            Stage("b", types=("b",), quantifier=Quantifier.one_or_more()),
            Stage("c", types=("c",)),
        ),
        within_ms=10,
    )
    records = _all_paths(pattern, _events("a@0 b@1 d@30"), "loop")
    assert _ends(records, 1)[-1].kind == TraceKind.TIMED_OUT


@pytest.mark.parametrize(
    ("strategy", "second"),
    [
        # instance 2's own match prunes its branch still waiting for a b, then fires
        ("skip_to_next", [TraceKind.PRUNED, TraceKind.DETECTED]),
        # instance 1's match skips past b@2: instance 2's waiting branch and its held match go
        ("skip_past_last_event", [TraceKind.PRUNED, TraceKind.PRUNED]),
    ],
)
def test_skip_strategy_prunes_partial_and_held_matches(strategy: str, second: list[TraceKind]) -> None:
    pattern = SequencePattern(
        "p",
        (Stage("a", types=("a",)), Stage("b", contiguity=ANY, types=("b",))),
        skip=SkipStrategy(strategy),  # type: ignore[arg-type]
    )
    records = _all_paths(pattern, _events("a@0 a@1 b@2"), "linear")
    assert [r.kind for r in _ends(records, 1)] == [TraceKind.PRUNED, TraceKind.DETECTED]
    ends = _ends(records, 2)
    assert second == [r.kind for r in ends]
    assert {"reason": f"skip strategy {strategy}", "strategy": strategy} == ends[0].detail


def test_skip_strategy_on_the_general_path() -> None:
    pattern = SequencePattern(
        "p",
        (Stage("a", types=("a",), quantifier=Quantifier.one_or_more()), Stage("b", types=("b",))),
        skip=SkipStrategy("skip_past_last_event"),
    )
    records = _all_paths(pattern, _events("a@0 a@1 b@2"), None)
    pruned = [r for r in records if r.kind == TraceKind.PRUNED]
    assert pruned
    assert all(r.detail["reason"] == "skip strategy skip_past_last_event" for r in pruned)


#: one pattern per matcher path: linear, loop, the general interpreter
PATHS = [
    ((Stage("a", types=("a",)), Stage("b", types=("b",))), "linear"),
    (
        (
            Stage("a", types=("a",)),
            Stage("b", types=("b",), quantifier=Quantifier.one_or_more()),
            Stage("c", types=("c",)),
        ),
        "loop",
    ),
    ((Stage("a", types=("a",), quantifier=Quantifier.one_or_more()), Stage("b", types=("b",))), None),
]


@pytest.mark.parametrize(("stages", "fast_path"), PATHS)
def test_cap(stages: tuple[Stage, ...], fast_path: str | None) -> None:
    pattern = SequencePattern("p", stages, max_partial_matches=1)
    records = _all_paths(pattern, _events("a@0 a@1"), fast_path)
    ends = _ends(records, 1)
    assert ends
    assert all(r.kind == TraceKind.PRUNED for r in ends)
    assert ends[0].detail == {"reason": "cap: more than 1 partial matches", "max_partial_matches": 1}


@pytest.mark.parametrize(("stages", "fast_path"), PATHS)
def test_a_match_names_the_event_that_completed_it(stages: tuple[Stage, ...], fast_path: str | None) -> None:
    # (it said "<- timer": the detection record carried no event)
    pattern = SequencePattern("p", stages, within_ms=100)
    records = _all_paths(pattern, _events("a@0 b@1 d@2 c@3 b@4"), fast_path)
    detected = [r for r in records if r.kind == TraceKind.DETECTED]
    assert detected
    assert all(r.event_seq == (1 if r.time == 1 else 3 if r.time == 3 else 4) for r in detected)


def test_a_timeout_and_a_skip_prune_name_their_causes() -> None:
    pattern = SequencePattern(
        "p",
        (Stage("a", types=("a",)), Stage("b", contiguity=ANY, types=("b",))),
        within_ms=10,
        skip=SkipStrategy("skip_past_last_event"),
    )
    records = _all_paths(pattern, _events("a@0 a@1 b@2 a@5 c@30"), "linear")
    pruned = [r for r in records if r.kind == TraceKind.PRUNED]
    assert pruned
    assert all(r.event_seq == 2 for r in pruned)  # the match completed by b@2 pruned them
    timed_out = [r for r in records if r.kind == TraceKind.TIMED_OUT]
    assert [(r.instance, r.event_seq) for r in timed_out] == [(3, None)]  # a window ends on time
    engine = Engine([pattern], trace=True)
    engine.process_many(_events("a@0 a@1 b@2 a@5 c@30"))
    engine.finish()
    events = {e.seq: e for d in engine.detections for e in d.events}
    story = explain(pattern, engine.trace_records, engine.detections, events, key="k", instance=1)
    assert "detected <- event #2 b@2" in story


def test_group_outcomes_name_their_causes() -> None:
    text = (
        "group g\n    on login\n    @and @timeout(10) {\n"
        "        big: trade\n        @stop out: logout\n    }\n"
    )
    engine = Engine([compile_pattern(text)], trace=True)
    engine.process_many(_events("login@0 trade@1 login@2 logout@3 login@4"))
    engine.finish()
    ends = {(r.instance, r.kind): r.event_seq for r in engine.trace_records}
    assert ends[(1, TraceKind.DETECTED)] == 1
    assert ends[(2, TraceKind.FAILED)] == 3  # the @stop event
    assert ends[(3, TraceKind.FAILED)] is None  # the group's timeout


def test_no_record_is_built_when_tracing_is_off() -> None:
    pattern = SequencePattern("p", (Stage("a", types=("a",)), Stage("b", contiguity=STRICT, types=("b",))))
    for specialise in (True, False):
        engine = Engine([NFAMatcher(pattern, specialise=specialise)])
        engine.process_many(_events("a@0 c@1"))
        engine.finish()
        assert engine.trace_records == []
