"""The timeline model on real engine traces: the four Prova blog examples and a sequence pattern."""

from __future__ import annotations

import pytest

from workbench.demo.examples import EXAMPLES
from workbench.engine import Engine
from workbench.engine.nfa import begin
from workbench.widgets import Timeline, TimelineModel


def run_example(name: str) -> Engine:
    ex = EXAMPLES[name]
    engine = Engine([ex.group], trace=True)
    engine.process_many(ex.events)
    engine.finish()
    return engine


def at(model: TimelineModel, t: float, key: str, instance: int, element: str | None) -> tuple[str, str, bool]:
    for row, s in model.state_at(t).items():
        if (row.key, row.instance, row.element) == (key, instance, element):
            return str(s.state), s.label, s.live
    raise AssertionError(f"no row {key}#{instance}.{element} at t={t}")


def test_and_not_negation_satisfied_and_member_timeout() -> None:
    engine = run_example("and_not")
    m = TimelineModel(engine.trace_records, engine.detections)
    # user3's first instance: the other-IP login arrives, the logout never does -> negated, detected
    assert at(m, 202, "user3", 1, "c_login") == ("waiting", "", True)
    assert at(m, 203, "user3", 1, "c_login") == ("active", "", True)
    assert at(m, 401, "user3", 1, "c_logout") == ("waiting", "", True)
    assert at(m, 402, "user3", 1, "c_logout") == ("negated", "", False)
    assert at(m, 402, "user3", 1, None) == ("detected", "", False)
    # user1's first instance: the login channel's own @timeout(250) fails the group
    assert at(m, 250, "user1", 1, None) == ("active", "", True)
    assert at(m, 251, "user1", 1, "c_login") == ("timed_out", "", False)
    assert at(m, 251, "user1", 1, None) == ("failed", "", False)
    assert m.instances[("and_not", "user1", 1)].end == 251


def test_or_paused_channel_is_paused_until_resumed() -> None:
    engine = run_example("or_paused")
    m = TimelineModel(engine.trace_records, engine.detections)
    # id1 is declared paused: paused from the instance's start, resumed by the update at 504
    assert at(m, 201, "user2", 1, "id1") == ("paused", "", True)
    assert at(m, 503, "user2", 1, "id1") == ("paused", "", True)
    assert at(m, 504, "user2", 1, "id1") == ("active", "", True)
    assert at(m, 505, "user2", 1, None) == ("detected", "", False)
    # the second instance of user2 ignores the login at 505 because id1 is paused there
    assert at(m, 505, "user2", 2, "id1") == ("paused", "", True)
    assert at(m, 1503, "user2", 2, None) == ("failed", "", False)  # the group timeout


def test_or_stop_stops_the_channel_and_the_group_is_drawn_stopped() -> None:
    engine = run_example("or_stop")
    m = TimelineModel(engine.trace_records, engine.detections)
    assert at(m, 503, "user2", 1, "c_update") == ("stopped", "", False)
    assert at(m, 503, "user2", 1, None) == ("stopped", "", False)  # ended by @stop, not failed
    # the failed record names c_update as its cause: its marker is on the instance row
    failed = [mk for mk in m.view().markers if mk.kind == "failed" and "user2 · or_stop#1" in mk.row]
    assert [mk.row for mk in failed] == ["user2 · or_stop#1 · (instance)"]
    assert "c_update" in failed[0].text


def test_or_not_count_counted_violated_negated() -> None:
    engine = run_example("or_not_count")
    m = TimelineModel(engine.trace_records, engine.detections)
    assert at(m, 503, "user3", 1, "c_login") == ("counted", "1/2", True)
    assert at(m, 1002, "user3", 1, "c_login") == ("negated", "", False)
    assert at(m, 1002, "user3", 1, None) == ("detected", "", False)
    assert at(m, 505, "user2", 1, "c_login") == ("counted", "1/2", True)
    assert at(m, 506, "user2", 1, "c_login") == ("violated", "", True)  # the group waits for its timeout
    assert at(m, 1202, "user2", 1, None) == ("failed", "", False)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_detection_of_the_blog_examples_is_drawn(name: str) -> None:
    engine = run_example(name)
    tl = Timeline.from_engine(engine)
    view = tl.view()
    assert sorted(d.index for d in view.detections) == list(range(len(engine.detections)))
    for i in range(len(engine.detections)):
        for row, _t, _seq in tl.model.detection_points(i):
            assert row in view.rows
    # every trace record is a marker, and the last step shows every instance ended
    assert len(view.markers) == len(engine.trace_records)
    assert all(not s.live for s in tl.model.state_at(tl.model.horizon).values())


def test_sequence_pattern_stages() -> None:
    pattern = begin("a").where("e.type == 'a'").followed_by("b").where("e.type == 'b'").times(2)
    engine = Engine([pattern.within(10).build("seq")], trace=True)
    evs = [("a", 1), ("b", 3), ("a", 4), ("b", 6), ("b", 8)]
    engine.process_many({"type": t, "time": x, "key": "k"} for t, x in evs)
    engine.finish()
    m = TimelineModel(engine.trace_records, engine.detections)
    assert at(m, 1, "k", 1, "a") == ("active", "", True)
    assert at(m, 2, "k", 1, "b") == ("waiting", "", True)
    assert at(m, 3, "k", 1, "b") == ("active", "", True)
    assert at(m, 6, "k", 1, None) == ("detected", "", False)
    assert at(m, 6, "k", 2, None) == ("active", "", True)
    assert at(m, 8, "k", 2, None) == ("detected", "", False)
    points = m.detection_points(0)
    assert [(row.split(" · ")[-1], seq) for row, _, seq in points] == [("a", 0), ("b", 1), ("b", 3)]


def test_sequence_timeout_is_drawn() -> None:
    pattern = begin("a").where("e.type == 'a'").followed_by("b").where("e.type == 'b'").within(5)
    engine = Engine([pattern.build("seq")], trace=True)
    engine.process_many([{"type": "a", "time": 1, "key": "k"}, {"type": "c", "time": 20, "key": "k"}])
    engine.finish()
    m = TimelineModel(engine.trace_records, engine.detections)
    assert at(m, 5, "k", 1, None) == ("active", "", True)
    assert at(m, 6, "k", 1, None) == ("timed_out", "", False)
    assert m.instances[("seq", "k", 1)].end == 6
    view = m.view()
    assert [(d.kind, d.time) for d in view.detections] == [("timeout", 6)]
