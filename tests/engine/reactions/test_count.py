"""@count(n), @count(n,m,mode) with ignore / record / strict, and exit @count (prova.md 4.8)."""

from __future__ import annotations

from typing import Any

from workbench.engine.detection import TraceKind
from workbench.engine.reactions import Channel, Count, Initiator, ReactionGroup
from workbench.engine.runtime import run


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


INIT = Initiator("start")


def seqs(res: Any) -> list[tuple[int, ...]]:
    return [tuple(e.seq for e in d.events) for d in res.detections]


def group(count: Count, *extra: Channel) -> ReactionGroup:
    return ReactionGroup("g", "and", channels=(Channel("a", "a", count=count), *extra), initiator=INIT)


def test_ignore_mode_closes_on_the_nth_event_and_completes() -> None:
    res = run(group(Count.of(2)), [ev(0, "start"), ev(1, "a"), ev(2, "a"), ev(3, "a")], trace=True)
    assert seqs(res) == [(1, 2)]
    counted = [t.detail for t in res.trace if t.kind == TraceKind.COUNTED]
    assert counted == [{"count": 1, "of": 2}, {"count": 2, "of": 2}]


def test_ignore_range_closes_at_max() -> None:
    res = run(group(Count.of(1, 3)), [ev(0, "start"), ev(1, "a"), ev(2, "a"), ev(3, "a"), ev(4, "a")])
    assert seqs(res) == [(1, 2, 3)]


def test_record_mode_never_completes_by_itself() -> None:
    g = group(Count.of(-1), Channel("end", "end", stop_ids=("a",)))
    assert run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a")]).detections == []
    assert seqs(run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a"), ev(3, "end")])) == [(1, 2, 3)]


def test_at_least_n_record_mode() -> None:
    g = group(Count.of(2, -1), Channel("end", "end", stop_ids=("a",)))
    assert run(g, [ev(0, "start"), ev(1, "a"), ev(3, "end")]).detections == []
    assert seqs(run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a"), ev(3, "a"), ev(4, "end")])) == [(1, 2, 3, 4)]


def test_strict_mode_fails_on_an_event_beyond_max() -> None:
    g = group(Count(1, 2, "strict"), Channel("end", "end", stop_ids=("a",)))
    assert seqs(run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a"), ev(3, "end")])) == [(1, 2, 3)]
    res = run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a"), ev(3, "a"), ev(4, "end")])
    assert res.detections == []
    assert [r.status for r in res.reactions] == ["accepted", "accepted", "violated"]


def test_count_with_timeout_reports_the_partial_trace() -> None:
    g = ReactionGroup(
        "g",
        "and",
        channels=(Channel("a", "a", count=Count.of(3)),),
        timeout_ms=10,
        timeout_channel=True,
        initiator=INIT,
    )
    res = run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a")])
    assert [(d.kind, d.time) for d in res.detections] == [("timeout", 10)]
    assert seqs(res) == [(1, 2)]


def test_optional_channel_records_at_most_its_first_event() -> None:
    g = ReactionGroup(
        "g",
        "and",
        channels=(
            Channel("o", "o", optional=True),
            Channel("a", "a", count=Count.of(-1)),
            Channel("end", "end"),
        ),
        initiator=INIT,
    )
    assert seqs(run(g, [ev(0, "start"), ev(1, "o"), ev(2, "o"), ev(3, "end")])) == [(1, 3)]
