"""Nested groups: a group's exit as a member of another group (prova.md 5.4), Detection tree."""

from __future__ import annotations

from typing import Any

from workbench.engine.reactions import Channel, Initiator, ReactionGroup, Var
from workbench.engine.reactions.matcher import TreeNode
from workbench.engine.runtime import run


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


INIT = Initiator("start", bind={"Id": "id"})


def inner(op: str, **kw: Any) -> ReactionGroup:
    return ReactionGroup(
        "g1",
        op,  # type: ignore[arg-type]
        channels=(Channel("x", "x", match={"id": Var("Id")}), Channel("y", "y", negated=True)),
        **kw,
    )


def outer(op: str, child: ReactionGroup, **kw: Any) -> ReactionGroup:
    return ReactionGroup("g2", op, channels=(Channel("u", "u"), child), initiator=INIT, **kw)  # type: ignore[arg-type]


def test_inner_result_is_a_member_event_with_tree_and_prefixed_negation() -> None:
    res = run(outer("and", inner("or", timeout_ms=50)), [ev(0, "start", id=1), ev(60, "u")])
    nested = [d for d in res.detections if d.extra.get("nested")]
    top = [d for d in res.detections if not d.extra.get("nested")]
    assert [(d.extra["group"], d.time, d.negated) for d in nested] == [("g1", 50, ("y",))]
    assert len(top) == 1
    d = top[0]
    assert (d.time, [e.seq for e in d.events], d.negated) == (60, [1], ("g1.y",))
    tree = d.extra["tree"]
    assert isinstance(tree[0], TreeNode)
    assert (tree[0].group, tree[0].exit, tree[0].negated, tree[0].events) == ("g1", "or", ("y",), ())
    assert tree[1].seq == 1


def test_inner_events_are_flattened_in_order_with_channel_paths() -> None:
    res = run(outer("and", inner("or")), [ev(0, "start", id=1), ev(1, "u"), ev(2, "x", id=1)])
    top = [d for d in res.detections if not d.extra.get("nested")]
    assert [(d.channels, [e.seq for e in d.events]) for d in top] == [(("u", "g1.x"), [1, 2])]


def test_outer_or_completes_with_the_inner_result() -> None:
    res = run(outer("or", inner("and")), [ev(0, "start", id=1), ev(1, "x", id=1)])
    top = [d for d in res.detections if not d.extra.get("nested")]
    assert [[e.seq for e in d.events] for d in top] == [[1]]


def test_parent_timeout_stops_the_child() -> None:
    res = run(
        outer("or", inner("and", timeout_ms=500), timeout_ms=100), [ev(0, "start", id=1), ev(200, "x", id=1)]
    )
    assert res.detections == []


def test_failed_child_fails_an_and_parent() -> None:
    # *Choice*: a child that can no longer succeed fails its AND parent (Prova leaves it waiting).
    g = outer("and", inner("and"), timeout_ms=100, timeout_channel=True)
    res = run(g, [ev(0, "start", id=1), ev(1, "y"), ev(2, "u")])
    assert res.detections == []
