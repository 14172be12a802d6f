"""The vectorised loop plan (``a, b{n,}, c``, running aggregates) gives exactly the engine's detections."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends.columnar.test_vectorplan import engine_run, measured_runs
from tests.backends.columnar.test_vectorplan import vectorised as chain_vectorised
from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.replay import replay_frame
from workbench.backends.columnar.vectorplan import plan_reason, vector_detections
from workbench.engine.detection import Detection
from workbench.engine.matchtable import LazyDetections
from workbench.engine.nfa.loop import LoopPlan
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.runtime import Engine
from workbench.language import compile_patterns
from workbench.results import detections_to_frame

TYPES = ("a", "b", "c", "d")
LOOP_CONDITIONS = (
    "",
    " where e.x > 1",
    " where m > 1.5",
    " where m >= 2 and e.x < 4",
    " where s < 7",
    " where n <= 3",
    " where s + e.x > 3 or n == 1",
    " where not (m > 2)",
)


@st.composite
def frames(draw: st.DrawFn, *, nulls: bool = False) -> pd.DataFrame:
    """Keyed rows with ties in time; ``nulls``: NULL and NaN in the aggregated field."""
    n = draw(st.integers(0, 40))
    steps = draw(st.lists(st.sampled_from((0, 0, 1, 2, 3)), min_size=n, max_size=n))
    times, t = [], 0
    for step in steps:
        t += step
        times.append(t)
    x = st.integers(0, 4).map(float)
    if nulls:
        x = st.one_of(st.none(), x, st.just(math.nan))
    return pd.DataFrame(
        {
            "type": draw(st.lists(st.sampled_from(TYPES), min_size=n, max_size=n)),
            "time": times,
            "key": draw(st.lists(st.sampled_from(("k1", "k2", None)), min_size=n, max_size=n)),
            "x": draw(st.lists(x, min_size=n, max_size=n)),
        }
    )


@st.composite
def loops(draw: st.DrawFn) -> str:
    """``begin a, followed by b{n,} [where ...aggregates...], followed by c``, with windows and caps."""
    window = draw(st.sampled_from(("", " within 4ms", " within 8ms", " within 1ms")))
    cap = draw(st.sampled_from(("", "", " max partial matches 2")))
    include = draw(st.sampled_from(("", " including current")))
    start, loop, last = draw(st.permutations(TYPES))[:3]
    quantifier = draw(st.sampled_from(("one or more", "times 2 or more", "times 3 or more")))
    return (
        f"sequence s{window} no timeouts{cap}\n"
        f"    aggregate m = avg(b.x){include}\n"
        f"    aggregate s = sum(b.x){include}\n"
        f"    aggregate n = count(b.x){include}\n"
        f"    begin a: {start}{draw(st.sampled_from(('', ' where e.x > 0')))}\n"
        f"    followed by b: {loop}{draw(st.sampled_from(LOOP_CONDITIONS))} {quantifier}\n"
        f"    followed by c: {last}\n"
    )


def vectorised(text: str, frame: pd.DataFrame, **options: object) -> Sequence[Detection] | None:
    """The chain tests' helper, for a pattern that the loop plan runs."""
    m = Engine(compile_patterns(text)).matchers[0]
    assert isinstance(m, NFAMatcher)
    assert isinstance(m.plan, LoopPlan)
    return chain_vectorised(text, frame, **options)


@settings(max_examples=300, deadline=None)
@given(loops(), frames())
def test_the_loop_plan_gives_the_engines_detections(text: str, frame: pd.DataFrame) -> None:
    expected = engine_run(text, frame)
    got = vectorised(text, frame)
    if got is None:  # only a cap that could bind, or an empty frame, sends it back to the engine
        assert "max partial matches" in text or frame.empty
    else:
        assert got == expected
        pd.testing.assert_frame_equal(detections_to_frame(got), detections_to_frame(expected))
    assert replay_frame(compile_patterns(text), frame).detections == expected


@settings(max_examples=150, deadline=None)
@given(loops(), frames(nulls=True))
def test_nulls_in_the_aggregated_field_leave_it_to_the_engine(text: str, frame: pd.DataFrame) -> None:
    expected = engine_run(text, frame)
    got = vectorised(text, frame)
    assert got is None or got == expected
    assert replay_frame(compile_patterns(text), frame).detections == expected


@settings(max_examples=100, deadline=None)
@given(loops(), frames(), st.sampled_from((1, 3, 8)))
def test_the_engine_wide_budget_is_respected(text: str, frame: pd.DataFrame, max_live: int) -> None:
    got = vectorised(text, frame, max_live=max_live)
    assert got is None or got == engine_run(text, frame, max_live=max_live)


@settings(max_examples=100, deadline=None)
@given(loops(), loops(), frames())
def test_a_loop_and_another_loop_merge_in_the_engines_order(one: str, two: str, frame: pd.DataFrame) -> None:
    text = one + two.replace("sequence s", "sequence t")
    expected = engine_run(text, frame)
    engine = Engine(compile_patterns(text))
    got = vector_detections(engine, EventColumns.from_frame(frame))
    assert got is None or got == expected


