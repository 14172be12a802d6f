"""Print reactions and detections the way Prova's examples print them.

Prova prints a message as ``[XID,Protocol,From,Verb,[type,arg1,arg2,...]]`` and a group result as
``Pattern detected: [[entry, entry, ...]]``, where an ``@not`` channel proved absent appears as
``[not,[XID,async,0,Verb,[type,...]]]`` with its still-free variables shown as ``<_>`` (Prova
prints a run-dependent ``<N>``). A channel continuation such as
``println(["Suspicious login",User,IP,IP2]," ")`` is written here as a template
``"Suspicious login {User} {IP} {e[ip]}"``: names are the instance's variables, ``e`` the event.

>>> from workbench.engine.events import Event
>>> e = Event("login", 3, "user3", {"user": "user3", "ip": "60.60.60.60"})
>>> prova_message(e, {"login": ("user", "ip")}, verb="request")
'[user3,async,0,request,[login,user3,60.60.60.60]]'
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from workbench.engine.detection import Detection, Reaction
from workbench.engine.events import Event
from workbench.engine.reactions.patterns import Channel, Member, ReactionGroup, Var, pairs

__all__ = ["FREE", "format_detection", "format_reaction", "prova_message", "prova_negated"]

#: How a variable that is still free prints.
FREE = "<_>"

Schema = Mapping[str, Sequence[str]]


def prova_message(event: Event, schema: Schema, verb: str = "request", protocol: str = "async") -> str:
    """``[XID,Protocol,0,Verb,[type,args...]]`` with the payload fields in ``schema`` order."""
    args = [str(event.fields.get(name, FREE)) for name in schema.get(event.type, ())]
    proto = event.fields.get("protocol", protocol)
    vrb = event.fields.get("verb", verb)
    payload = ",".join([event.type, *args])
    return f"[{event.key},{proto},0,{vrb},[{payload}]]"


def prova_negated(
    channel: Channel, key: Hashable, env: Mapping[str, object], schema: Schema, verb: str = "request"
) -> str:
    """``[not,[XID,async,0,Verb,[type,args...]]]`` for an ``@not`` channel proved absent."""
    table = dict(pairs(channel.match))
    args = []
    for name in schema.get(channel.type or "", ()):
        value = table.get(name, Var("_"))
        if isinstance(value, Var):
            value = env.get(value.name, FREE)
        args.append(str(value))
    payload = ",".join([channel.type or "_", *args])
    return f"[not,[{key},async,0,{verb},[{payload}]]]"


def _channel(group: ReactionGroup, path: str) -> Channel | None:
    head, _, rest = path.partition(".")
    for m in group.channels:
        member: Member = m
        if isinstance(member, ReactionGroup) and member.name == head and rest:
            return _channel(member, rest)
        if isinstance(member, Channel) and member.id == path:
            return member
    return None


def format_detection(
    detection: Detection,
    group: ReactionGroup,
    schema: Schema,
    env: Mapping[str, object] | None = None,
    prefix: str = "Pattern detected: ",
) -> str:
    """One line: ``Pattern detected: [[entry, ...]]`` (events, then absent ``@not`` channels)."""
    scope = dict(env or {})
    entries = [prova_message(e, schema) for e in detection.events]
    for name in detection.negated:
        ch = _channel(group, name)
        entries.append(prova_negated(ch, detection.key, scope, schema) if ch else f"[not,{name}]")
    return f"{prefix}[[{', '.join(entries)}]]"


def format_reaction(template: str, reaction: Reaction, env: Mapping[str, object] | None = None) -> str:
    """A channel continuation's line: ``template.format(**env, e=event)``."""
    scope = dict(env or {})
    scope["e"] = reaction.event
    return template.format(**scope)
