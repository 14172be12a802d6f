"""Pruned replays equal feeding every row: random sequence patterns, random in-order inputs, traced."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.patterns import benchmark_patterns
from benchmarks.workload import WorkloadSpec
from tests.backends.columnar.test_replay import TEXTS, workload
from tests.engine.nfa.test_index import rich_patterns
from tests.engine.nfa.test_linear import linear_patterns
from tests.engine.nfa.test_loop import loop_patterns
from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.prune import KeyOrder, nfa_rules
from workbench.backends.columnar.replay import feed_plan, replay_chunks, replay_frame, rows_to_feed
from workbench.engine.families import compile_matcher
from workbench.engine.matcher import Pattern
from workbench.engine.nfa import Contiguity, Quantifier, SequencePattern, SkipStrategy, Stage
from workbench.engine.runtime import Engine, run
from workbench.errors import CepError, PatternError
from workbench.language import compile_text
from workbench.results import frame_to_events

PATTERNS = benchmark_patterns()


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 45))
    t, times = 0, []
    for _ in range(n):
        t += draw(st.sampled_from([0, 1, 1, 2, 3, 5]))
        times.append(t)
    return pd.DataFrame(
        {
            "type": draw(st.lists(st.sampled_from("abcdxx"), min_size=n, max_size=n)),
            "time": times,
            "key": draw(st.lists(st.sampled_from(["k1", "k2", "k3"]), min_size=n, max_size=n)),
            "v": draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)),
        }
    )


def outcome(patterns: list[Any], frame: pd.DataFrame, pruned: bool, trace: bool = True) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if pruned:
                got = replay_frame(patterns, frame, trace=trace)
            else:
                got = run(patterns, frame_to_events(frame), trace=trace)
        except CepError as err:
            return type(err), str(err)
    return (
        got.detections,
        [d.seqs for d in got.detections],
        [d.instance for d in got.detections],
        got.trace,
        got.errors,
        [str(w.message) for w in caught],
    )


def check(pattern: Pattern, frame: pd.DataFrame) -> None:
    try:
        matcher = compile_matcher(pattern)
    except PatternError:
        return
    for trace in (True, False):  # why untraced too: only then are dead-end starts left out
        got, want = outcome([matcher], frame, True, trace), outcome([matcher], frame, False, trace)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert g == w, (trace, i, g, w)


@st.composite
def untimed(draw: st.DrawFn, base: st.SearchStrategy[Pattern]) -> Pattern:
    """A pattern as drawn, often without timeouts, cap or skip strategy (where dead ends are pruned)."""
    p = draw(base)
    if isinstance(p, SequencePattern) and draw(st.booleans()):
        p = dataclasses.replace(p, emit_timeouts=False, max_partial_matches=None, skip=SkipStrategy())
    return p


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(untimed(st.one_of(linear_patterns(), rich_patterns(), loop_patterns())), frames())
def test_dead_end_starts(pattern: Pattern, frame: pd.DataFrame) -> None:
    check(pattern, frame)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linear_patterns(), frames())
def test_linear_patterns(pattern: Pattern, frame: pd.DataFrame) -> None:
    check(pattern, frame)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rich_patterns(), frames())
def test_rich_patterns(pattern: Pattern, frame: pd.DataFrame) -> None:
    check(pattern, frame)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_patterns(), frames())
def test_loop_patterns_with_aggregates(pattern: Pattern, frame: pd.DataFrame) -> None:
    check(pattern, frame)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(untimed(st.one_of(linear_patterns(), rich_patterns())), min_size=2, max_size=3), frames())
def test_several_patterns_in_one_engine(patterns: list[Pattern], frame: pd.DataFrame) -> None:
    # distinct names, given before compiling: a compiled plan emits the name it was compiled with
    named = [dataclasses.replace(p, name=f"p{i}") for i, p in enumerate(patterns)]  # type: ignore[type-var]
    try:
        matchers = [compile_matcher(p) for p in named]
    except PatternError:
        return
    for trace in (True, False):
        assert outcome(matchers, frame, True, trace) == outcome(matchers, frame, False, trace)


def test_benchmark_patterns_feed_fewer_rows_with_equal_results() -> None:
    frame = workload(WorkloadSpec(n=4_000, seed=7))
    cols = EventColumns.from_frame(frame, time_column="t")
    for name, pattern in PATTERNS.items():
        rows = rows_to_feed(Engine([pattern]), cols)
        assert rows is not None, name
        assert len(rows) < 0.7 * len(frame), name
        assert outcome([pattern], frame.rename(columns={"t": "time"}), True) == outcome(
            [pattern], frame.rename(columns={"t": "time"}), False
        ), name


def test_a_trailing_absence_is_no_dead_end() -> None:
    """A start whose match completes only when its window ends (a trailing notFollowedBy) is fed."""
    loop = Quantifier(2, None, inner=Contiguity.NONDETERMINISTIC_RELAXED)
    p = SequencePattern(
        "quiet",
        (Stage("a", types=("a",), quantifier=loop), Stage("no_b", types=("b",), negated=True)),
        within_ms=8,
        emit_timeouts=False,
        max_partial_matches=None,  # why: dead-end starts are left out only without a cap
    )
    frame = pd.DataFrame({"type": ["a", "a", "a", "a", "a"], "time": [0, 0, 0, 8, 8], "key": "k"})
    want = outcome([p], frame, False, False)
    assert want[0], "the full replay finds the matches the window's end completes"
    assert outcome([p], frame, True, False) == want


def test_next_feeds_starts_and_their_successors_only() -> None:
    frame = pd.DataFrame(
        {
            "type": ["a", "x", "x", "a", "a", "b", "x", "b"],
            "time": [0, 1, 2, 3, 4, 5, 6, 7],
            "key": ["k", "k", "k", "k", "j", "k", "j", "j"],
        }
    )
    p = SequencePattern(
        "n", (Stage("a", types=("a",)), Stage("b", types=("b",), contiguity=Contiguity.STRICT))
    )
    rows = rows_to_feed(Engine([p]), EventColumns.from_frame(frame))
    assert rows is not None
    assert rows.tolist() == [0, 1, 3, 4, 5, 6]


def test_rows_outside_every_window_are_not_fed() -> None:
    frame = pd.DataFrame(
        {"type": ["login", "update", "trade", "trade", "trade"], "time": [0, 1, 5, 10, 11], "key": "k"}
    )
    assert rows_to_feed(Engine([PATTERNS["P2"]]), EventColumns.from_frame(frame)) is None  # all live
    frame["time"] = [0, 1, 5_000, 10_000, 10_001]
    rows = rows_to_feed(Engine([PATTERNS["P2"]]), EventColumns.from_frame(frame))
    assert rows is not None
    assert rows.tolist() == [0, 1, 2, 3]  # 10 s window: the deadline row itself is fed, later ones not


def test_later_stages_need_the_earlier_ones_before_them() -> None:
    frame = pd.DataFrame(
        {
            "type": ["login", "trade", "update", "trade", "login", "trade"],
            "time": [0, 1, 2, 3, 4, 5],
            "key": "k",
        }
    )
    rows = rows_to_feed(Engine([PATTERNS["P2"]]), EventColumns.from_frame(frame))
    assert rows is not None
    assert rows.tolist() == [0, 2, 3, 4, 5]  # the trade before any update cannot move a partial match


def test_dead_end_starts_are_left_out_and_instances_keep_their_ids() -> None:
    frame = pd.DataFrame(
        {
            "type": ["login", "view", "login", "trade", "login", "trade"],
            "time": [0, 1, 2, 3, 4, 5],
            "key": "k",
            "price": [None, None, None, 120.0, None, 100.0],
        }
    )
    engine = Engine([PATTERNS["P1"]])
    assert feed_plan(engine, EventColumns.from_frame(frame))[0].tolist() == [2, 3]  # type: ignore[union-attr]
    got = replay_frame([PATTERNS["P1"]], frame).detections
    assert [(d.instance, d.seqs) for d in got] == [(2, (2, 3))]
    assert got == run([PATTERNS["P1"]], frame_to_events(frame)).detections
    traced = Engine([PATTERNS["P1"]], trace=True)
    rows = feed_plan(traced, EventColumns.from_frame(frame))[0]
    assert rows is None or {0, 2, 4} <= set(rows.tolist())  # traced: every start shows


def test_plain_type_rule_for_other_families() -> None:
    group = compile_text(TEXTS["group_or"])[0].pattern
    assert nfa_rules(compile_matcher(group)) is None
    frame = pd.DataFrame({"type": ["a", "z", "b", "c"], "time": [1, 2, 3, 4], "key": "k", "x": 1})
    rows = rows_to_feed(Engine([group]), EventColumns.from_frame(frame))
    assert rows is not None
    assert rows.tolist() == [0, 2, 3]


def test_key_order_scans() -> None:
    keys = KeyOrder(np.array([0, 1, 0, 0, 1, 0], dtype=np.int64))
    start = keys.sort(np.array([True, False, False, False, True, False]))
    times = keys.sort(np.array([0.0, 1, 2, 9, 10, 11]))
    assert keys.unsort(keys.live(start, times, 5.0)).tolist() == [True, False, True, False, True, False]
    entering = keys.sort(np.array([True, True, True, False, True, False]))
    succ = keys.unsort(keys.successors(start, entering))
    assert succ.tolist() == [False, False, True, True, False, False]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(linear_patterns(), rich_patterns(), loop_patterns()), frames(), st.data())
def test_slices_equal_one_replay(pattern: Pattern, frame: pd.DataFrame, data: st.DataObject) -> None:
    try:
        matcher = compile_matcher(pattern)
    except PatternError:
        return
    cuts = sorted(data.draw(st.lists(st.integers(0, len(frame)), max_size=3)))
    pieces = [frame.iloc[a:b] for a, b in zip([0, *cuts], [*cuts, len(frame)], strict=True)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = run([matcher], frame_to_events(frame)).detections
        sliced = [d for got in replay_chunks([matcher], pieces) for d in got]
    assert sliced == whole
    assert [d.seqs for d in sliced] == [d.seqs for d in whole]


def test_slices_going_back_in_time_are_refused() -> None:
    pieces = [
        pd.DataFrame({"type": ["a"], "time": [5], "key": "k"}),
        pd.DataFrame({"type": ["a"], "time": [4], "key": "k"}),
    ]
    with pytest.raises(CepError, match="backwards"):
        list(replay_chunks([PATTERNS["P2"]], pieces))