def test_a_loop_and_a_chain_merge_in_the_engines_order() -> None:
    text = (
        "sequence s\n    begin a: a\n    followed by b: b one or more\n    followed by c: c\n"
        "sequence t\n    begin a: a\n    followed by c: c\n"
    )
    frame = pd.DataFrame({"type": list("abbacbc"), "time": [0, 1, 2, 2, 3, 4, 5], "key": "k", "x": [1.0] * 7})
    engine = Engine(compile_patterns(text))
    got = vector_detections(engine, EventColumns.from_frame(frame))
    assert got is not None
    assert got == engine_run(text, frame)
    assert [(d.pattern, d.seqs) for d in got] == [
        ("s", (0, 1, 4)),
        ("s", (0, 1, 2, 4)),
        ("t", (0, 4)),
        ("t", (3, 4)),
        ("s", (0, 1, 2, 5, 6)),
        ("s", (3, 5, 6)),
    ]


def test_prefixes_complete_on_the_first_last_row_after_them() -> None:
    # PATTERNS.md's P3 example: L T1 T2 T3 O1 T4 O2 gives {T1,T2}+O1, {T1,T2,T3}+O1, {T1..T4}+O2
    text = "sequence s\n    begin a: L\n    followed by b: T times 2 or more\n    followed by c: O\n"
    frame = pd.DataFrame({"type": ["L", "T", "T", "T", "O", "T", "O"], "time": range(7), "key": "k"})
    got = vector_detections(Engine(compile_patterns(text)), EventColumns.from_frame(frame))
    assert got is not None
    assert sorted(d.seqs for d in got) == [(0, 1, 2, 3, 4), (0, 1, 2, 3, 5, 6), (0, 1, 2, 4)]
    assert got == engine_run(text, frame)


def test_a_running_average_decides_each_take() -> None:
    text = (
        "sequence s within 100ms no timeouts\n    aggregate m = avg(b.x) including current\n"
        "    begin a: L\n    followed by b: T where m > 2 one or more\n    followed by c: O\n"
    )
    # T(3) taken (avg 3), T(0) not (avg 1.5), T(2) taken (avg 2.5), O
    frame = pd.DataFrame(
        {"type": ["L", "T", "T", "T", "O"], "time": range(5), "key": "k", "x": [0.0, 3, 0, 2, 0]}
    )
    got = vector_detections(Engine(compile_patterns(text)), EventColumns.from_frame(frame))
    assert got is not None
    assert [d.seqs for d in got] == [d.seqs for d in engine_run(text, frame)]
    assert sorted(d.seqs for d in got) == [(0, 1, 3, 4), (0, 1, 4)]


@pytest.mark.parametrize(
    ("aggregate", "reason"),
    [
        ("aggregate m = max(b.x)", "not count, sum or avg"),
        ("aggregate m = avg(a.x)", "not the loop stage"),
    ],
)
def test_other_aggregates_are_named_and_the_engine_runs(aggregate: str, reason: str) -> None:
    text = (
        f"sequence s no timeouts\n    {aggregate}\n    begin a: a\n"
        "    followed by b: b where m > 1 one or more\n    followed by c: c\n"
    )
    engine = Engine(compile_patterns(text))
    why = plan_reason(engine.matchers[0])
    assert why is not None
    assert reason in why


def test_a_row_that_could_extend_and_complete_runs_on_the_engine() -> None:
    text = (
        "sequence s no timeouts\n    begin a: a\n    followed by b: b one or more\n"
        "    followed by c: b where e.x > 1\n"
    )
    frame = pd.DataFrame({"type": ["a", "b", "b"], "time": [0, 1, 2], "key": "k", "x": [0.0, 1.0, 2.0]})
    assert vector_detections(Engine(compile_patterns(text)), EventColumns.from_frame(frame)) is None
    assert replay_frame(compile_patterns(text), frame).detections == engine_run(text, frame)


def test_a_lazy_list_reads_as_the_engines_list() -> None:
    text = "sequence s no timeouts\n    begin a: L\n    followed by b: T one or more\n    followed by c: O\n"
    frame = pd.DataFrame({"type": ["L", "T", "O"], "time": range(3), "key": "k"})
    got = replay_frame(compile_patterns(text), frame).detections
    expected = engine_run(text, frame)
    assert isinstance(got, LazyDetections)
    assert len(got) == 1
    assert got[0] == expected[0]
    assert got[:1] == expected
    assert list(got) == expected
    assert [*got] == expected
    assert [*got] == expected
    import pickle

    assert pickle.loads(pickle.dumps(got)) == expected


def test_one_long_run_is_left_to_the_engine() -> None:
    text = (
        "sequence s no timeouts\n    aggregate m = avg(b.x)\n    begin a: a\n"
        "    followed by b: b where m > 1 one or more\n    followed by c: c\n"
    )
    frame = pd.DataFrame({"type": ["a"] + ["b"] * 400 + ["c"], "time": range(402), "key": "k", "x": 2.0})
    engine = Engine(compile_patterns(text))
    assert vector_detections(engine, EventColumns.from_frame(frame)) is None
    assert replay_frame(compile_patterns(text), frame).detections == engine_run(text, frame)


@settings(max_examples=150, deadline=None)
@given(loops(), frames(nulls=True))
def test_a_loop_with_measures_is_measured_alike_on_every_path(text: str, frame: pd.DataFrame) -> None:
    """The loop plan's kernel (fused loop), its traced interpreter and the replay give the same
    measured detections and errors."""
    text = text.replace(" no timeouts", " no timeouts measures k = count(b), mean = avg(b.x), r = 1 / a.x", 1)
    fused, traced, replayed = measured_runs(text, frame)
    assert fused == traced == replayed
