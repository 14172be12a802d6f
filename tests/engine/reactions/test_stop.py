"""Bare @stop and @stop(ids) in AND and OR groups (prova.md 4.5, ambiguities 9.5, 9.6)."""

from __future__ import annotations

from typing import Any

from workbench.engine.reactions import Channel, Count, Initiator, ReactionGroup
from workbench.engine.runtime import run


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


INIT = Initiator("start")


def seqs(res: Any) -> list[tuple[int, ...]]:
    return [tuple(e.seq for e in d.events) for d in res.detections]


def test_bare_stop_in_and_is_optional() -> None:
    g = ReactionGroup("g", "and", channels=(Channel("a", "a"), Channel("s", "s", stop=True)), initiator=INIT)
    assert seqs(run(g, [ev(0, "start"), ev(1, "a")])) == [(1,)]


def test_bare_stop_in_and_ends_the_instance_silently_when_something_is_pending() -> None:
    g = ReactionGroup("g", "and", channels=(Channel("a", "a"), Channel("s", "s", stop=True)), initiator=INIT)
    res = run(g, [ev(0, "start"), ev(1, "s"), ev(2, "a")])
    assert res.detections == []
    assert [(r.channel, r.status) for r in res.reactions] == [("s", "stop")]


def test_bare_stop_in_and_succeeds_when_everything_left_is_satisfied() -> None:
    g = ReactionGroup(
        "g",
        "and",
        channels=(Channel("a", "a", count=Count.of(-1)), Channel("s", "s", stop=True)),
        initiator=INIT,
    )
    assert seqs(run(g, [ev(0, "start"), ev(1, "a"), ev(2, "a"), ev(3, "s")])) == [(1, 2, 3)]


def test_bare_stop_in_or_ends_the_instance_without_output() -> None:
    g = ReactionGroup("g", "or", channels=(Channel("a", "a"), Channel("s", "s", stop=True)), initiator=INIT)
    assert run(g, [ev(0, "start"), ev(1, "s"), ev(2, "a")]).detections == []


def stop_ids_group(op: str) -> ReactionGroup:
    return ReactionGroup(
        "g",
        op,  # type: ignore[arg-type]
        channels=(
            Channel("p", "p", count=Count.of(1, -1)) if op == "and" else Channel("p", "p"),
            Channel("q", "q"),
            Channel("end", "end", stop_ids=("p",)),
        ),
        initiator=INIT,
    )


def test_stop_ids_in_and_fails_on_an_unsatisfied_target() -> None:
    # *Choice* (9.6, as Prova): stopping a channel that has not been satisfied fails the AND.
    assert run(stop_ids_group("and"), [ev(0, "start"), ev(1, "q"), ev(2, "end")]).detections == []


def test_stop_ids_in_and_removes_satisfied_targets_and_is_recorded() -> None:
    res = run(stop_ids_group("and"), [ev(0, "start"), ev(1, "p"), ev(2, "p"), ev(3, "q"), ev(4, "end")])
    assert seqs(res) == [(1, 2, 3, 4)]


def test_stop_ids_in_or_removes_targets_and_the_group_goes_on() -> None:
    res = run(stop_ids_group("or"), [ev(0, "start"), ev(1, "end"), ev(2, "p"), ev(3, "q")])
    assert seqs(res) == [(1, 3)]
