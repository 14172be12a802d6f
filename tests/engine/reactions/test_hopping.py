"""@hop(size, hop[, acc]) hopping windows on OR channels, against a brute-force oracle."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.aggregates import CountBy, GroupBy
from workbench.engine.detection import Detection, TraceKind
from workbench.engine.families import compile_matcher
from workbench.engine.reactions import (
    Channel,
    Exit,
    Hop,
    Initiator,
    Instance,
    MapCounter,
    ReactionGroup,
    SortedAccumulator,
    Timer,
)
from workbench.engine.reactions.accumulators import compile_window
from workbench.engine.reactions.hopping import combine
from workbench.engine.runtime import Engine, run
from workbench.errors import PatternError


def ev(t: float, typ: str = "a", key: str = "k", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


def group(hop: Hop, origin: float = 0, **kw: Any) -> ReactionGroup:
    return ReactionGroup(
        "w", "or", channels=(Channel("a", "a", hop=hop),), instances=(Instance("k", origin),), **kw
    )


def windows(detections: list[Detection]) -> list[tuple[float, list[int], object]]:
    return [(d.time, [e.seq for e in d.events], d.extra.get("aggregate")) for d in detections]


def oracle(
    times: list[int], size: int, hop: int, origin: int, until: float, key: Any
) -> list[tuple[float, list[int], object]]:
    """Every window [origin + k*hop, origin + k*hop + size) that ends by ``until`` and holds an event,
    recomputed from the event list."""
    out: list[tuple[float, list[int], object]] = []
    k = 0
    while times and origin + k * hop + size <= until and origin + k * hop <= max(times):
        start, end = origin + k * hop, origin + k * hop + size
        inside = [i for i, t in enumerate(times) if start <= t < end]
        if inside:
            counts: dict[object, int] = {}
            for i in inside:
                counts[key(i)] = counts.get(key(i), 0) + 1
            out.append((end, inside, counts))
        k += 1
    return out


def test_overlapping_windows_hold_exactly_their_events() -> None:
    res = run(group(Hop(10, 5, MapCounter("e.i % 2"))), [ev(t, i=t) for t in (1, 5, 10, 11, 20, 100)])
    assert windows(res.detections) == [
        (10, [0, 1], {1: 2}),
        (15, [1, 2, 3], {1: 2, 0: 1}),
        (20, [2, 3], {0: 1, 1: 1}),
        (25, [4], {0: 1}),
        (30, [4], {0: 1}),
        (105, [5], {0: 1}),  # the empty windows between 30 and 95 fire nothing
        (110, [5], {0: 1}),
    ]


def test_equal_size_and_hop_tumble_and_an_event_at_a_window_end_opens_the_next() -> None:
    res = run(group(Hop(10, 10)), [ev(t) for t in (1, 9, 10, 25)])
    assert windows(res.detections) == [(10, [0, 1], None), (20, [2], None), (30, [3], None)]


def test_windows_start_at_the_instance_start() -> None:
    g = ReactionGroup("w", "or", channels=(Channel("a", "a", hop=Hop(6, 3)),), initiator=Initiator("go"))
    res = run(g, [ev(100, "go"), ev(101), ev(104)])
    assert windows(res.detections) == [(106, [1, 2], None), (109, [2], None)]


def test_an_after_channel_hops_from_its_creation_and_out_of_order_input_is_ordered_first() -> None:
    g = ReactionGroup(
        "w",
        "or",
        channels=(Channel("s", "s"), Channel("a", "a", hop=Hop(10, 5), after=("s",))),
        initiator=Initiator("go"),
    )
    res = run(g, [ev(1, "go"), ev(3, "s"), ev(4), ev(14)])
    assert windows(res.detections) == [(13, [2], None), (18, [3], None), (23, [3], None)]
    res = run(group(Hop(10, 5)), [ev(6), ev(3), ev(12), ev(11), ev(30)], out_of_orderness=5)
    assert [(d.time, [e.t for e in d.events]) for d in res.detections] == [
        (10, [3, 6]),
        (15, [6, 11, 12]),
        (20, [11, 12]),
        (35, [30]),
        (40, [30]),
    ]


def test_pending_windows_fire_at_the_end_of_input_only_when_the_flush_is_final() -> None:
    engine = Engine([group(Hop(10, 5))])
    engine.process_many([ev(3), ev(7)])
    engine.advance_time(12)
    assert windows(engine.detections) == [(10, [0, 1], None)]
    engine.finish()
    assert windows(engine.detections)[1:] == [(15, [1], None)]


def test_exit_size_caps_the_windows_of_an_instance() -> None:
    res = run(group(Hop(10, 5), exit=Exit(size=2)), [ev(t) for t in (1, 6, 12)])
    assert [d.time for d in res.detections] == [10, 15]


def test_processing_time_windows_close_on_the_clock() -> None:
    now = [0.0]
    engine = Engine([group(Hop(10, 5))], time_mode="processing", clock=lambda: now[0])
    for t in (2, 7):
        now[0] = t
        engine.process(ev(0))
    now[0] = 11
    engine.tick()
    assert windows(engine.detections) == [(10, [0, 1], None)]
    now[0] = 40
    engine.tick()
    assert windows(engine.detections)[1:] == [(15, [1], None)]


def test_a_snapshot_keeps_the_panes() -> None:
    g = group(Hop(10, 5, MapCounter("e.i")))
    engine = Engine([g])
    engine.process_many([ev(1, i="x"), ev(6, i="y")])
    other = Engine([g])
    other.restore(engine.snapshot())
    other.process(ev(12, i="x"))
    other.finish()
    assert windows(other.detections) == [
        (10, [0, 1], {"x": 1, "y": 1}),
        (15, [1, 2], {"y": 1, "x": 1}),
        (20, [2], {"x": 1}),
    ]


def test_each_window_close_is_traced_with_its_span() -> None:
    res = run(group(Hop(10, 5)), [ev(6)], trace=True)
    closes = [r.detail for r in res.trace if r.kind == TraceKind.DETECTED and r.detail.get("window")]
    assert closes == [{"window": True, "start": 0, "end": 10}, {"window": True, "start": 5, "end": 15}]


def test_a_sorted_accumulator_combines_its_panes_in_arrival_order() -> None:
    g = group(Hop(4, 2, SortedAccumulator("e.k", "e.v")))
    res = run(g, [ev(1, k="a", v=1), ev(1, k="b", v=2), ev(2, k="a", v=3), ev(3, k="a", v=4)])
    assert windows(res.detections)[:2] == [
        (4, [0, 1, 2, 3], {"a": [1, 3, 4], "b": [2]}),
        (6, [2, 3], {"a": [3, 4]}),
    ]


def test_combining_pane_accumulators_equals_accumulating_the_events() -> None:
    for spec in (MapCounter("e.k"), SortedAccumulator("e.k", "e.v"), SortedAccumulator("e.k", "e.v", top=2)):
        window = compile_window(spec)
        whole, parts = window.new(), [window.new(), window.new(), window.new()]
        for i, (k, v) in enumerate([("a", 3), ("b", 1), ("a", 5), ("a", 4), ("c", 2), ("b", 9)]):
            item = window.item(_event(i, k, v), {})
            whole.update(item)
            parts[i // 2].update(item)
        assert combine(window, parts).get() == whole.get()
        assert isinstance(whole, CountBy | GroupBy)


def _event(i: int, k: str, v: int) -> Any:
    from workbench.engine.events import Event

    return Event("a", i, "k", {"k": k, "v": v})


@pytest.mark.parametrize(
    ("size", "hop", "what"),
    [
        (0, 1, "size"),
        (10, 0, "hop"),
        (10, -5, "hop"),
        (0.5, 0.5, "size"),
        (10, 2.5, "hop"),
        (10, 20, "exceed"),
    ],
)
def test_bad_sizes_are_refused(size: float, hop: float, what: str) -> None:
    with pytest.raises(PatternError, match=what):
        Hop(size, hop)  # type: ignore[arg-type]


def test_hop_belongs_to_or_groups_and_excludes_other_windows() -> None:
    with pytest.raises(PatternError, match="@hop is defined for OR groups"):
        compile_matcher(
            ReactionGroup(
                "w", "and", channels=(Channel("a", "a", hop=Hop(10, 5)),), initiator=Initiator("go")
            )
        )
    with pytest.raises(PatternError, match="@hop and @size or @timer"):
        compile_matcher(
            ReactionGroup(
                "w",
                "or",
                channels=(Channel("a", "a", hop=Hop(10, 5), timer=Timer(5)),),
                initiator=Initiator("go"),
            )
        )


def test_timer_windows_are_unchanged_beside_a_hop_channel() -> None:
    g = ReactionGroup(
        "w",
        "or",
        channels=(Channel("t", "t", timer=Timer(10)), Channel("a", "a", hop=Hop(10, 5))),
        instances=(Instance("k", 0),),
    )
    res = run(g, [ev(3, "t"), ev(6)], until=20)
    assert [(d.time, [e.seq for e in d.events]) for d in res.detections] == [
        (10, [0]),  # the @timer window: its own events
        (10, [1]),  # the hopping window [0, 10)
        (15, [1]),
        (20, []),
    ]


@settings(max_examples=150, deadline=None)
@given(
    size=st.integers(1, 30),
    ratio=st.integers(1, 30),
    origin=st.integers(0, 20),
    gaps=st.lists(st.integers(0, 40), max_size=25),
    keys=st.lists(st.integers(0, 2), min_size=25, max_size=25),
    until=st.one_of(st.none(), st.integers(0, 500)),
)
def test_every_window_matches_the_oracle(
    size: int, ratio: int, origin: int, gaps: list[int], keys: list[int], until: int | None
) -> None:
    hop = max(1, size * ratio // 30)  # 1 <= hop <= size
    times, t = [], origin + 1  # a start-up instance starts after the events at its own time
    for gap in gaps:
        t += gap
        times.append(t)
    g = group(Hop(size, hop, MapCounter("e.i")), origin=origin)
    res = run(g, [ev(x, i=keys[i]) for i, x in enumerate(times)], until=until)
    # a window closes at the final flush, by ``until``, or when a later event moves time past its end
    end = float("inf") if until is None else max([until, *(t - 0.5 for t in times)])
    expected = oracle(times, size, hop, origin, end, lambda i: keys[i])
    assert windows(res.detections) == expected
    # each event is in ceil(size / hop) windows at most
    per_event = Counter(s for d in res.detections for s in (e.seq for e in d.events))
    assert all(n <= -(-size // hop) for n in per_event.values())


def test_a_long_silence_with_a_tiny_hop_fires_only_the_windows_with_events() -> None:
    # 10^12 empty windows lie between the events: they are skipped, not closed one by one
    res = run(group(Hop(2, 1)), [ev(1), ev(10**12)])
    assert [d.time for d in res.detections] == [2, 3, 10**12 + 1, 10**12 + 2]
