"""@size(n) and recurring @size(n, r[, acc]) in OR groups, exit @count caps (prova.md 4.9)."""

from __future__ import annotations

from typing import Any

from workbench.engine.reactions import (
    Channel,
    Exit,
    Initiator,
    MapCounter,
    ReactionGroup,
    Size,
    SortedAccumulator,
)
from workbench.engine.runtime import run


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


INIT = Initiator("start")


def seqs(res: Any) -> list[tuple[int, ...]]:
    return [tuple(e.seq for e in d.events) for d in res.detections]


def test_size_n_needs_n_events_and_keeps_them_all() -> None:
    g = ReactionGroup(
        "g", "or", channels=(Channel("a", "a", size=Size(3)), Channel("b", "b")), initiator=INIT
    )
    assert seqs(run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a"), ev(3, "a"), ev(4, "a")])) == [(1, 2, 3)]
    assert seqs(run(g, [ev(0, "start"), ev(1, "a"), ev(2, "b")])) == [(1, 2)]


def test_recurring_size_emits_every_r_events() -> None:
    g = ReactionGroup("g", "or", channels=(Channel("a", "a", size=Size(2, 1)),), initiator=INIT)
    res = run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a"), ev(3, "a"), ev(4, "a")])
    assert seqs(res) == [(1, 2), (3,), (4,)]
    assert len({d.instance for d in res.detections}) == 1


def test_recurring_size_with_accumulator_and_exit_count_cap() -> None:
    g = ReactionGroup(
        "g",
        "or",
        channels=(Channel("a", "a", size=Size(2, 2, MapCounter("e.k"))),),
        initiator=INIT,
        exit=Exit(count=2),
    )
    events = [ev(0, "start")] + [ev(i, "a", k=i % 2) for i in range(1, 8)]
    res = run(g, events)
    assert [d.extra["aggregate"] for d in res.detections] == [{1: 1, 0: 1}, {1: 1, 0: 1}]
    assert seqs(res) == [(1, 2), (3, 4)]


def test_sorted_accumulator_keeps_values_and_top_n() -> None:
    g = ReactionGroup(
        "g",
        "or",
        channels=(Channel("a", "a", size=Size(4, 4, SortedAccumulator("e.k", "e.v", top=1))),),
        initiator=INIT,
    )
    events = [ev(0, "start")] + [ev(i, "a", k=i % 2, v=i * 10) for i in range(1, 5)]
    assert [d.extra["aggregate"] for d in run(g, events).detections] == [{1: [30], 0: [40]}]
