"""The vectorised plan gives exactly the engine's detections, and declines (the engine runs) outside it."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.replay import replay_frame
from workbench.backends.columnar.vectorplan import engine_reason, plan_reason, vector_detections
from workbench.engine.detection import Detection
from workbench.engine.matchtable import LazyDetections
from workbench.engine.runtime import Engine
from workbench.language import compile_patterns
from workbench.results import detections_to_frame, frame_to_events

TYPES = ("a", "b", "c", "d")
CONDITIONS = (
    "",
    " where e.x > 1",
    " where e.x <= 2",
    " where e.y == 'p'",
    " where not (e.x > 2)",
    " where e.x is None",
    " where e.x > 1 or e.y == 'q'",
    " where e.x + 1 >= 3 and e.y != 'p'",
)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    """Keyed rows with ties in time, NULL fields and a key column with a missing key."""
    n = draw(st.integers(0, 40))
    steps = draw(st.lists(st.sampled_from((0, 0, 1, 2, 3)), min_size=n, max_size=n))
    times, t = [], 0
    for step in steps:
        t += step
        times.append(t)
    x = st.one_of(st.none(), st.integers(0, 4).map(float), st.just(math.nan))
    return pd.DataFrame(
        {
            "type": draw(st.lists(st.sampled_from(TYPES), min_size=n, max_size=n)),
            "time": times,
            "key": draw(st.lists(st.sampled_from(("k1", "k2", "k3", None)), min_size=n, max_size=n)),
            "x": draw(st.lists(x, min_size=n, max_size=n)),
            "y": draw(st.lists(st.sampled_from(("p", "q", None)), min_size=n, max_size=n)),
        }
    )


@st.composite
def patterns(draw: st.DrawFn, *, any_class: bool = False) -> str:
    """A sequence of 2-4 single stages; ``any_class``: also features outside the plan's class."""
    stages = draw(st.integers(1, 4))
    window = draw(st.sampled_from(("", " within 3ms", " within 5ms", " within 1ms")))
    skip = draw(
        st.sampled_from(
            ("", " skip past last event", " skip to next") if any_class else ("", " skip past last event")
        )
    )
    cap = draw(st.sampled_from(("", " max partial matches 1", " max partial matches 3")))
    timeouts = draw(st.sampled_from((" no timeouts", "") if any_class else (" no timeouts",)))
    lines = [f"sequence s{window}{timeouts}{skip}{cap}"]
    lines.append(f"    begin s0: {draw(st.sampled_from(TYPES))}{draw(st.sampled_from(CONDITIONS))}")
    for i in range(1, stages):
        if draw(st.booleans()):
            negation = draw(
                st.sampled_from(("not followed by", "not next") if any_class else ("not followed by",))
            )
            lines.append(
                f"    {negation} n{i}: {draw(st.sampled_from(TYPES))}{draw(st.sampled_from(CONDITIONS))}"
            )
        any_ok = not skip or any_class  # followed by any branches anywhere (no skip strategy)
        kinds = ("next", "followed by", "followed by any") if any_ok else ("next", "followed by")
        kind = draw(st.sampled_from(kinds))
        lines.append(f"    {kind} s{i}: {draw(st.sampled_from(TYPES))}{draw(st.sampled_from(CONDITIONS))}")
    return "\n".join(lines) + "\n"


def engine_run(text: str, frame: pd.DataFrame, **options: object) -> list[Detection]:
    engine = Engine(compile_patterns(text), **options)  # type: ignore[arg-type]
    engine.process_many(frame_to_events(frame))
    engine.finish()
    return engine.detections


def vectorised(text: str, frame: pd.DataFrame, **options: object) -> Sequence[Detection] | None:
    engine = Engine(compile_patterns(text), **options)  # type: ignore[arg-type]
    assert engine_reason(engine, None) is None
    return vector_detections(engine, EventColumns.from_frame(frame))


