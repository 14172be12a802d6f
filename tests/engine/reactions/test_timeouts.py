"""Group and member timeouts, timeout reports, tie rule, start-up instances (prova.md 4.3, 9.4, 9.9, 9.13)."""

from __future__ import annotations

from typing import Any

from workbench.engine.reactions import Channel, Initiator, Instance, ReactionGroup
from workbench.engine.runtime import Engine, run


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


INIT = Initiator("start")


def group(op: str, **kw: Any) -> ReactionGroup:
    channels = kw.pop("channels", (Channel("a", "a"), Channel("b", "b")))
    return ReactionGroup("g", op, channels=channels, initiator=INIT, **kw)  # type: ignore[arg-type]


def test_group_timeout_counts_from_creation_and_is_silent_without_timeout_channel() -> None:
    assert run(group("and", timeout_ms=100), [ev(10, "start"), ev(20, "a")]).detections == []
    res = run(group("and", timeout_ms=100, timeout_channel=True), [ev(10, "start"), ev(20, "a")])
    assert [(d.kind, d.time, [e.seq for e in d.events]) for d in res.detections] == [("timeout", 110, [1])]


def test_an_event_at_the_timeout_instant_is_processed_first() -> None:
    res = run(group("and", timeout_ms=100), [ev(10, "start"), ev(20, "a"), ev(110, "b")])
    assert [d.time for d in res.detections] == [110]


def test_positive_member_timeout_fails_an_and_at_once() -> None:
    g = group("and", channels=(Channel("a", "a", timeout_ms=50), Channel("b", "b")), timeout_channel=True)
    res = run(g, [ev(0, "start"), ev(60, "a"), ev(70, "b")])
    assert [(d.kind, d.time, [e.seq for e in d.events]) for d in res.detections] == [("timeout", 50, [])]


def test_positive_member_timeout_completes_an_and_whose_other_channels_are_satisfied() -> None:
    # prova.md 3.1 step 5: the expired channel is removed, and the AND succeeds when nothing else is
    # pending (it failed before, whatever the other channels had)
    g = group("and", channels=(Channel("a", "a", timeout_ms=50), Channel("b", "b")), timeout_channel=True)
    res = run(g, [ev(0, "start"), ev(10, "b"), ev(60, "a")])
    assert [(d.kind, d.time, [e.seq for e in d.events]) for d in res.detections] == [("match", 50, [1])]


def test_positive_member_timeout_in_or_removes_only_that_channel() -> None:
    # *Choice* (9.9): the expired channel "does not contribute"; the OR goes on with the others.
    g = group("or", channels=(Channel("a", "a", timeout_ms=50), Channel("b", "b")), timeout_ms=200)
    res = run(g, [ev(0, "start"), ev(60, "a"), ev(70, "b")])
    assert [(d.time, [e.seq for e in d.events]) for d in res.detections] == [(70, [2])]


def test_or_whose_last_channel_expires_ends_as_a_timeout() -> None:
    g = group("or", channels=(Channel("a", "a", timeout_ms=50),), timeout_channel=True)
    res = run(g, [ev(0, "start")])
    assert [(d.kind, d.time) for d in res.detections] == [("timeout", 50)]


def test_startup_instances_are_created_at_their_time_and_key() -> None:
    g = ReactionGroup(
        "g",
        "and",
        channels=(Channel("a", "a"),),
        instances=(Instance("q1", 5), Instance("q2", 5)),
        timeout_ms=10,
        timeout_channel=True,
    )
    engine = Engine([g])
    engine.process(ev(7, "a", key="q1"))
    engine.finish()
    assert sorted((d.key, d.kind, d.time) for d in engine.detections) == [
        ("q1", "match", 7),
        ("q2", "timeout", 15),
    ]


def test_horizon_stops_timers() -> None:
    assert (
        run(group("and", timeout_ms=100, timeout_channel=True), [ev(10, "start")], until=50).detections == []
    )
