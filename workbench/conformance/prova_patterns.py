"""Prova conformance cases' patterns rebuilt with the engine's own objects.

A case's ``pattern`` (``conformance/FORMAT.md`` plus the Prova keys of ``prova.md`` section 6)
becomes a :class:`~workbench.engine.reactions.ReactionGroup` (kind ``group``) or a
:class:`~workbench.engine.reactions.Receive` (kind ``filter``); the conventions are those of
:mod:`workbench.conformance.groups`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.engine.reactions import (
    Channel,
    Count,
    Exit,
    Initiator,
    Instance,
    MapCounter,
    ReactionGroup,
    Receive,
    Size,
    SortedAccumulator,
    Timer,
    Var,
)
from workbench.errors import CepError

__all__ = ["build_pattern"]

_APPEND = re.compile(r"^\s*([A-Za-z_]\w*)\.append\((.*)\)\s*$")


def _value(v: Any) -> Any:
    if isinstance(v, str) and v.startswith("$") and len(v) > 1:
        return Var(v[1:])
    return v


def _match(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: _value(v) for k, v in (raw or {}).items()}


_DURATION = re.compile(
    r"(\d+(?:\.\d+)?)\s*(milliseconds?|ms|minutes?|min|seconds?|secs?|s|hours?|h)?\b", re.I
)
_UNIT_MS = {"ms": 1, "millisecond": 1, "milliseconds": 1, "s": 1000, "sec": 1000, "secs": 1000}
_UNIT_MS |= {"second": 1000, "seconds": 1000, "min": 60_000, "minute": 60_000, "minutes": 60_000}
_UNIT_MS |= {"h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000}


def _ms(value: Any) -> Any:
    """A duration in ms: numbers as they are; Prova's strings (``'3 sec'``, ``'0 minutes 500 ms'``)."""
    if not isinstance(value, str):
        return value
    parts = _DURATION.findall(value)
    if not parts or _DURATION.sub("", value).strip():
        msg = f"unreadable duration {value!r}"
        raise CepError(msg)
    total = sum(float(n) * _UNIT_MS[(unit or "ms").lower()] for n, unit in parts)
    return int(total) if total == int(total) else total