@settings(max_examples=300, deadline=None)
@given(patterns(), frames())
def test_the_plan_gives_the_engines_detections(text: str, frame: pd.DataFrame) -> None:
    expected = engine_run(text, frame)
    got = vectorised(text, frame)
    if got is None:  # only a cap that could bind, or an empty frame, sends it back to the engine
        assert "max partial matches" in text or frame.empty
    else:
        assert got == expected
    assert replay_frame(compile_patterns(text), frame).detections == expected


@settings(max_examples=150, deadline=None)
@given(patterns(any_class=True), frames())
def test_a_replay_of_any_pattern_is_the_engines(text: str, frame: pd.DataFrame) -> None:
    assert replay_frame(compile_patterns(text), frame).detections == engine_run(text, frame)


@settings(max_examples=100, deadline=None)
@given(patterns(), frames(), st.sampled_from((1, 2, 4)))
def test_the_engine_wide_budget_is_respected(text: str, frame: pd.DataFrame, max_live: int) -> None:
    got = vectorised(text, frame, max_live=max_live)
    assert got is None or got == engine_run(text, frame, max_live=max_live)


def two_patterns(first: str, second: str) -> str:
    return first + second.replace("sequence s", "sequence t")


@settings(max_examples=100, deadline=None)
@given(patterns(), patterns(), frames())
def test_several_patterns_merge_in_the_engines_order(one: str, two: str, frame: pd.DataFrame) -> None:
    text = two_patterns(one, two)
    expected = engine_run(text, frame)
    got = vectorised(text, frame)
    assert got is None or got == expected


FRAME = pd.DataFrame(
    {
        "type": ["a", "b", "a", "c", "b", "d", "c", "a", "b", "b"],
        "time": [0, 1, 1, 2, 3, 3, 4, 9, 9, 12],
        "key": ["k", "k", "k", "k", "k", "k", "k", "k", "k", "k"],
        "x": [1.0, 2.0, None, 3.0, 1.0, 0.0, 5.0, 1.0, 2.0, 2.0],
    }
)
BASE = "sequence s within 5ms no timeouts\n    begin a: a\n    followed by b: b\n"


def test_a_pattern_in_the_class_is_vectorised() -> None:
    got = vectorised(BASE, FRAME)
    assert got is not None
    assert got == engine_run(BASE, FRAME)
    assert [(d.instance, d.seqs, d.time) for d in got] == [(1, (0, 1), 1), (2, (2, 4), 3), (3, (7, 8), 9)]


def test_followed_by_any_enumerates_every_later_row() -> None:
    text = BASE.replace("followed by b", "followed by any b")
    got = vectorised(text, FRAME)
    assert got is not None
    assert [d.seqs for d in got] == [(0, 1), (0, 4), (2, 4), (7, 8), (7, 9)]
    assert got == engine_run(text, FRAME)


def changed(*changes: tuple[str, str]) -> str:
    text = BASE
    for old, new in changes:
        text = text.replace(old, new)
    return text


SKIP = ("no timeouts", "no timeouts skip past last event")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (changed(("no timeouts", "")), "timeouts"),
        (changed(("no timeouts", "no timeouts skip to next")), "skip strategy"),
        (changed(SKIP, ("followed by b", "followed by any b")), "with followed by any"),
        (changed(("followed by b: b", "followed by b: b times 2 or more")), "chain"),
        (changed(("followed by b: b", "not next x: d\n    followed by b: b")), "chain"),
    ],
)
def test_features_outside_the_class_are_named_and_the_engine_runs(text: str, reason: str) -> None:
    engine = Engine(compile_patterns(text))
    why = engine_reason(engine, None)
    assert why is not None
    assert reason in why
    assert plan_reason(engine.matchers[0]) is not None
    assert replay_frame(compile_patterns(text), FRAME).detections == engine_run(text, FRAME)


