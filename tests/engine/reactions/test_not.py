"""@not channels in AND and OR groups (prova.md 4.4, ambiguities 9.2, 9.3, 9.7)."""

from __future__ import annotations

from typing import Any

from workbench.engine.reactions import Channel, Count, Initiator, ReactionGroup, Size, Var
from workbench.engine.runtime import run


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


INIT = Initiator("start", bind={"Id": "id"})


def seqs(res: Any) -> list[tuple[int, ...]]:
    return [tuple(e.seq for e in d.events) for d in res.detections]


def and_not(timeout: float | None, **kw: Any) -> ReactionGroup:
    return ReactionGroup(
        "g",
        "and",
        channels=(Channel("a", "a"), Channel("b", "b", negated=True, **kw)),
        timeout_ms=timeout,
        initiator=INIT,
    )


def test_and_without_timeout_completes_despite_a_live_not() -> None:
    res = run(and_not(None), [ev(0, "start", id=1), ev(1, "a"), ev(2, "b")])
    assert seqs(res) == [(1,)]
    assert res.detections[0].negated == ()  # dropped, not proved


def test_and_not_event_before_completion_fails_silently_but_reacts() -> None:
    res = run(and_not(None), [ev(0, "start", id=1), ev(1, "b"), ev(2, "a")])
    assert res.detections == []
    assert [(r.channel, r.status) for r in res.reactions] == [("b", "violated")]


def test_and_with_timeout_succeeds_only_at_the_timeout_keeping_positive_events() -> None:
    res = run(and_not(100), [ev(0, "start", id=1), ev(1, "a")])
    assert seqs(res) == [(1,)]
    d = res.detections[0]
    assert (d.time, d.negated) == (100, ("b",))


def test_and_with_timeout_fails_when_the_not_event_arrives_before_it() -> None:
    assert run(and_not(100), [ev(0, "start", id=1), ev(1, "a"), ev(50, "b")]).detections == []


def test_not_with_member_timeout_holds_completion_until_it_expires() -> None:
    res = run(and_not(None, timeout_ms=30), [ev(0, "start", id=1), ev(1, "a")])
    assert [(seq, d.time) for seq, d in zip(seqs(res), res.detections, strict=True)] == [((1,), 30)]
    assert run(and_not(None, timeout_ms=30), [ev(0, "start", id=1), ev(1, "a"), ev(20, "b")]).detections == []


def test_expired_not_member_does_not_kill_a_pending_and() -> None:
    # *Choice*: a @not proved by its member timeout leaves the group waiting for its positives.
    res = run(and_not(None, timeout_ms=10), [ev(0, "start", id=1), ev(50, "a")])
    assert seqs(res) == [(1,)]


def or_not(timeout: float | None, **kw: Any) -> ReactionGroup:
    return ReactionGroup(
        "g",
        "or",
        channels=(Channel("a", "a"), Channel("b", "b", negated=True, **kw)),
        timeout_ms=timeout,
        initiator=INIT,
    )


def test_or_not_event_removes_the_channel_and_stays_in_the_trace() -> None:
    res = run(or_not(100), [ev(0, "start", id=1), ev(1, "b"), ev(2, "a")])
    assert seqs(res) == [(1, 2)]
    assert res.detections[0].negated == ()


def test_or_succeeds_at_timeout_while_not_is_live() -> None:
    res = run(or_not(100), [ev(0, "start", id=1)])
    assert [(d.time, d.negated, d.events) for d in res.detections] == [(100, ("b",), ())]


def test_or_not_without_timeout_never_succeeds_by_absence() -> None:
    assert run(or_not(None), [ev(0, "start", id=1), ev(5, "x")]).detections == []


def test_or_not_size_is_violated_by_the_nth_event_only() -> None:
    g = or_not(100, size=Size(2))
    res = run(g, [ev(0, "start", id=1), ev(1, "b")])
    assert [(tuple(e.seq for e in d.events), d.negated) for d in res.detections] == [((1,), ("b",))]
    g2 = ReactionGroup(
        "g",
        "or",
        channels=(Channel("a", "a"), Channel("b", "b", negated=True, size=Size(2))),
        timeout_ms=100,
        timeout_channel=True,
        initiator=INIT,
    )
    res = run(g2, [ev(0, "start", id=1), ev(1, "b"), ev(2, "b")])
    assert [(d.kind, tuple(e.seq for e in d.events)) for d in res.detections] == [("timeout", (1, 2))]


def test_strict_not_count_is_satisfied_outside_the_range_including_zero() -> None:
    # *Choice* (9.7): strict @not @count(1,1) means "anything but one", zero events included.
    g = ReactionGroup(
        "g",
        "and",
        channels=(
            Channel("r", "r", negated=True, count=Count(1, 1, "strict")),
            Channel("end", "end", stop_ids=("r",)),
        ),
        initiator=INIT,
    )
    assert len(run(g, [ev(0, "start", id=1), ev(5, "end")]).detections) == 1
    assert run(g, [ev(0, "start", id=1), ev(1, "r"), ev(5, "end")]).detections == []
    assert len(run(g, [ev(0, "start", id=1), ev(1, "r"), ev(2, "r"), ev(5, "end")]).detections) == 1


def test_not_count_ignore_mode_violates_at_min() -> None:
    g = ReactionGroup(
        "g",
        "and",
        channels=(Channel("a", "a"), Channel("b", "b", negated=True, count=Count.of(2))),
        timeout_ms=100,
        initiator=INIT,
    )
    res = run(g, [ev(0, "start", id=1), ev(1, "b"), ev(2, "a")])
    assert [d.negated for d in res.detections] == [("b",)]
    assert run(g, [ev(0, "start", id=1), ev(1, "b"), ev(2, "b"), ev(3, "a")]).detections == []


def test_negated_entry_uses_bound_variables() -> None:
    g = ReactionGroup(
        "g",
        "or",
        channels=(Channel("b", "b", match={"id": Var("Id")}, negated=True),),
        timeout_ms=10,
        initiator=INIT,
    )
    res = run(g, [ev(0, "start", id=1), ev(1, "b", id=2)])
    assert [d.negated for d in res.detections] == [("b",)]


def test_and_timeout_with_pending_not_and_unsatisfied_positive_reports_a_timeout() -> None:
    # *Choice* (9.11): Prova throws here; we report a timeout carrying the recorded events.
    g = ReactionGroup(
        "g",
        "and",
        channels=(Channel("a", "a"), Channel("c", "c"), Channel("b", "b", negated=True)),
        timeout_ms=100,
        timeout_channel=True,
        initiator=INIT,
    )
    res = run(g, [ev(0, "start", id=1), ev(1, "a")])
    assert [(d.kind, d.time, [e.seq for e in d.events], d.negated) for d in res.detections] == [
        ("timeout", 100, [1], ())
    ]
