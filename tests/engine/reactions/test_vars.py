"""@vars joins and @where (prova.md 4.10, ambiguity 9.12)."""

from __future__ import annotations

from typing import Any

from workbench.engine.reactions import Channel, Count, Exit, Instance, ReactionGroup
from workbench.engine.runtime import run


def ev(t: float, typ: str, key: str = "q", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


def single(**kw: Any) -> ReactionGroup:
    return ReactionGroup(
        "v",
        "and",
        channels=(
            Channel("in", "login", vars={"User": "user", "IP": "ip"}),
            Channel("out", "logout", vars={"User": "user", "IP": "ip"}),
        ),
        instances=(Instance("q", 0),),
        timeout_ms=100,
        **kw,
    )


def test_join_on_shared_variables_and_reject_disagreeing_single_shot_events() -> None:
    events = [
        ev(1, "logout", user="a", ip="1"),
        ev(2, "login", user="a", ip="2"),
        ev(3, "login", user="a", ip="1"),
    ]
    res = run(single(), events)
    assert [[e.seq for e in d.events] for d in res.detections] == [[0, 2]]
    assert [r.event.seq for r in res.reactions] == [0, 2]  # the rejected login got no reaction


def test_join_group_ends_at_timeout_with_the_unemitted_trace() -> None:
    res = run(
        single(timeout_channel=True), [ev(1, "logout", user="a", ip="1"), ev(3, "login", user="a", ip="1")]
    )
    assert [(d.kind, d.time, len(d.events)) for d in res.detections] == [("match", 3, 2), ("timeout", 100, 0)]


def where_group(cap: int | None) -> ReactionGroup:
    return ReactionGroup(
        "v",
        "and",
        channels=(
            Channel("in", "login", count=Count.of(-1), vars={"User": "user", "N1": "n"}),
            Channel("out", "logout", count=Count.of(-1), vars={"User": "user", "N2": "n"}),
        ),
        instances=(Instance("q", 0),),
        where="N1 < N2",
        exit=Exit(count=cap),
    )


def test_where_filters_pairs_and_each_pair_is_emitted_once() -> None:
    events = [
        ev(1, "login", user="a", n=1),
        ev(2, "login", user="a", n=5),
        ev(3, "logout", user="a", n=3),
        ev(4, "logout", user="b", n=9),
        ev(5, "logout", user="a", n=9),
    ]
    got = [[e.seq for e in d.events] for d in run(where_group(None), events).detections]
    # *Choice* (9.12): one detection per compatible partner (pairwise join), events in arrival order
    assert got == [[0, 2], [0, 4], [1, 4]]


def test_exit_count_caps_emissions() -> None:
    events = [ev(1, "login", user="a", n=1), ev(2, "logout", user="a", n=3), ev(3, "logout", user="a", n=4)]
    assert len(run(where_group(1), events).detections) == 1


def test_a_join_lists_its_events_as_recorded_not_as_they_arrived() -> None:
    # the logout at 5 arrives before the logins at 1 and 2 (out of order within 10 ms): the
    # instance records them in time order, and each join lists its events in that order
    events = [ev(5, "logout", user="a", n=9), ev(1, "login", user="a", n=1), ev(2, "login", user="a", n=5)]
    late = run(where_group(None), events, out_of_orderness=10).detections
    in_order = run(where_group(None), sorted(events, key=lambda e: e["time"])).detections
    got = [[(e.type, e.time) for e in d.events] for d in late]
    assert got == [[("login", 1), ("logout", 5)], [("login", 2), ("logout", 5)]]
    assert got == [[(e.type, e.time) for e in d.events] for d in in_order]
    assert [d.channels for d in late] == [("in", "out"), ("in", "out")]
