"""AND / OR exits, instances per initiator, guards, reactions, detection records, validation."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.engine.detection import TraceKind
from workbench.engine.families import compile_matcher
from workbench.engine.reactions import Channel, Count, Initiator, ReactionGroup, Size, Var
from workbench.engine.runtime import Engine, run
from workbench.errors import PatternError


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


LOGIN = Initiator("login", bind={"User": "user", "IP": "ip"})


def group(op: str, **kw: Any) -> ReactionGroup:
    channels = (
        Channel("c_login", "login", match={"user": Var("User")}, where="e.ip != IP"),
        Channel("c_logout", "logout", match={"user": Var("User"), "ip": Var("IP")}),
    )
    return ReactionGroup("g", op, channels=channels, initiator=LOGIN, **kw)  # type: ignore[arg-type]


def test_and_completes_when_every_channel_fired() -> None:
    events = [
        ev(1, "login", user="a", ip="1"),
        ev(2, "logout", user="a", ip="1"),
        ev(3, "login", user="a", ip="2"),
    ]
    res = run(group("and"), events)
    assert [[e.seq for e in d.events] for d in res.detections] == [[1, 2]]
    d = res.detections[0]
    assert d.kind == "match"
    assert d.time == 3
    assert d.channels == ("c_logout", "c_login")
    assert d.initiator is not None
    assert d.initiator.seq == 0
    assert d.extra["exit"] == "and"


def test_or_completes_on_first_event_and_leaks_no_channel() -> None:
    events = [
        ev(1, "login", user="a", ip="1"),
        ev(2, "logout", user="a", ip="1"),
        ev(3, "login", user="a", ip="2"),
    ]
    res = run(group("or"), events)
    assert [[e.seq for e in d.events] for d in res.detections] == [[1]]
    # the completed instance's login channel is gone: the login at t=3 reaches only new instances
    assert [(r.channel, r.event.seq) for r in res.reactions] == [("c_logout", 1)]


def test_each_initiator_event_starts_its_own_instance_which_never_sees_it() -> None:
    events = [
        ev(1, "login", user="a", ip="1"),
        ev(2, "login", user="a", ip="2"),
        ev(3, "logout", user="a", ip="2"),
    ]
    res = run(group("or"), events)
    # instance 1 completes on login ip=2; instance 2 (ip 2) completes on the logout ip=2
    assert sorted((d.instance, tuple(e.seq for e in d.events)) for d in res.detections) == [
        (1, (1,)),
        (2, (2,)),
    ]


def test_single_shot_initiator_is_consumed_per_key_by_first_match_only() -> None:
    init = Initiator("login", where="e.user != 'bad'", bind={"User": "user", "IP": "ip"}, mult=False)
    g = ReactionGroup(
        "g", "or", channels=(Channel("c", "logout", match={"user": Var("User")}),), initiator=init
    )
    events = [
        ev(1, "login", user="bad", ip="1"),
        ev(2, "login", user="a", ip="1"),
        ev(3, "login", user="a", ip="2"),
    ]
    events += [ev(4, "logout", user="a", ip="9")]
    res = run(g, events)
    assert len(res.detections) == 1
    assert res.detections[0].initiator is not None
    assert res.detections[0].initiator.seq == 1


def test_callable_conditions_receive_event_and_variables() -> None:
    seen: list[dict[str, Any]] = []

    def other_ip(e: Any, env: Any) -> bool:
        seen.append(dict(env))
        return bool(e["ip"] != env["IP"])

    g = ReactionGroup("g", "or", channels=(Channel("c", "login", where=other_ip),), initiator=LOGIN)
    res = run(
        g,
        [
            ev(1, "login", user="a", ip="1"),
            ev(2, "login", user="a", ip="1"),
            ev(3, "login", user="a", ip="2"),
        ],
    )
    assert [e.seq for d in res.detections for e in d.events] == [2, 2]
    assert seen[0]["User"] == "a"


def test_patterns_built_from_strings_compare_equal() -> None:
    assert group("and") == group("and")
    assert Channel("c", "x", match={"a": Var("A")}) == Channel("c", "x", match=(("a", Var("A")),))


def test_reactions_and_trace_records() -> None:
    events = [ev(1, "login", user="a", ip="1"), ev(2, "logout", user="a", ip="1")]
    res = run(group("or"), events, trace=True)
    assert [(r.channel, r.status) for r in res.reactions] == [("c_logout", "accepted")]
    kinds = [t.kind for t in res.trace]
    assert TraceKind.STARTED in kinds
    assert TraceKind.ACCEPTED in kinds
    assert TraceKind.DETECTED in kinds


def test_tracing_off_records_nothing() -> None:
    res = run(group("or"), [ev(1, "login", user="a", ip="1"), ev(2, "logout", user="a", ip="1")])
    assert res.trace == []


def test_keys_are_partitions() -> None:
    events = [ev(1, "login", "k1", user="a", ip="1"), ev(2, "logout", "k2", user="a", ip="1")]
    assert run(group("or"), events).detections == []


def test_state_is_released_after_completion() -> None:
    engine = Engine([group("or")])
    engine.process(ev(1, "login", user="a", ip="1"))
    engine.process(ev(2, "logout", user="a", ip="1"))
    assert engine.state_of("g", "u") is None


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ReactionGroup("g", "xor", channels=(Channel("c", "a"),), initiator=LOGIN), "operator"),  # type: ignore[arg-type]
        (lambda: ReactionGroup("g", "and", channels=(), initiator=LOGIN), "at least one channel"),
        (lambda: ReactionGroup("g", "and", channels=(Channel("c", "a"),)), "initiator"),
        (
            lambda: ReactionGroup(
                "g", "and", channels=(Channel("c", "a", stop_ids=("zz",)),), initiator=LOGIN
            ),
            "zz",
        ),
        (
            lambda: ReactionGroup("g", "and", channels=(Channel("c", "a", size=Size(2)),), initiator=LOGIN),
            "@size",
        ),
        (
            lambda: ReactionGroup(
                "g", "or", channels=(Channel("c", "a", count=Count.of(2)),), initiator=LOGIN
            ),
            "@count",
        ),
        (
            lambda: ReactionGroup(
                "g", "or", channels=(Channel("c", "a"), Channel("c", "b")), initiator=LOGIN
            ),
            "duplicate",
        ),
        (
            lambda: ReactionGroup("g", "or", channels=(Channel("c", "a", where="e.x +"),), initiator=LOGIN),
            "channel 'c'",
        ),
        (
            lambda: ReactionGroup("g", "or", channels=(Channel("c", "a", vars={"X": "x"}),), initiator=LOGIN),
            "@vars",
        ),
    ],
)
def test_malformed_patterns_raise_pattern_error(build: Any, message: str) -> None:
    with pytest.raises(PatternError, match=message):
        compile_matcher(build())


def test_count_of_follows_prova_conventions() -> None:
    assert Count.of(2) == Count(2, 2, "ignore")
    assert Count.of(-1) == Count(0, 0, "record")
    assert Count.of(1, -1) == Count(1, 1, "record")
    assert Count.of(1, 2, "strict") == Count(1, 2, "strict")
    with pytest.raises(PatternError, match="mode"):
        Count.of(1, 2, "sometimes")


def test_a_failing_condition_is_recorded_and_the_run_goes_on() -> None:
    from workbench.engine.runtime import run as run_engine

    # A missing field is NULL: the channel's condition is not true, nothing fails.
    g = ReactionGroup("g", "or", channels=(Channel("c", "login", where="e.missing > 1"),), initiator=LOGIN)
    events = [ev(1, "login", user="a", ip="1"), ev(2, "login", user="a", ip="2")]
    assert run_engine(g, events).errors == []
    # An unknown variable fails on every event that reaches the channel: recorded once, counted.
    g2 = ReactionGroup("g", "or", channels=(Channel("c", "login", where="e.ip != NOPE"),), initiator=LOGIN)
    result = run_engine(g2, events)
    [fault] = result.errors
    assert (fault.pattern, fault.kind, fault.first_seq) == ("g", "NameError", 1)
    assert "NOPE" in fault.message
    assert "channel 'c'" in fault.where
    from workbench.errors import CepRuntimeError

    with pytest.raises(CepRuntimeError, match="NOPE"):
        run_engine(g2, events, strict=True)