def _ids(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _with_verb(where: str | None, verb: Any) -> str | None:
    if verb is None:
        return where
    check = f"e.get('verb', {verb!r}) == {verb!r}"
    return check if where is None else f"({where}) and {check}"


def _accumulator(raw: Mapping[str, Any] | None) -> MapCounter | SortedAccumulator | None:
    if raw is None:
        return None
    kind = raw.get("kind")
    if kind == "MapCounter":
        return MapCounter(raw["key"])
    if kind == "SortedAccumulator":
        return SortedAccumulator(raw["key"], raw["value"], raw.get("top"))
    msg = f"unknown aggregator kind {kind!r}"
    raise CepError(msg)


def _channel(raw: Mapping[str, Any], restarts: Mapping[str, list[str]], operator: str = "and") -> Channel:
    cid = str(raw["id"])
    count = None
    if "count_min" in raw:
        count = Count(int(raw["count_min"]), int(raw["count_max"]), raw.get("count_mode", "ignore"))
    elif "count" in raw and raw["count"] not in (None, 1):
        c = raw["count"]
        if isinstance(c, str):  # the raw annotation text, "1,-1" or "1,1,strict"
            c = [int(v) if v.strip().lstrip("-").isdigit() else v.strip() for v in c.split(",")]
        count = Count.of(*c) if isinstance(c, list) else Count.of(int(c))
    size = None
    if count is not None and operator == "or" and raw.get("size") is None:
        # The blog's OR(NOT @count(2) E1, E2): in an OR, "@count(n)" needs n events, as @size(n).
        if count.mode != "ignore" or count.min != count.max or count.min < 1:
            msg = f"channel {cid!r}: @count {count!r} in an OR group (use size)"
            raise CepError(msg)
        size, count = Size(count.min), None
    if raw.get("size") is not None:
        n, reset = raw["size"], raw.get("size_reset")
        if isinstance(n, list):  # the raw annotation, @size(n[, reset])
            n, reset = n[0], (n[1] if len(n) > 1 else reset)
        size = Size(int(n), None if reset is None else int(reset), _accumulator(raw.get("aggregator")))
    timer = None
    if raw.get("timer") is not None:
        t = raw["timer"]
        timer = Timer(_ms(t["delay_ms"]), _ms(t.get("period_ms")), _accumulator(raw.get("aggregator")))
    collect: dict[str, str] = {}
    if raw.get("on_match"):
        m = _APPEND.match(str(raw["on_match"]))
        if m is None:
            msg = f"channel {cid!r}: unsupported on_match {raw['on_match']!r} (expected 'Var.append(expr)')"
            raise CepError(msg)
        collect[m.group(1)] = m.group(2)
    after = (
        list(raw["after"])
        if isinstance(raw.get("after"), list)
        else ([raw["after"]] if raw.get("after") else [])
    )
    after += restarts.get(cid, [])
    return Channel(
        cid,
        raw.get("type"),
        match=_match(raw.get("match")),
        where=_with_verb(raw.get("where"), raw.get("verb")),
        negated=bool(raw.get("not", False)),
        stop=bool(raw.get("stop", False)),
        stop_ids=_ids(raw.get("stop_ids")),
        pause_ids=_ids(raw.get("pause_ids")),
        resume_ids=_ids(raw.get("resume_ids")),
        paused=bool(raw.get("paused", False)),
        optional=bool(raw.get("optional", False)),
        count=count,
        size=size,
        timer=timer,
        timeout_ms=_ms(raw.get("timeout_ms")),
        vars=dict(raw.get("vars") or {}),
        binds=dict(raw.get("binds") or {}),
        after=tuple(after),
        collect=collect,
    )


def _aliased(raw: Mapping[str, Any], alias: Mapping[str, str]) -> dict[str, Any]:
    """The channel with references to a nested group's member id replaced by the group's name."""
    out = dict(raw)
    for name in ("after", "stop_ids", "pause_ids", "resume_ids"):
        value = out.get(name)
        if isinstance(value, str):
            out[name] = alias.get(value, value)
        elif isinstance(value, list):
            out[name] = [alias.get(v, v) for v in value]
    return out


def _members(
    raw_channels: Sequence[Mapping[str, Any]], subgroups: Mapping[str, Any], operator: str = "and"
) -> tuple[Any, ...]:
    # A nested group is a member under its group name; a case may refer to it by its channel id.
    alias = {str(ch["id"]): str(ch["group_result"]) for ch in raw_channels if ch.get("group_result")}
    raw_channels = [_aliased(ch, alias) for ch in raw_channels]
    restarts: dict[str, list[str]] = {}
    for ch in raw_channels:
        spec = str(ch.get("on_violation") or "")
        if spec.startswith("restart_from:"):
            restarts.setdefault(spec.split(":", 1)[1], []).append(str(ch["id"]))
        elif spec:
            msg = f"channel {ch['id']!r}: unsupported on_violation {spec!r}"
            raise CepError(msg)
    out: list[Any] = []
    for ch in raw_channels:
        if ch.get("group_result"):
            name = ch["group_result"]
            sub = subgroups[name]
            sub_exit = sub.get("exit") or {}
            out.append(
                ReactionGroup(
                    name,
                    sub.get("operator", "and"),
                    channels=_members(sub["channels"], subgroups, sub.get("operator", "and")),
                    timeout_ms=_ms(sub.get("timeout_ms")),
                    timeout_channel=bool(sub.get("timeout_channel", False)),
                    exit=Exit(sub_exit.get("count"), sub_exit.get("size")),
                    where=sub.get("group_where"),
                )
            )
        else:
            out.append(_channel(ch, restarts, operator))
    return tuple(out)


def _initiator(raw: Mapping[str, Any], template: bool) -> Initiator:
    state = {k: ast.literal_eval(v) if isinstance(v, str) else v for k, v in (raw.get("state") or {}).items()}
    return Initiator(
        raw.get("type"),
        match=_match(raw.get("match")),
        where=_with_verb(raw.get("where"), raw.get("verb")),
        bind=dict(raw.get("bind") or {}),
        mult=bool(raw.get("mult", True)),
        template=template,
        state=state,
        id=str(raw.get("type") or "initiator"),
    )


def build_pattern(case: Mapping[str, Any]) -> ReactionGroup | Receive:
    """The engine pattern for a case's ``pattern`` (kinds ``group`` and ``filter``)."""
    p = case["pattern"]
    name = str(case.get("id", "case")).rsplit("/", 1)[-1]
    if p["kind"] == "filter":
        count = p.get("count", -1)
        return Receive(name, p.get("type"), where=_with_verb(p.get("where"), p.get("verb")), count=count)
    initiator = None
    if p.get("template_channel"):
        initiator = _initiator(p["template_channel"], template=True)
    elif p.get("initiator"):
        initiator = _initiator(p["initiator"], template=False)
    exit_ = p.get("exit") or {}
    return ReactionGroup(
        name,
        p.get("operator", "and"),
        channels=_members(p["channels"], p.get("subgroups") or {}, p.get("operator", "and")),
        timeout_ms=_ms(p.get("timeout_ms")),
        timeout_channel=bool(p.get("timeout_channel", False)),
        initiator=initiator,
        instances=tuple(
            Instance(i["key"], i.get("created_t", 0), dict(i.get("vars") or {}))
            for i in p.get("instances") or ()
        ),
        exit=Exit(exit_.get("count"), exit_.get("size")),
        where=p.get("group_where"),
        constants=dict(p.get("constants") or {}),
    )
