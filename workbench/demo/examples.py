"""The four examples of the Prova blog post "Dynamic event channels, negation and termination in
Prova event patterns" (``and_not``, ``or_stop``, ``or_paused``, ``or_not_count``), as patterns of
this engine, with the client's messages and the lines the blog prints.

Event times follow the conformance cases: the first message at ``t=1``, back-to-back messages 1 ms
apart, ``Thread.sleep(N)`` adds ``N`` ms. :func:`run_example` runs one example and returns the
lines its continuations (``println``) and its exit reaction print, in the order the engine emits
them (Prova's thread interleaving can print some lines in another order).

>>> lines = run_example(EXAMPLES["or_stop"])
>>> lines[-1]
'Update user2 30.30.30.30'
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Literal, TypedDict, Unpack

from workbench.demo.format import format_detection, format_reaction
from workbench.engine.detection import Detection, Reaction, TraceKind, TraceRecord
from workbench.engine.events import Event
from workbench.engine.reactions.patterns import (
    Channel,
    ChannelOptions,
    Initiator,
    ReactionGroup,
    Size,
    Var,
    pairs,
)
from workbench.engine.runtime import Engine

__all__ = ["EXAMPLES", "SCHEMA", "BlogExample", "Message", "run_example"]

#: Positional payload arguments of the blog's messages: ``login(User, IP)``.
SCHEMA: Mapping[str, tuple[str, ...]] = {
    "login": ("user", "ip"),
    "logout": ("user", "ip"),
    "update": ("user", "ip"),
}

_LOGIN = Initiator("login", bind={"User": "user", "IP": "ip"})
_SUSPICIOUS = "Suspicious login {User} {IP} {e[ip]}"


class Message(TypedDict):
    """A client's message as the engine takes it (a mapping that ``make_event`` reads)."""

    type: str
    time: int
    key: str
    fields: dict[str, str]


def _messages(table: str) -> tuple[Message, ...]:
    """The client's messages, one ``time type user ip`` a line (keyed by the user)."""
    rows = (line.split() for line in table.strip().splitlines())
    return tuple(
        {"type": typ, "time": int(t), "key": user, "fields": {"user": user, "ip": ip}}
        for t, typ, user, ip in rows
    )


@dataclass(frozen=True, slots=True)
class BlogExample:
    """One blog example: the group, the client's messages, the continuations and the printed lines."""

    group: ReactionGroup
    events: tuple[Message, ...]
    templates: Mapping[str, str]
    printed: tuple[str, ...]


def _login_other_ip(**extra: Unpack[ChannelOptions]) -> Channel:
    return Channel("c_login", "login", match={"user": Var("User")}, where="e.ip != IP", **extra)


def _same(channel_id: str, typ: str, **extra: Unpack[ChannelOptions]) -> Channel:
    return Channel(channel_id, typ, match={"user": Var("User"), "ip": Var("IP")}, **extra)


def _group(
    name: str, operator: Literal["and", "or"], *channels: Channel, timeout_ms: int = 1000
) -> ReactionGroup:
    """A group of the blog: an instance per login, for the login's user and IP."""
    return ReactionGroup(name, operator, channels=channels, timeout_ms=timeout_ms, initiator=_LOGIN)


