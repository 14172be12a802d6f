"""Windows: within (first-and-last, exclusive border), within previous-and-current, timeouts."""

from __future__ import annotations

import pytest

from tests.engine.oracle import feed, is_type, seqs
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import Quantifier, SequencePattern, Stage, begin
from workbench.engine.runtime import Engine, run
from workbench.errors import PatternError


def ab(within: int | None) -> SequencePattern:
    p = begin("a").where(is_type("a")).followed_by("b").where(is_type("b"))
    return (p.within(within) if within is not None else p).build("p")


def test_right_border_is_exclusive() -> None:
    assert seqs(feed(ab(5), "ab", times=[0, 4])) == [(0, 1)]
    assert seqs(feed(ab(5), "ab", times=[0, 5])) == []


def test_timeout_carries_what_was_matched_and_the_deadline() -> None:
    out = feed(ab(5), "ax", times=[1, 9])
    assert [(d.kind, d.seqs, d.time, d.channels) for d in out] == [("timeout", (0,), 6, ("a",))]


def test_engine_fires_timeouts_without_further_events() -> None:
    res = run(ab(5), [{"type": "a", "time": 1}])
    assert [(d.kind, d.seqs, d.time) for d in res.detections] == [("timeout", (0,), 6)]
    eng = Engine([ab(5)])
    eng.process({"type": "a", "time": 1})
    assert eng.advance_time(5) == []
    assert [d.kind for d in eng.advance_time(6)] == ["timeout"]


def test_timeouts_can_be_switched_off() -> None:
    p = SequencePattern("p", ab(5).stages, within_ms=5, emit_timeouts=False)
    assert run(p, [{"type": "a", "time": 1}]).detections == []


def test_minimum_of_stage_windows_and_zero_disables() -> None:
    stages = (Stage("a", is_type("a"), within_ms=3), Stage("b", is_type("b")))
    assert seqs(feed(SequencePattern("p", stages, within_ms=10), "ab", times=[0, 4])) == []
    zero = (Stage("a", is_type("a"), within_ms=0), Stage("b", is_type("b")))
    assert seqs(feed(SequencePattern("p", zero, within_ms=10), "ab", times=[0, 40])) == [(0, 1)]


def test_previous_and_current_window() -> None:
    p = (
        begin("a").where(is_type("a")).followed_by("b").where(is_type("b"))
        .followed_by("c").where(is_type("c")).within_prev(3).build("p")
    )  # fmt: skip
    assert seqs(feed(p, "abc", times=[0, 5, 7])) == [(0, 1, 2)]
    out = feed(p, "abc", times=[0, 5, 8])
    assert seqs(out) == []
    assert [(d.seqs, d.time) for d in out if d.kind == "timeout"] == [((0, 1), 8)]


def test_previous_window_larger_than_whole_window_is_rejected() -> None:
    p = begin("a").followed_by("b").within_prev(10).within(5).build("p")
    with pytest.raises(PatternError, match="window length"):
        compile_matcher(p)


def test_times_window_limits_gaps_between_occurrences() -> None:
    p = begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).times(3, window_ms=3)
    p2 = p.followed_by("c").where(is_type("c")).build("p")
    assert seqs(feed(p2, "abbbc", times=[0, 1, 2, 3, 4])) == [(0, 1, 2, 3, 4)]
    assert seqs(feed(p2, "abbbc", times=[0, 1, 5, 6, 7])) == []


def _optional_then_prev_window() -> SequencePattern:
    # begin a, followed by optional c, followed by b within 2 of the previous event
    return SequencePattern(
        "p",
        (
            Stage("a", is_type("a")),
            Stage("c", is_type("c"), quantifier=Quantifier(optional=True)),
            Stage("b", is_type("b"), within_prev_ms=2),
        ),
    )


@pytest.mark.parametrize("out_of_orderness", [0, 5])
def test_windows_are_checked_once_per_timestamp_as_in_flink_s_operator(out_of_orderness: int) -> None:
    # (the engine checked before each event: x@18 moved the partial match past the optional c into
    # b's window, which ends at 18, so b@18 found it timed out; Flink's CepOperator advances time
    # once per timestamp, then processes every event of it: (a, b) matches)
    events = [{"type": t, "time": time, "key": "k"} for t, time in (("a", 16), ("x", 18), ("b", 18))]
    out = run(_optional_then_prev_window(), events, out_of_orderness=out_of_orderness).detections
    assert [(d.kind, d.seqs, d.time) for d in out] == [("match", (0, 2), 18)]


def test_the_nfa_harness_still_advances_before_every_event() -> None:
    from workbench.testing import NFATestHarness

    harness = NFATestHarness(_optional_then_prev_window())
    for t, time in (("a", 16), ("x", 18), ("b", 18)):
        harness.feed({"type": t, "time": time})
    assert [(d.kind, d.seqs, d.time) for d in harness.detections] == [("timeout", (0,), 18)]