def test_a_pattern_with_measures_is_vectorised_and_measured_as_the_engine_measures() -> None:
    """Measures are a function of the finished match: added to the plan's detections, in order,
    with a failing one recorded as the engine records it (its value missing)."""
    text = changed(("no timeouts", "no timeouts measures n = count(b), gap = b.time - a.time, r = a.x / b.x"))
    zero = FRAME.assign(x=[1.0, 0.0, None, 3.0, 1.0, 0.0, 5.0, 1.0, 2.0, 2.0])
    engine = Engine(compile_patterns(text))
    assert engine_reason(engine, None) is None
    fast = replay_frame(compile_patterns(text), zero)
    slow = Engine(compile_patterns(text))
    slow.process_many(frame_to_events(zero))
    slow.finish()
    assert fast.detections == slow.detections
    assert isinstance(fast.detections, LazyDetections)
    assert fast.detections.measured  # its DataFrame: the table's columns, the measures from the items
    pd.testing.assert_frame_equal(detections_to_frame(fast.detections), detections_to_frame(slow.detections))
    assert [dict(d.measures) for d in fast.detections] == [
        {"n": 1, "gap": 1, "r": None},  # 1 / 0: the error below
        {"n": 1, "gap": 2, "r": None},  # a missing x: NULL, no error
        {"n": 1, "gap": 0, "r": 0.5},
    ]
    assert [(f.where, f.kind, f.count, f.first_seq) for f in fast.errors] == [
        (f.where, f.kind, f.count, f.first_seq) for f in slow.errors
    ]
    assert [f.kind for f in fast.errors] == ["ZeroDivisionError"]


NEGATED = "sequence s no timeouts\n    begin a: a\n    not followed by n: b\n    followed by c: b\n"


@pytest.mark.parametrize(
    ("text", "seqs"),
    [
        (NEGATED, [(0, 1)]),  # the row that meets the check completes the match all the same
        (NEGATED + "    followed by d: b\n", []),  # ... but kills a partial match it would extend
        (NEGATED.replace("followed by c", "followed by any c"), [(0, 1)]),  # ... and ends the enumeration
    ],
)
def test_a_row_meeting_a_check_and_taking_the_stage(text: str, seqs: list[tuple[int, ...]]) -> None:
    frame = pd.DataFrame({"type": ["a", "b", "b"], "time": [0, 1, 2], "key": "k"})
    got = vectorised(text, frame)
    assert got is not None
    assert [d.seqs for d in got] == seqs
    assert got == engine_run(text, frame)


def test_a_stage_taken_twice_lists_its_events_together() -> None:
    text = BASE.replace("followed by b: b", "followed by b: b times 2\n    followed by c: c")
    got = vectorised(text, FRAME)
    assert got is not None
    assert got == engine_run(text, FRAME)
    assert [(d.seqs, d.channels) for d in got] == [((0, 1, 4, 6), ("a", "b", "b", "c"))]


def test_skip_past_last_event_holds_and_discards() -> None:
    text = changed(SKIP, ("followed by b: b", "followed by b: b\n    followed by c: c"))
    frame = pd.DataFrame(
        {"type": ["a", "a", "b", "c", "a", "b", "c"], "time": [0, 1, 2, 3, 4, 5, 6], "key": "k"}
    )
    got = vectorised(text, frame)
    assert got is not None
    assert got == engine_run(text, frame)
    # the second start is discarded by the first match; the third completes on its own
    assert [(d.instance, d.seqs) for d in got] == [(1, (0, 2, 3)), (3, (4, 5, 6))]
    assert (
        len(engine_run(changed(("followed by b: b", "followed by b: b\n    followed by c: c")), frame)) == 3
    )


def test_a_match_discards_the_start_on_its_own_last_row() -> None:
    text = "sequence s no timeouts skip past last event\n    begin a: a\n    followed by b: a\n"
    frame = pd.DataFrame({"type": ["a", "a", "a", "a"], "time": [0, 1, 2, 3], "key": "k"})
    got = vectorised(text, frame)
    assert got is not None
    assert [(d.instance, d.seqs) for d in got] == [(1, (0, 1)), (3, (2, 3))]
    assert got == engine_run(text, frame)


