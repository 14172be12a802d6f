"""@pause(ids) / @resume(ids) / @paused, in OR (Prova) and in AND (our definition, ambiguity 9.8)."""

from __future__ import annotations

from typing import Any

from workbench.engine.detection import TraceKind
from workbench.engine.reactions import Channel, Initiator, ReactionGroup
from workbench.engine.runtime import run


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


INIT = Initiator("start")


def seqs(res: Any) -> list[tuple[int, ...]]:
    return [tuple(e.seq for e in d.events) for d in res.detections]


def group(op: str, paused: bool = False) -> ReactionGroup:
    return ReactionGroup(
        "g",
        op,  # type: ignore[arg-type]
        channels=(
            Channel("a", "a", paused=paused),
            Channel("b", "b"),
            Channel("pause", "pause", pause_ids=("a",)),
            Channel("resume", "resume", resume_ids=("a",)),
        ),
        initiator=INIT,
    )


def test_or_paused_channel_ignores_events_until_resumed_and_controls_are_recorded() -> None:
    res = run(group("or", paused=True), [ev(0, "start"), ev(1, "a"), ev(2, "resume"), ev(3, "a")], trace=True)
    assert seqs(res) == [(2, 3)]
    assert [(r.channel, r.status) for r in res.reactions] == [
        ("a", "paused"),
        ("resume", "accepted"),
        ("a", "accepted"),
    ]
    assert any(t.kind == TraceKind.RESUMED for t in res.trace)


def test_or_pause_then_resume_and_controls_fire_repeatedly() -> None:
    events = [
        ev(0, "start"),
        ev(1, "pause"),
        ev(2, "a"),
        ev(3, "resume"),
        ev(4, "pause"),
        ev(5, "a"),
        ev(6, "resume"),
    ]
    events.append(ev(7, "a"))
    assert seqs(run(group("or"), events)) == [(1, 3, 4, 6, 7)]


def test_and_pause_resume_are_optional_control_channels() -> None:
    # Our definition: in AND, pause/resume channels are recorded, stay live, never need to fire,
    # and a paused required channel blocks completion until resumed.
    assert seqs(run(group("and"), [ev(0, "start"), ev(1, "a"), ev(2, "b")])) == [(1, 2)]
    events = [ev(0, "start"), ev(1, "pause"), ev(2, "a"), ev(3, "b"), ev(4, "resume"), ev(5, "a")]
    assert seqs(run(group("and"), events)) == [(1, 3, 4, 5)]


def test_and_paused_channel_starts_paused() -> None:
    assert run(group("and", paused=True), [ev(0, "start"), ev(1, "a"), ev(2, "b")]).detections == []
