"""Group extension (channels created ``after`` another fires): Prova's sequences (prova.md 5.5)."""

from __future__ import annotations

from typing import Any

from workbench.engine.detection import TraceKind
from workbench.engine.reactions import Channel, Count, Initiator, ReactionGroup, Var
from workbench.engine.runtime import run


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


INIT = Initiator("start")


def seqs(res: Any) -> list[tuple[int, ...]]:
    return [tuple(e.seq for e in d.events) for d in res.detections]


def sequence(**kw: Any) -> ReactionGroup:
    return ReactionGroup(
        "s",
        "and",
        channels=(
            Channel("a", "a", binds={"Id": "id"}),
            Channel("b", "b", match={"id": Var("Id")}, after=("a",)),
            Channel("end", "end", stop=True),
        ),
        initiator=INIT,
        **kw,
    )


def test_a_followed_by_b_with_bound_variable() -> None:
    res = run(
        sequence(), [ev(0, "start"), ev(1, "b", id=1), ev(2, "a", id=1), ev(3, "b", id=2), ev(4, "b", id=1)]
    )
    assert seqs(res) == [(2, 4)]


def test_extension_is_traced_and_the_successor_does_not_see_the_creating_event() -> None:
    g = ReactionGroup(
        "s", "and", channels=(Channel("a", "a"), Channel("a2", "a", after=("a",))), initiator=INIT
    )
    res = run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a")], trace=True)
    assert seqs(res) == [(1, 2)]
    assert [t.element for t in res.trace if t.kind == TraceKind.EXTENDED] == ["a2"]


def test_stop_stays_live_through_intermediate_steps() -> None:
    # *Choice*: an extended instance is not "complete" in between, so a bare @stop is not dropped.
    assert (
        run(sequence(), [ev(0, "start"), ev(1, "a", id=1), ev(2, "end"), ev(3, "b", id=1)]).detections == []
    )


def test_each_event_of_a_counted_predecessor_spawns_a_successor() -> None:
    g = ReactionGroup(
        "s",
        "and",
        channels=(
            Channel("a", "a", count=Count.of(-1), binds={"Id": "id"}),
            Channel("b", "b", match={"id": Var("Id")}, after=("a",)),
        ),
        initiator=INIT,
    )
    res = run(g, [ev(0, "start"), ev(1, "a", id=1), ev(2, "a", id=2), ev(3, "b", id=2), ev(4, "b", id=1)])
    assert seqs(res) == [(1, 2, 3, 4)]


def test_violated_not_with_a_successor_restarts_instead_of_failing() -> None:
    # stable_limit: high -> low -> not high within 30 ms; a violation restarts from "low".
    g = ReactionGroup(
        "s",
        "and",
        channels=(
            Channel("high", "p", where="e.v > 10"),
            Channel("low", "p", where="e.v < 10", after=("high", "nothigh")),
            Channel("nothigh", "p", where="e.v > 10", after=("low",), negated=True, timeout_ms=30),
        ),
        initiator=INIT,
    )
    events = [ev(0, "start"), ev(1, "p", v=20), ev(2, "p", v=5), ev(10, "p", v=15), ev(50, "p", v=3)]
    res = run(g, events)
    assert [(d.time, tuple(e.seq for e in d.events)) for d in res.detections] == [(80, (1, 2, 3, 4))]