EXAMPLES: Mapping[str, BlogExample] = {
    "and_not": BlogExample(
        _group(
            "and_not",
            "and",
            _login_other_ip(timeout_ms=250),
            _same("c_logout", "logout", negated=True),
            timeout_ms=400,
        ),
        _messages(
            """
              1 login  user1 10.10.10.10
              2 login  user3 50.50.50.50
            202 login  user2 30.30.30.30
            203 login  user3 60.60.60.60
            503 logout user1 10.10.10.10
            504 login  user1 20.20.20.20
            505 login  user2 40.40.40.40
            """
        ),
        {"c_login": _SUSPICIOUS, "c_logout": "Logout {User} {IP}"},
        (
            "Suspicious login user3 50.50.50.50 60.60.60.60",
            "Pattern detected: [[[user3,async,0,request,[login,user3,60.60.60.60]], "
            "[not,[user3,async,0,request,[logout,user3,50.50.50.50]]]]]",
        ),
    ),
    "or_stop": BlogExample(
        _group(
            "or_stop",
            "or",
            _login_other_ip(),
            _same("c_logout", "logout"),
            _same("c_update", "update", stop=True),
        ),
        _messages(
            """
              1 login  user1 10.10.10.10
            201 login  user2 30.30.30.30
            501 logout user1 10.10.10.10
            502 login  user1 20.20.20.20
            503 update user2 30.30.30.30
            504 login  user2 40.40.40.40
            """
        ),
        {"c_login": _SUSPICIOUS, "c_logout": "Logout {User} {IP}", "c_update": "Update {User} {IP}"},
        (
            "Logout user1 10.10.10.10",
            "Update user2 30.30.30.30",
            "Pattern detected: [[[user1,async,0,request,[logout,user1,10.10.10.10]]]]",
        ),
    ),
    "or_paused": BlogExample(
        _group(
            "or_paused",
            "or",
            Channel("id1", "login", match={"user": Var("User")}, where="e.ip != IP", paused=True),
            _same("c_logout", "logout"),
            _same("c_update", "update", resume_ids=("id1",)),
        ),
        _messages(
            """
              1 login  user1 10.10.10.10
            201 login  user2 30.30.30.30
            501 logout user1 10.10.10.10
            502 login  user1 20.20.20.20
            503 login  user2 40.40.40.40
            504 update user2 30.30.30.30
            505 login  user2 50.50.50.50
            """
        ),
        {"id1": _SUSPICIOUS, "c_logout": "Logout {User} {IP}", "c_update": "Update {User} {IP}"},
        (
            "Logout user1 10.10.10.10",
            "Suspicious login user2 30.30.30.30 40.40.40.40",
            "Update user2 30.30.30.30",
            "Pattern detected: [[[user1,async,0,request,[logout,user1,10.10.10.10]]]]",
            "Suspicious login user2 30.30.30.30 50.50.50.50",
            "Suspicious login user2 40.40.40.40 50.50.50.50",
            "Pattern detected: [[[user2,async,0,request,[update,user2,30.30.30.30]], "
            "[user2,async,0,request,[login,user2,50.50.50.50]]]]",
        ),
    ),
    "or_not_count": BlogExample(
        _group(
            "or_not_count", "or", _login_other_ip(negated=True, size=Size(2)), _same("c_logout", "logout")
        ),
        _messages(
            """
              1 login  user1 10.10.10.10
              2 login  user3 50.50.50.50
            202 login  user2 30.30.30.30
            502 logout user1 10.10.10.10
            503 login  user3 60.60.60.60
            504 login  user1 20.20.20.20
            505 login  user2 40.40.40.40
            506 login  user2 40.40.40.40
            """
        ),
        {"c_login": _SUSPICIOUS, "c_logout": "Logout {User} {IP}"},
        (
            "Suspicious login user3 50.50.50.50 60.60.60.60",
            "Logout user1 10.10.10.10",
            "Suspicious login user2 30.30.30.30 40.40.40.40",
            "Suspicious login user2 30.30.30.30 40.40.40.40",
            "Pattern detected: [[[user1,async,0,request,[logout,user1,10.10.10.10]]]]",
            "Pattern detected: [[[user3,async,0,request,[login,user3,60.60.60.60]], "
            "[not,[user3,async,0,request,[login,user3,<84>]]]]]",
            "Pattern detected: [[[not,[user3,async,0,request,[login,user3,<252>]]]]]",
            "Pattern detected: [[[not,[user2,async,0,request,[login,user2,<332>]]]]]",
            "Pattern detected: [[[not,[user2,async,0,request,[login,user2,<420>]]]]]",
            "Pattern detected: [[[not,[user1,async,0,request,[login,user1,<480>]]]]]",
        ),
    ),
}


def run_example(example: BlogExample) -> list[str]:
    """Run one example; return the printed lines in emission order."""
    return [line for line, _ in run_example_records(example)]


def run_example_records(example: BlogExample) -> list[tuple[str, Reaction | Detection]]:
    """Like :func:`run_example`, with the record behind each line."""
    out: list[tuple[str, Reaction | Detection]] = []
    events: dict[int, Event] = {}
    initiators: dict[tuple[Hashable, int], int] = {}
    group = example.group
    bind = pairs(group.initiator.bind) if group.initiator is not None else ()

    def env_of(key: Hashable, instance: int, initiator: Event | None = None) -> dict[str, object]:
        event = initiator
        if event is None:
            seq = initiators.get((key, instance))
            event = events.get(seq) if seq is not None else None
        if event is None:
            return {}
        return {var: event.fields.get(name) for var, name in bind}

    def on_trace(record: TraceRecord) -> None:
        if record.kind == TraceKind.STARTED and record.event_seq is not None:
            initiators[(record.key, record.instance)] = record.event_seq

    def on_reaction(reaction: Reaction) -> None:
        template = example.templates.get(reaction.channel)
        if template is not None:
            line = format_reaction(template, reaction, env_of(reaction.key, reaction.instance))
            out.append((line, reaction))

    def on_detection(detection: Detection) -> None:
        env = env_of(detection.key, detection.instance, detection.initiator)
        out.append((format_detection(detection, group, SCHEMA, env), detection))

    engine = Engine(
        [group],
        trace=True,
        collect=False,
        on_trace=on_trace,
        on_reaction=on_reaction,
        on_detection=on_detection,
    )
    for raw in example.events:
        events[len(events)] = Event(raw["type"], raw["time"], raw["key"], raw["fields"], len(events))
        start = len(out)
        engine.process(raw)
        out[start:] = prova_order(out[start:], raw["time"])
    engine.finish()
    return out


def prova_order(
    lines: list[tuple[str, Reaction | Detection]], event_time: int | float
) -> list[tuple[str, Reaction | Detection]]:
    """One event's printed lines in Prova's order: the event's continuations before the group results.

    Prova delivers a group's result as a message through the key's own queue (``prova.md`` 1.2),
    so it is printed after every continuation the completing event ran, in any instance of that
    key. Lines from timers due before the event keep their place in front of it. Across keys,
    Prova's partitions run on parallel threads, so the blog's interleaving of different users'
    lines is one of many; see ``docs/reaction-groups.md``, "Printed order".
    """

    def rank(item: tuple[str, Reaction | Detection]) -> int:
        record = item[1]
        if record.time < event_time:
            return 0  # a timer that fired before the event
        return 1 if isinstance(record, Reaction) else 2

    return sorted(lines, key=rank)
