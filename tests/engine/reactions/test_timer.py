"""@timer(delay[, period[, acc]]) windows in OR groups (prova.md 4.11, tie rule 9.15)."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.engine.reactions import Channel, Exit, Instance, MapCounter, ReactionGroup, Timer
from workbench.engine.runtime import Engine, run
from workbench.engine.sharding import ShardedEngine


def ev(t: float, typ: str, key: str = "k", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


def windows(**kw: Any) -> ReactionGroup:
    return ReactionGroup(
        "w",
        "or",
        channels=(Channel("a", "a", timer=Timer(10, 10, MapCounter("e.i % 2"))),),
        instances=(Instance("k", 0),),
        **kw,
    )


def test_windows_emit_events_and_snapshot_and_ties_go_to_the_closing_window() -> None:
    res = run(windows(), [ev(t, "a", i=t) for t in (1, 5, 10, 11, 20)], until=30)
    got = [(d.time, [e.seq for e in d.events], d.extra["aggregate"]) for d in res.detections]
    assert got == [(10, [0, 1, 2], {1: 2, 0: 1}), (20, [3, 4], {1: 1, 0: 1}), (30, [], {})]


def test_final_flush_does_not_rearm() -> None:
    res = run(windows(), [ev(1, "a", i=1), ev(25, "a", i=2)])
    assert [d.time for d in res.detections] == [10, 20, 30]


@pytest.mark.parametrize("shards", [None, 2])
@pytest.mark.parametrize("out_of_orderness", [0, 7, 100])
def test_events_still_buffered_at_finish_get_their_windows(shards: int | None, out_of_orderness: int) -> None:
    # the final flush must not stop the windows before the buffered events at 15, 25 and 38 are
    # released: out-of-orderness only sorts events into place, as the in-order run shows
    events = [ev(t, "a", key=k, i=t) for t in (1, 15, 25, 38) for k in ("k", "j")]
    engine = (
        Engine([windows()], out_of_orderness=out_of_orderness)
        if shards is None
        else ShardedEngine([windows()], shards, out_of_orderness=out_of_orderness)
    )
    engine.process_many(events)
    engine.finish()
    got = sorted((d.time, [e.fields["i"] for e in d.events]) for d in engine.detections)
    assert got == [(10, [1]), (20, [15]), (30, [25]), (40, [38])]


def test_one_argument_timer_recurs_with_period_equal_to_delay() -> None:
    g = ReactionGroup(
        "w", "or", channels=(Channel("t", "noop", timer=Timer(5)),), instances=(Instance("k", 0),)
    )
    assert [d.time for d in run(g, [], until=16).detections] == [5, 10, 15]


def test_exit_size_one_stops_after_the_first_window() -> None:
    assert [d.time for d in run(windows(exit=Exit(size=1)), [ev(1, "a", i=1)], until=50).detections] == [10]


def test_startup_instance_exists_for_a_key_without_events() -> None:
    engine = Engine([windows()])
    engine.advance_time(25)
    assert [d.time for d in engine.detections] == [10, 20]
    assert engine.detections[0].key == "k"
    assert engine.detections[0].initiator is None