def test_a_flush_until_a_time_runs_skip_patterns_on_the_engine() -> None:
    engine = Engine(compile_patterns(changed(SKIP)))
    assert "flush" in str(engine_reason(engine, 10))
    assert engine_reason(Engine(compile_patterns(BASE)), 10) is None


def test_trace_and_emit_into_run_on_the_engine() -> None:
    assert engine_reason(Engine(compile_patterns(BASE), trace=True), None) == "trace is on"
    emitting = BASE.replace("no timeouts", "no timeouts emit into found") + BASE.replace(
        "sequence s", "sequence u"
    )
    assert "emits" in str(engine_reason(Engine(compile_patterns(emitting)), None))
    result = replay_frame(compile_patterns(BASE), FRAME, trace=True)
    assert result.detections == engine_run(BASE, FRAME)
    assert result.trace


def test_a_condition_with_no_columnar_form_runs_on_the_engine() -> None:
    text = BASE.replace("followed by b: b", "followed by b: b where abs(e.x) > 1")
    assert vectorised(text, FRAME) is None
    assert replay_frame(compile_patterns(text), FRAME).detections == engine_run(text, FRAME)


def test_a_cap_that_could_bind_runs_on_the_engine() -> None:
    text = BASE.replace("no timeouts", "no timeouts max partial matches 1")
    assert vectorised(text, FRAME) is None  # two starts of k lie within one window
    assert vectorised(text.replace("within 5ms", "within 1ms"), FRAME) is not None
    assert vectorised(BASE, FRAME, max_live=1) is None
    assert vectorised(BASE, FRAME, max_live=2) is not None
    assert replay_frame(compile_patterns(text), FRAME).detections == engine_run(text, FRAME)


def test_followed_by_any_in_the_middle_branches_in_the_engines_order() -> None:
    # each b after the a branches; two branches completing on one row go out by the row each took
    text = (
        "sequence s no timeouts\n    begin a: a\n    followed by any b: b\n"
        "    followed by any c: c\n    followed by d: d\n"
    )
    frame = pd.DataFrame(
        {"type": list("abbcbcd"), "time": range(7), "key": "k"},
    )
    got = vectorised(text, frame)
    assert got == engine_run(text, frame)
    expected = [(0, 1, 3, 6), (0, 2, 3, 6), (0, 1, 5, 6), (0, 2, 5, 6), (0, 4, 5, 6)]
    assert [d.seqs for d in got or []] == expected


MEASURES = (
    " measures n = count(time), gap = max(time) - min(time), r = 2 / first(s0).x, y = last(y), x0 = s0.x"
)


@settings(max_examples=150, deadline=None)
@given(patterns(any_class=True), frames())
def test_measures_are_the_same_on_every_path(text: str, frame: pd.DataFrame) -> None:
    """Vectorised, fused (kernels queue the detections, the loop measures them) and traced (the
    matcher's measuring context): the same detections, measures and recorded errors."""
    head, rest = text.split("\n", 1)
    fused, traced, replayed = measured_runs(head + MEASURES + "\n" + rest, frame)
    assert fused == traced == replayed


def measured_runs(text: str, frame: pd.DataFrame) -> list[tuple[list[Detection], list[tuple[object, ...]]]]:
    """The detections and errors of ``text`` over ``frame``: fused, traced, replayed."""
    events = frame_to_events(frame)
    runs = []
    for trace in (False, True):
        engine = Engine(compile_patterns(text), trace=trace)
        engine.process_many(events)
        engine.finish()
        runs.append((engine.detections, [(f.where, f.kind, f.count, f.first_seq) for f in engine.errors]))
    replay = replay_frame(compile_patterns(text), frame)
    runs.append((list(replay.detections), [(f.where, f.kind, f.count, f.first_seq) for f in replay.errors]))
    # the replay's DataFrame (from its table, when vectorised) is the one of the engine's detections
    pd.testing.assert_frame_equal(detections_to_frame(replay.detections), detections_to_frame(runs[0][0]))
    return runs
