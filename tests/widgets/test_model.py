"""The timeline data model on synthetic traces: states, lifetimes, scrubbing, filters, bounds."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import pytest

from workbench.engine import Detection, Event, TraceKind, TraceRecord
from workbench.widgets.model import TimelineModel
from workbench.widgets.rows import RowId, State

K = TraceKind


def rec(
    t: float,
    kind: TraceKind,
    element: str | None = None,
    seq: int | None = None,
    *,
    pattern: str = "p",
    key: Hashable = "k",
    instance: int = 1,
    **detail: Any,
) -> TraceRecord:
    return TraceRecord(t, pattern, key, instance, kind, element, seq, detail)


def states(model: TimelineModel, t: float, **kw: Any) -> dict[tuple[int, str | None], tuple[str, str, bool]]:
    return {
        (r.instance, r.element): (str(s.state), s.label, s.live) for r, s in model.state_at(t, **kw).items()
    }


# An AND group with a @not channel, a @count(3) channel, a paused channel, a stopped channel:
#   0 start; 1 a accepted; 2..4 c counted 1/3..3/3; 3 b paused; 5 b resumed; 6 d stopped;
#   8 instance detected, n negated (satisfied by absence).
GROUP = [
    rec(0, K.STARTED, seq=0),
    rec(1, K.ACCEPTED, "a", 1),
    rec(2, K.COUNTED, "c", 2, count=1, of=3),
    rec(3, K.PAUSED, "b"),
    rec(3, K.COUNTED, "c", 3, count=2, of=3),
    rec(4, K.COUNTED, "c", 4, count=3, of=3),
    rec(5, K.RESUMED, "b"),
    rec(6, K.STOPPED, "d"),
    rec(8, K.NEGATED, "n"),
    rec(8, K.DETECTED),
]


def test_every_group_state_while_scrubbing() -> None:
    m = TimelineModel(GROUP)
    assert states(m, -1) == {}  # nothing started yet
    at0 = states(m, 0)
    # every element row exists from the instance's start; before its first record it is waiting
    assert at0 == {(1, el): ("waiting", "", True) for el in "abcdn"} | {(1, None): ("active", "", True)}
    assert states(m, 1)[(1, "a")] == ("active", "", True)
    assert states(m, 2)[(1, "b")] == ("waiting", "", True)
    assert states(m, 2)[(1, "c")] == ("counted", "1/3", True)
    at3 = states(m, 3)
    assert at3[(1, "b")] == ("paused", "", True)
    assert at3[(1, "c")] == ("counted", "2/3", True)
    assert states(m, 4.5)[(1, "c")] == ("counted", "3/3", True)
    assert states(m, 5)[(1, "b")] == ("waiting", "", True)  # resumed: back to the state before the pause
    assert states(m, 6)[(1, "d")] == ("stopped", "", True)
    assert states(m, 7.9)[(1, "n")] == ("waiting", "", True)
    at8 = states(m, 8)
    assert at8[(1, None)] == ("detected", "", False)
    assert at8[(1, "n")] == ("negated", "", False)
    assert at8[(1, "c")] == ("counted", "3/3", False)
    assert states(m, 100) == at8  # after the end nothing changes


def test_resume_restores_counted_state() -> None:
    m = TimelineModel(
        [
            rec(0, K.STARTED),
            rec(1, K.COUNTED, "c", 1, count=1, of=2),
            rec(2, K.PAUSED, "c"),
            rec(3, K.RESUMED, "c"),
            rec(4, K.ACCEPTED, "c", 2),  # accepted does not drop the count label
        ]
    )
    assert states(m, 2)[(1, "c")] == ("paused", "", True)
    assert states(m, 3)[(1, "c")] == ("counted", "1/2", True)
    assert states(m, 4)[(1, "c")] == ("counted", "1/2", True)


@pytest.mark.parametrize(
    ("kind", "state"),
    [
        (K.TIMED_OUT, "timed_out"),
        (K.FAILED, "failed"),
        (K.PRUNED, "pruned"),
        (K.STOPPED, "stopped"),
        (K.DETECTED, "detected"),
    ],
)
def test_terminal_instance_states(kind: TraceKind, state: str) -> None:
    m = TimelineModel([rec(0, K.STARTED), rec(2, K.ACCEPTED, "a", 1), rec(5, kind)])
    assert states(m, 4)[(1, None)] == ("active", "", True)
    assert states(m, 5)[(1, None)] == (state, "", False)
    assert m.instances[("p", "k", 1)].end == 5


def test_instance_level_violation_does_not_end_the_instance() -> None:
    m = TimelineModel([rec(0, K.STARTED), rec(2, K.VIOLATED, seq=1)])
    assert states(m, 2)[(1, None)] == ("violated", "", True)


def test_element_level_negation_violation_and_member_timeout() -> None:
    m = TimelineModel(
        [rec(0, K.STARTED), rec(2, K.VIOLATED, "n", 3), rec(3, K.TIMED_OUT, "a"), rec(3, K.FAILED)]
    )
    s = states(m, 3)
    assert s[(1, "n")] == ("violated", "", False)
    assert s[(1, "a")] == ("timed_out", "", False)
    assert s[(1, None)] == ("failed", "", False)


def test_ignored_and_extended() -> None:
    m = TimelineModel([rec(0, K.STARTED), rec(1, K.IGNORED, "a", 1), rec(2, K.EXTENDED, "b")])
    s = states(m, 2)
    assert s[(1, "a")] == ("waiting", "", True)  # ignored is a marker only
    assert s[(1, "b")] == ("active", "", True)
    assert [mk.kind for mk in m.view().markers] == ["started", "ignored", "extended"]


def test_repeated_emission_keeps_the_instance_open() -> None:
    m = TimelineModel([rec(0, K.STARTED), rec(2, K.DETECTED), rec(4, K.ACCEPTED, "a", 1)])
    inst = m.instances[("p", "k", 1)]
    assert inst.end is None
    assert states(m, 3)[(1, None)] == ("detected", "", True)
    assert states(m, 4)[(1, None)] == ("detected", "", True)
    assert states(m, 4)[(1, "a")] == ("active", "", True)


def test_same_instant_last_record_wins() -> None:
    m = TimelineModel([rec(0, K.STARTED), rec(1, K.ACCEPTED, "a"), rec(1, K.STOPPED, "a")])
    assert m.instances[("p", "k", 1)].changes["a"] == [(0, State.WAITING, ""), (1, State.STOPPED, "")]


def test_bands_cover_the_lifetime_and_are_cut_at_t() -> None:
    m = TimelineModel(GROUP)
    rows = {b.row for b in m.view().bands}
    assert RowId("p", "k", 1, "c").label() in rows
    c = [(b.start, b.end, str(b.state), b.label) for b in m.view().bands if b.row.endswith("· c")]
    assert c == [
        (0, 2, "waiting", ""),
        (2, 3, "counted", "1/3"),
        (3, 4, "counted", "2/3"),
        (4, 8, "counted", "3/3"),
    ]
    cut = [(b.start, b.end, str(b.state)) for b in m.view(3.5).bands if b.row.endswith("· c")]
    assert cut == [(0, 2, "waiting"), (2, 3, "counted"), (3, 3.5, "counted")]
    assert all(mk.time <= 3.5 for mk in m.view(3.5).markers)
    assert m.view(3.5).time == 3.5


def test_open_instances_reach_the_horizon() -> None:
    m = TimelineModel([rec(0, K.STARTED), rec(5, K.STARTED, instance=2)])
    one = [b for b in m.view().bands if "#1" in b.row]
    assert (one[0].start, one[0].end) == (0, 5)
    m.add_record(rec(9, K.ACCEPTED, "a", 3, instance=2))
    assert next(b for b in m.view().bands if "#1" in b.row).end == 9


def test_rows_grouped_by_key_then_pattern_then_instance() -> None:
    m = TimelineModel(
        [
            rec(0, K.STARTED, key="k2"),
            rec(1, K.STARTED, key="k1", pattern="q"),
            rec(2, K.STARTED, key="k2", instance=2),
            rec(3, K.ACCEPTED, "x", key="k2"),
        ]
    )
    assert m.view().rows == [
        "k2 · p#1 · (instance)",
        "k2 · p#1 · x",
        "k2 · p#2 · (instance)",
        "k1 · q#1 · (instance)",
    ]


def test_filters_by_key_and_pattern() -> None:
    m = TimelineModel(
        [rec(0, K.STARTED, key="k1"), rec(1, K.STARTED, key="k2"), rec(2, K.STARTED, key="k2", pattern="q")]
    )
    assert m.view(keys={"k2"}).rows == ["k2 · p#1 · (instance)", "k2 · q#1 · (instance)"]
    assert m.view(patterns={"q"}).rows == ["k2 · q#1 · (instance)"]
    assert {(i, e) for i, e in states(m, 5, keys={"k1"})} == {(1, None)}


def test_window_of_recent_instances() -> None:
    recs = [rec(i, K.STARTED, instance=i + 1) for i in range(10)]
    m = TimelineModel(recs)
    v = m.view(max_instances=3)
    assert v.hidden_instances == 7
    assert v.rows == [f"k · p#{i} · (instance)" for i in (8, 9, 10)]
    v5 = m.view(5, max_instances=3)  # scrubbed back: the window follows t
    assert v5.rows == [f"k · p#{i} · (instance)" for i in (4, 5, 6)]


def test_aggregation_levels_when_rows_are_too_many() -> None:
    recs = []
    for key in ("a", "b"):
        for i in range(1, 4):
            recs += [rec(i, K.STARTED, key=key, instance=i), rec(i + 1, K.ACCEPTED, "x", key=key, instance=i)]
    m = TimelineModel(recs)
    assert m.view(max_rows=12).level == "element"
    v = m.view(max_rows=6)
    assert v.level == "instance"
    assert len(v.rows) == 6
    assert {mk.row for mk in v.markers} == set(v.rows)  # element markers folded onto instance rows
    v = m.view(max_rows=3)
    assert v.level == "key"
    assert v.rows == ["a · p", "b · p"]
    assert len([b for b in v.bands if b.row == "a · p"]) == 3  # each instance's band, overlaid
    v = m.view(max_rows=1)
    assert (v.level, v.rows) == ("pattern", ["p"])


def test_markers_are_binned_beyond_the_limit() -> None:
    recs = [rec(0, K.STARTED)] + [rec(t, K.ACCEPTED, "a", t) for t in range(1, 1001)]
    m = TimelineModel(recs)
    v = m.view(max_markers=100)
    assert v.binned
    assert len(v.markers) <= 101
    assert sum(mk.count for mk in v.markers) == 1001  # nothing lost: every record is in a bin
    assert not m.view().binned


def test_big_trace_view_stays_bounded() -> None:
    recs = []
    for i in range(2000):
        recs += [
            rec(i, K.STARTED, key=i % 50, instance=i),
            rec(i + 1, K.ACCEPTED, "a", i, key=i % 50, instance=i),
            rec(i + 2, K.DETECTED, key=i % 50, instance=i),
        ]
    m = TimelineModel(recs)
    v = m.view(max_instances=200, max_rows=60, max_markers=500)
    assert v.hidden_instances == 1800
    assert len(v.rows) <= 60
    assert len(v.markers) <= 600
    assert len(v.bands) <= 200 * 3


DET_EVENTS = (Event("a", 1, "k", {"v": 1}, seq=1), Event("c", 4, "k", seq=4))


def test_detections_are_marked_and_their_events_located() -> None:
    d = Detection("p", "k", 1, "match", 8, DET_EVENTS, ("a", "c"), ("n",))
    m = TimelineModel(GROUP, [d])
    v = m.view()
    assert len(v.detections) == 1
    mark = v.detections[0]
    assert (mark.row, mark.time, mark.index) == ("k · p#1 · (instance)", 8, 0)
    assert "a=a#1@1[v=1]" in mark.text
    assert "not: n" in mark.text
    assert m.detection_points(0) == [("k · p#1 · a", 1, 1), ("k · p#1 · c", 4, 4)]
    # the detection's events label the event markers
    assert any("a#1@1[v=1]" in mk.text for mk in v.markers)
    assert m.view(7).detections == []


def test_detections_without_trace_get_their_own_row() -> None:
    d = Detection("p", "k", 1, "match", 8, DET_EVENTS, ("a", "c"))
    m = TimelineModel([], [d])
    v = m.view()
    assert v.rows == ["k · p#1 · (instance)"]
    assert [mk.seq for mk in v.markers] == [1, 4]
    assert m.detection_points(0) == [("k · p#1 · (instance)", 1, 1), ("k · p#1 · (instance)", 4, 4)]


def test_late_events_row_and_steps() -> None:
    late = TraceRecord(3, "", "k", 0, K.LATE, None, 7, {})
    m = TimelineModel([rec(5, K.STARTED), late, rec(4, K.ACCEPTED, "a")])
    assert m.times == [3, 4, 5]  # sorted distinct times: the play steps
    v = m.view()
    assert "k · late" in v.rows
    assert [mk.kind for mk in v.markers if mk.row == "k · late"] == ["late"]
    assert m.view(patterns={"p"}).rows == ["k · p#1 · (instance)", "k · p#1 · a"]


def test_empty_model() -> None:
    m = TimelineModel()
    v = m.view()
    assert (v.rows, v.bands, v.markers, v.detections) == ([], [], [], [])
    assert m.horizon == -math.inf
    assert m.state_at(0) == {}


def test_doctests() -> None:
    import doctest

    import workbench.widgets.rows

    result = doctest.testmod(workbench.widgets.rows)  # next_state's example
    assert result.attempted > 0
    assert result.failed == 0


def test_a_held_back_match_shows_held_until_it_is_released() -> None:
    m = TimelineModel([rec(0, K.STARTED), rec(2, K.ACCEPTED, "a", 1), rec(3, K.HELD), rec(7, K.DETECTED)])
    assert states(m, 3)[(1, None)] == ("held", "", True)
    assert states(m, 6)[(1, None)] == ("held", "", True)
    assert states(m, 7)[(1, None)] == ("detected", "", False)
