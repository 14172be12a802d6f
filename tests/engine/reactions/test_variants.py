"""Variants of Prova's scenarios, derived from the documented semantics (prova.md sections 3-5, and
the choices of docs/reaction-groups.md), with other field names, keys, timings and shapes than the
conformance cases. Every expectation cites the section it follows."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.engine.families import compile_matcher
from workbench.engine.reactions import (
    Channel,
    Count,
    Exit,
    Initiator,
    Instance,
    MapCounter,
    ReactionGroup,
    Size,
    SortedAccumulator,
    Timer,
    Var,
)
from workbench.engine.runtime import Engine, run
from workbench.errors import PatternError


def ev(t: float, typ: str, key: str = "k", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


def seqs(res: Any, kind: str = "match") -> list[list[int]]:
    return [[e.seq for e in d.events] for d in res.detections if d.kind == kind]


def outline(res: Any) -> list[tuple[str, float, list[int], tuple[str, ...]]]:
    return [(d.kind, d.time, [e.seq for e in d.events], d.negated) for d in res.detections]


START = Initiator("go")


def group(op: str, *channels: Channel | ReactionGroup, **kw: Any) -> ReactionGroup:
    kw.setdefault("initiator", START)
    return ReactionGroup("g", op, channels=channels, **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------- validation (prova.md 4.5, 4.6)
@pytest.mark.parametrize(
    ("channels", "needle"),
    [
        (
            (Channel("a", "a"), Channel("s", "s", stop_ids=("nope",))),
            "'s': @stop names unknown channel 'nope'",
        ),
        ((Channel("a", "a"), Channel("p", "p", pause_ids=("zz",))), "'p': @pause names unknown channel 'zz'"),
        ((Channel("a", "a"), Channel("r", "r", resume_ids=("q",))), "'r': @resume names unknown channel 'q'"),
        ((Channel("a", "a"), Channel("b", "b", after=("x",))), "'b': after names unknown channel 'x'"),
        ((Channel("a", "a"), Channel("a", "b")), "duplicate channel id 'a'"),
        ((Channel("a", "a", negated=True, stop=True),), "@not and a bare @stop"),
        ((Channel("a", "a"), Channel("s", "s", stop=True, stop_ids=("a",))), "a bare @stop and @stop(ids)"),
        ((Channel("a", "a", count=Count(3, 1)),), "@count max must be >= min"),
        ((Channel("a", "a", count=Count(1, 2, "often")),), "@count mode"),  # type: ignore[arg-type]
        ((Channel("a", "a", count=Count(-2, 2)),), "@count bounds"),
    ],
)
def test_malformed_and_groups_are_pattern_errors_naming_the_channel(
    channels: tuple[Channel, ...], needle: str
) -> None:
    with pytest.raises(PatternError) as err:
        compile_matcher(group("and", *channels))
    assert needle in str(err.value)


def test_malformed_or_groups_are_pattern_errors() -> None:
    with pytest.raises(PatternError, match="@size and @timer"):
        compile_matcher(group("or", Channel("a", "a", size=Size(2), timer=Timer(10))))
    with pytest.raises(PatternError, match="reset must be >= 1"):
        compile_matcher(group("or", Channel("a", "a", size=Size(2, 0))))
    with pytest.raises(PatternError, match="exit must be >= 1"):
        compile_matcher(group("or", Channel("a", "a"), exit=Exit(count=0)))
    with pytest.raises(PatternError, match="@not and @timer"):
        compile_matcher(group("or", Channel("a", "a", negated=True, timer=Timer(10))))


# ---------------------------------------------------------------- OR with several @not (4.4, 4.3)
def or_two_nots() -> ReactionGroup:
    return group(
        "or",
        Channel("no_x", "x", match={"who": Var("Who")}, negated=True),
        Channel("no_y", "y", match={"who": Var("Who")}, negated=True),
        Channel("z", "z", match={"who": Var("Who")}),
        timeout_ms=100,
        timeout_channel=True,
        initiator=Initiator("go", bind={"Who": "who"}),
    )


def test_or_with_one_of_two_nots_violated_succeeds_at_the_timeout_with_the_other_absent() -> None:
    # 4.4: the violating event removes its channel and stays in the trace; at the group timeout a
    # still-live @not makes the OR succeed and is listed as absent (9.1: positive events kept).
    res = run(or_two_nots(), [ev(0, "go", who="w"), ev(10, "x", who="w")])
    assert outline(res) == [("match", 100, [1], ("no_y",))]


def test_or_with_every_not_violated_times_out_with_the_trace() -> None:
    # 4.3: no live @not at the timeout -> failure, reported to the timeout channel (9.1 trace kept).
    res = run(or_two_nots(), [ev(0, "go", who="w"), ev(10, "y", who="w"), ev(20, "x", who="w")])
    assert outline(res) == [("timeout", 100, [1, 2], ())]


def test_or_with_nots_succeeds_on_a_positive_event_with_the_violations_in_the_trace() -> None:
    # 3.2.8: any positive event completes the OR with everything recorded so far.
    res = run(or_two_nots(), [ev(0, "go", who="w"), ev(10, "y", who="w"), ev(20, "z", who="w")])
    assert outline(res) == [("match", 20, [1, 2], ())]


def test_or_without_timeout_whose_only_channels_are_violated_ends_silently() -> None:
    # 4.4: with no group timeout a @not in an OR can never make it succeed (experiment ornot); once
    # every channel is gone the instance can never emit and is dropped (no leak).
    g = group("or", Channel("no_x", "x", negated=True))
    engine = Engine([g])
    for e in [ev(0, "go", who="w"), ev(10, "x"), ev(20, "x")]:
        engine.process(e)
    engine.finish()
    assert engine.detections == []
    assert engine.state_of("g", "k") is None


# ---------------------------------------------------------------- AND @count record + @stop(ids) (4.8, 4.5)
def test_and_count_record_is_closed_by_stop_ids_only_once_its_minimum_is_reached() -> None:
    g = group(
        "and",
        Channel("hits", "hit", count=Count(2, 3, "record")),
        Channel("end", "end", stop_ids=("hits",)),
    )
    # record: every event is recorded (beyond max too) and the channel stays open; @stop(ids) then
    # removes the satisfied target and the AND completes with the stop event recorded.
    ok = run(g, [ev(0, "go"), ev(1, "hit"), ev(2, "hit"), ev(3, "hit"), ev(4, "hit"), ev(5, "end")])
    assert outline(ok) == [("match", 5, [1, 2, 3, 4, 5], ())]
    # 9.6: an unsatisfied target (one hit of two) fails the instance silently.
    assert run(g, [ev(0, "go"), ev(1, "hit"), ev(5, "end")]).detections == []


def test_stop_ids_on_two_targets_needs_both_satisfied() -> None:
    g = group(
        "and",
        Channel("a", "a", count=Count.of(1, -1)),
        Channel("b", "b", count=Count.of(1, -1)),
        Channel("end", "end", stop_ids=("a", "b")),
    )
    assert seqs(run(g, [ev(0, "go"), ev(1, "b"), ev(2, "a"), ev(3, "end")])) == [[1, 2, 3]]
    assert run(g, [ev(0, "go"), ev(1, "b"), ev(3, "end")]).detections == []


def test_or_stop_ids_on_two_targets_removes_both_and_the_group_goes_on() -> None:
    # 4.5: OR @stop(ids) removes its targets; its event is recorded but completes nothing.
    g = group(
        "or", Channel("a", "a"), Channel("b", "b"), Channel("c", "c"), Channel("s", "s", stop_ids=("a", "b"))
    )
    res = run(g, [ev(0, "go"), ev(1, "s"), ev(2, "a"), ev(3, "b"), ev(4, "c")])
    assert outline(res) == [("match", 4, [1, 4], ())]


# ---------------------------------------------------------------- pause / resume (4.7)
def test_or_pause_then_resume_then_event() -> None:
    g = group(
        "or",
        Channel("data", "data"),
        Channel("hold", "hold", pause_ids=("data",)),
        Channel("go_on", "resume", resume_ids=("data",)),
    )
    events = [ev(0, "go"), ev(1, "hold"), ev(2, "data"), ev(3, "resume"), ev(4, "data")]
    res = run(g, events)
    # The paused event is not recorded but still reacts (status paused); control events are recorded.
    assert outline(res) == [("match", 4, [1, 3, 4], ())]
    assert [(r.event.seq, r.status) for r in res.reactions] == [
        (1, "accepted"),
        (2, "paused"),
        (3, "accepted"),
        (4, "accepted"),
    ]


def test_or_initially_paused_channel_with_a_second_pause() -> None:
    g = group(
        "or",
        Channel("data", "data", paused=True),
        Channel("on", "on", resume_ids=("data",)),
        Channel("off", "off", pause_ids=("data",)),
    )
    events = [
        ev(0, "go"),
        ev(1, "data"),
        ev(2, "on"),
        ev(3, "off"),
        ev(4, "data"),
        ev(5, "on"),
        ev(6, "data"),
    ]
    assert outline(run(g, events)) == [("match", 6, [2, 3, 5, 6], ())]


# ---------------------------------------------------------------- ties at the timeout instant (9.15)
def test_member_timeout_tie_counts_the_event_first() -> None:
    g = group("and", Channel("a", "a", timeout_ms=100), Channel("b", "b"))
    # a arrives exactly at the member timeout instant (0 + 100): the event is processed first.
    assert outline(run(g, [ev(0, "go"), ev(50, "b"), ev(100, "a")])) == [("match", 100, [1, 2], ())]
    # one ms later the channel is gone, and the AND, with b satisfied, succeeds without it (9.4).
    assert outline(run(g, [ev(0, "go"), ev(50, "b"), ev(101, "a")])) == [("match", 100, [1], ())]
    # without b it fails at once
    assert run(g, [ev(0, "go"), ev(101, "a"), ev(102, "b")]).detections == []


def test_not_member_timeout_tie_the_event_violates_first() -> None:
    # A @not channel's member timeout proves absence; an event at that instant comes first (4.4).
    g = group("and", Channel("a", "a"), Channel("no_b", "b", negated=True, timeout_ms=100))
    assert run(g, [ev(0, "go"), ev(10, "a"), ev(100, "b")]).detections == []
    assert outline(run(g, [ev(0, "go"), ev(10, "a"), ev(101, "b")])) == [("match", 100, [1], ())]


def test_group_timeout_tie_for_or_and_and() -> None:
    or_g = group("or", Channel("a", "a"), timeout_ms=100, timeout_channel=True)
    assert outline(run(or_g, [ev(0, "go"), ev(100, "a")])) == [("match", 100, [1], ())]
    and_g = group("and", Channel("a", "a"), Channel("no_b", "b", negated=True), timeout_ms=100)
    # 3.1: with a group timeout the @not blocks completion until the timeout; a violating event at
    # the timeout instant comes first and fails the instance.
    assert run(and_g, [ev(0, "go"), ev(10, "a"), ev(100, "b")]).detections == []
    assert outline(run(and_g, [ev(0, "go"), ev(10, "a")])) == [("match", 100, [1], ("no_b",))]


# ---------------------------------------------------------------- nesting two levels deep (5.4, 2)
def test_nested_groups_two_levels_deep() -> None:
    inner = ReactionGroup("inner", "and", channels=(Channel("z", "z"), Channel("w", "w")))
    middle = ReactionGroup("middle", "or", channels=(Channel("y", "y"), inner))
    g = group("and", Channel("x", "x"), middle)
    res = run(g, [ev(0, "go"), ev(1, "w"), ev(2, "x"), ev(3, "z")])
    top = [d for d in res.detections if not d.extra.get("nested")]
    assert [(d.time, [e.seq for e in d.events], d.channels) for d in top] == [
        (3, [2, 1, 3], ("x", "middle.inner.w", "middle.inner.z"))
    ]
    tree = top[0].extra["tree"]
    assert tree[1].group == "middle"
    assert tree[1].tree[0].group == "inner"
    nested = [(d.extra["group"], [e.seq for e in d.events]) for d in res.detections if d.extra.get("nested")]
    assert nested == [("inner", [1, 3]), ("middle", [1, 3])]


def test_a_parent_timeout_stops_its_nested_groups() -> None:
    inner = ReactionGroup("inner", "and", channels=(Channel("z", "z"), Channel("w", "w")))
    g = group("or", Channel("y", "y"), inner, timeout_ms=50, timeout_channel=True)
    res = run(g, [ev(0, "go"), ev(10, "z"), ev(60, "w")])
    assert outline(res) == [("timeout", 50, [], ())]


def test_channel_after_a_nested_group_extends_the_parent() -> None:
    # 5.5: the nested exit's continuation adds a channel to the parent instance.
    inner = ReactionGroup("inner", "and", channels=(Channel("a", "a"), Channel("no_c", "c", negated=True)))
    g = group("or", inner, Channel("then", "b", after=("inner",)))
    res = run(g, [ev(0, "go"), ev(1, "b"), ev(2, "a"), ev(3, "b")])
    top = [d for d in res.detections if not d.extra.get("nested")]
    assert [(d.time, [e.seq for e in d.events]) for d in top] == [(3, [2, 3])]


# ---------------------------------------------------------------- @vars joins with 3 channels (4.10, 9.12)
def three_way(where: str | None, count: Count | None = None) -> ReactionGroup:
    return ReactionGroup(
        "j",
        "and",
        channels=(
            Channel("o", "order", vars={"C": "cust", "P1": "price"}, count=count),
            Channel("p", "pay", vars={"C": "cust", "P2": "paid"}, count=count),
            Channel("s", "ship", vars={"C": "cust"}, count=count),
        ),
        instances=(Instance("k", 0),),
        timeout_ms=1000,
        where=where,
    )


def test_three_channel_join_on_a_shared_variable() -> None:
    events = [ev(1, "order", cust="a", price=5), ev(2, "pay", cust="b", paid=1), ev(3, "ship", cust="a")]
    assert run(three_way(None), events).detections == []  # the pay of b disagrees
    events = [ev(1, "order", cust="a", price=5), ev(2, "ship", cust="a"), ev(3, "pay", cust="a", paid=5)]
    assert seqs(run(three_way(None), events)) == [[0, 1, 2]]


def test_three_channel_join_where_naming_two_legs_is_checked_on_whole_joins() -> None:
    rec = Count.of(-1)
    events = [
        ev(1, "order", cust="a", price=5),
        ev(2, "ship", cust="a"),
        ev(3, "pay", cust="a", paid=4),  # P2 < P1: rejected by the @where
        ev(4, "pay", cust="a", paid=5),
        ev(5, "order", cust="a", price=9),  # joins neither pay (9 > 5)
    ]
    assert seqs(run(three_way("P2 >= P1", rec), events)) == [[0, 1, 3]]


def test_three_channel_join_emits_one_detection_per_combination() -> None:
    rec = Count.of(-1)
    events = [
        ev(1, "order", cust="a", price=1),
        ev(2, "order", cust="a", price=2),
        ev(3, "pay", cust="a", paid=3),
        ev(4, "ship", cust="a"),
    ]
    assert seqs(run(three_way(None, rec), events)) == [[0, 2, 3], [1, 2, 3]]


# ---------------------------------------------------------------- fields and keys
def test_a_channel_binding_a_missing_field_does_not_match() -> None:
    g = group(
        "and",
        Channel("a", "a", binds={"N": "n"}),
        Channel("b", "b", match={"n": Var("N")}, after=("a",)),
    )
    events = [ev(0, "go"), ev(1, "a"), ev(2, "a", n=3), ev(3, "b", n=3)]
    assert seqs(run(g, events)) == [[2, 3]]


def test_initiator_of_another_type_than_every_channel_and_custom_key_field_names() -> None:
    g = ReactionGroup(
        "g",
        "or",
        channels=(
            Channel("t", "temp", match={"sensor": Var("S")}, where="e.celsius > Max", size=Size(2)),
            Channel("off", "shutdown", match={"sensor": Var("S")}, stop=True),
        ),
        initiator=Initiator("arm", bind={"S": "sensor", "Max": "limit"}),
        timeout_ms=100,
    )
    events = [
        ev(0, "arm", key="s1", sensor="s1", limit=30),
        ev(1, "arm", key="s2", sensor="s2", limit=10),
        ev(2, "temp", key="s1", sensor="s1", celsius=31),
        ev(3, "temp", key="s2", sensor="s2", celsius=20),
        ev(4, "shutdown", key="s2", sensor="s2"),
        ev(5, "temp", key="s1", sensor="s1", celsius=29),
        ev(6, "temp", key="s1", sensor="s1", celsius=35),
        ev(7, "temp", key="s2", sensor="s2", celsius=25),
    ]
    # 4.9: @size(2) fires on its 2nd event with both recorded; 4.5: the bare @stop ends s2 silently.
    assert [(d.key, [e.seq for e in d.events]) for d in run(g, events).detections] == [("s1", [2, 6])]


def test_recurring_size_with_an_accumulator_per_key() -> None:
    g = ReactionGroup(
        "agg",
        "or",
        channels=(Channel("c", "hit", size=Size(3, 2, MapCounter("e.page"))),),
        instances=(Instance("a", 0), Instance("b", 0)),
    )
    hits = [("a", "1"), ("b", "2"), ("a", "1"), ("a", "2"), ("b", "2"), ("b", "3"), ("a", "3"), ("a", "1")]
    events = [ev(t, "hit", key=k, page=p) for t, (k, p) in enumerate(hits, start=1)]
    res = run(g, events)
    # 4.9: @size(n, r, acc): the first window closes on the 3rd event, then every 2 events, per key.
    assert [(d.key, d.extra["aggregate"]) for d in res.detections] == [
        ("a", {"1": 2, "2": 1}),
        ("b", {"2": 2, "3": 1}),
        ("a", {"3": 1, "1": 1}),
    ]


def test_a_timer_channel_without_a_type_is_a_pure_clock() -> None:
    # Its windows close on time only and it records no event itself; the events in a window are
    # those the other channels recorded (4.11: the emission carries the instance's trace).
    g = ReactionGroup(
        "clock",
        "or",
        channels=(Channel("tick", timer=Timer(10)), Channel("x", "x", size=Size(100))),
        instances=(Instance("k", 0),),
    )
    res = run(g, [ev(3, "x"), ev(5, "other"), ev(12, "x")], until=25)
    assert [(d.time, [e.seq for e in d.events]) for d in res.detections] == [(10, [0]), (20, [2])]


def test_an_exhausted_nested_or_waits_for_the_parents_timeout() -> None:
    # The nested OR loses its only channel to a @not event; the parent's timeout then reports the
    # AND as timed out with its own trace (4.3, 9.1; the nested group's events join the parent's
    # trace only as its result, 2) instead of the instance vanishing silently.
    inner = ReactionGroup("inner", "or", channels=(Channel("no_x", "x", negated=True),))
    g = group("and", Channel("a", "a"), inner, timeout_ms=50, timeout_channel=True)
    assert outline(run(g, [ev(0, "go"), ev(5, "a"), ev(10, "x")])) == [("timeout", 50, [1], ())]
    # Without any timeout the instance can never complete and is dropped at once.
    quiet = group("and", Channel("a", "a"), inner)
    engine = Engine([quiet])
    engine.process_many([ev(0, "go"), ev(5, "a"), ev(10, "x")])
    assert engine.state_of("g", "k") is None


def test_one_timed_auction_window_with_the_best_offers() -> None:
    # hohpe_using_groups shape: OR @timer(500, 500, acc) with @size(1) on the exit: the first window
    # is the only emission (4.2, 4.11); the accumulator keeps values by key (offer -> services).
    g = ReactionGroup(
        "bids",
        "or",
        channels=(
            Channel("c", "respond", timer=Timer(500, 500, SortedAccumulator("e.offer", "e.service", top=1))),
        ),
        instances=(Instance("x", 0),),
        exit=Exit(size=1),
    )
    events = [
        ev(1, "respond", key="x", service=2, offer=12),
        ev(2, "respond", key="x", service=3, offer=10),
        ev(3, "respond", key="x", service=5, offer=12),
        ev(700, "respond", key="x", service=9, offer=20),
    ]
    res = run(g, events, until=3000)
    assert [(d.time, [e.seq for e in d.events], d.extra["aggregate"]) for d in res.detections] == [
        (500, [0, 1, 2], {12: [5], 10: [3]})
    ]


def test_extension_after_a_nested_group_is_traced() -> None:
    inner = ReactionGroup("inner", "and", channels=(Channel("a", "a"),))
    g = group("and", inner, Channel("then", "b", after=("inner",)))
    res = run(g, [ev(0, "go"), ev(1, "a"), ev(2, "b")], trace=True)
    extended = [(r.element, r.detail) for r in res.trace if r.kind.name == "EXTENDED"]
    assert extended == [("then", {"after": "inner"})]
    assert seqs(res)[-1] == [1, 2]
