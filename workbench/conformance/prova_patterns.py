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

from workbench.conformance.case import (
    JSON,
    AggregatorSpec,
    Case,
    ChannelSpec,
    Duration,
    Ids,
    InitiatorSpec,
    Operator,
    SubgroupSpec,
)
from workbench.engine.reactions import (
    DEFAULT_COUNTER,
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


def _value(v: JSON) -> JSON | Var:
    if isinstance(v, str) and v.startswith("$") and len(v) > 1:
        return Var(v[1:])
    return v


def _match(raw: Mapping[str, JSON] | None) -> dict[str, JSON | Var]:
    return {k: _value(v) for k, v in (raw or {}).items()}


_DURATION = re.compile(
    r"(\d+(?:\.\d+)?)\s*(milliseconds?|ms|minutes?|min|seconds?|secs?|s|hours?|h)?\b", re.I
)
_UNIT_MS = {"ms": 1, "millisecond": 1, "milliseconds": 1, "s": 1000, "sec": 1000, "secs": 1000}
_UNIT_MS |= {"second": 1000, "seconds": 1000, "min": 60_000, "minute": 60_000, "minutes": 60_000}
_UNIT_MS |= {"h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000}


def _optional_ms(value: Duration | None) -> float | None:
    return None if value is None else _ms(value)


def _ms(value: Duration) -> float:
    """A duration in ms: numbers as they are; Prova's strings (``'3 sec'``, ``'0 minutes 500 ms'``)."""
    if not isinstance(value, str):
        return value
    parts = _DURATION.findall(value)
    if not parts or _DURATION.sub("", value).strip():
        msg = f"unreadable duration {value!r}"
        raise CepError(msg)
    total = sum(float(n) * _UNIT_MS[(unit or "ms").lower()] for n, unit in parts)
    return int(total) if total == int(total) else total


def _ids(value: Ids) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _with_verb(where: str | None, verb: str | None) -> str | None:
    if verb is None:
        return where
    check = f"e.get('verb', {verb!r}) == {verb!r}"
    return check if where is None else f"({where}) and {check}"


def _accumulator(raw: AggregatorSpec | None) -> MapCounter | SortedAccumulator | None:
    if raw is None:
        return None
    kind = raw.get("kind")
    if kind == "MapCounter":
        return MapCounter(raw["key"])
    if kind == "SortedAccumulator":
        return SortedAccumulator(raw["key"], raw["value"], raw.get("top"))
    msg = f"unknown aggregator kind {kind!r}"
    raise CepError(msg)


def _count(raw: ChannelSpec) -> Count | None:
    """``count_min``/``count_max``/``count_mode``, or Prova's ``@count`` arguments in ``count``."""
    if "count_min" in raw:
        return Count(int(raw["count_min"]), int(raw["count_max"]), raw.get("count_mode", "ignore"))
    c = raw.get("count")
    if c is None or c == 1:
        return None
    if isinstance(c, int):
        return Count.of(c)
    if isinstance(c, str):  # the raw annotation text, "1,-1" or "1,1,strict"
        c = [int(v) if v.strip().lstrip("-").isdigit() else v.strip() for v in c.split(",")]
    n, *rest = c
    m = rest[0] if rest else None
    mode = rest[1] if len(rest) > 1 else None
    if len(rest) > 2 or not isinstance(n, int) or isinstance(m, str) or isinstance(mode, int):
        msg = f"channel {raw['id']!r}: unreadable @count {raw.get('count')!r}"
        raise CepError(msg)
    return Count.of(n, m, mode)


def _size(raw: ChannelSpec, count: Count | None, operator: Operator) -> tuple[Count | None, Size | None]:
    """The channel's ``@count`` and ``@size``: in an OR, ``@count(n)`` needs n events, as ``@size(n)``."""
    n = raw.get("size")
    if n is None:
        if count is None or operator != "or":
            return count, None
        # The blog's OR(NOT @count(2) E1, E2).
        if count.mode != "ignore" or count.min != count.max or count.min < 1:
            msg = f"channel {raw['id']!r}: @count {count!r} in an OR group (use size)"
            raise CepError(msg)
        return None, Size(count.min)
    reset = raw.get("size_reset")
    if isinstance(n, list):  # the raw annotation, @size(n[, reset])
        if len(n) > 1:
            reset = n[1]
        n = n[0]
    return count, Size(int(n), None if reset is None else int(reset), _accumulator(raw.get("aggregator")))


def _channel(raw: ChannelSpec, restarts: Mapping[str, list[str]], operator: Operator = "and") -> Channel:
    cid = str(raw["id"])
    count, size = _size(raw, _count(raw), operator)
    t = raw.get("timer")
    timer = None
    if t is not None:
        timer = Timer(
            _ms(t["delay_ms"]), _optional_ms(t.get("period_ms")), _accumulator(raw.get("aggregator"))
        )
    collect: dict[str, str] = {}
    if raw.get("on_match"):
        m = _APPEND.match(str(raw["on_match"]))
        if m is None:
            msg = f"channel {cid!r}: unsupported on_match {raw['on_match']!r} (expected 'Var.append(expr)')"
            raise CepError(msg)
        collect[m.group(1)] = m.group(2)
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
        timeout_ms=_optional_ms(raw.get("timeout_ms")),
        vars=dict(raw.get("vars") or {}),
        binds=dict(raw.get("binds") or {}),
        after=_ids(raw.get("after")) + tuple(restarts.get(cid, [])),
        collect=collect,
        counts=counter_name(raw.get("counts")),
    )


def _aliased(raw: ChannelSpec, alias: Mapping[str, str]) -> ChannelSpec:
    """The channel with references to a nested group's member id replaced by the group's name."""

    def renamed(value: Ids) -> Ids:
        if isinstance(value, str):
            return alias.get(value, value)
        if isinstance(value, list):
            return [alias.get(v, v) for v in value]
        return value

    out = raw.copy()
    out.update(
        {
            "after": renamed(raw.get("after")),
            "stop_ids": renamed(raw.get("stop_ids")),
            "pause_ids": renamed(raw.get("pause_ids")),
            "resume_ids": renamed(raw.get("resume_ids")),
        }
    )
    return out


def _members(
    raw_channels: Sequence[ChannelSpec], subgroups: Mapping[str, SubgroupSpec], operator: Operator = "and"
) -> tuple[Channel | ReactionGroup, ...]:
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
    out: list[Channel | ReactionGroup] = []
    for ch in raw_channels:
        name = ch.get("group_result")
        if name:
            sub = subgroups[name]
            sub_exit = sub.get("exit") or {}
            out.append(
                ReactionGroup(
                    name,
                    sub.get("operator", "and"),
                    channels=_members(sub["channels"], subgroups, sub.get("operator", "and")),
                    timeout_ms=_optional_ms(sub.get("timeout_ms")),
                    timeout_channel=bool(sub.get("timeout_channel", False)),
                    exit=Exit(sub_exit.get("count"), sub_exit.get("size")),
                    where=sub.get("group_where"),
                    counts=counter_name(sub.get("counts")),
                )
            )
        else:
            out.append(_channel(ch, restarts, operator))
    return tuple(out)


def _initiator(raw: InitiatorSpec, template: bool) -> Initiator:
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


def build_pattern(case: Case) -> ReactionGroup | Receive:
    """The engine pattern for a case's ``pattern`` (kinds ``group`` and ``filter``)."""
    p = case["pattern"]
    name = str(case.get("id", "case")).rsplit("/", 1)[-1]
    if p["kind"] == "filter":
        count = p.get("count", -1)
        return Receive(name, p.get("type"), where=_with_verb(p.get("where"), p.get("verb")), count=count)
    initiator = None
    if template := p.get("template_channel"):
        initiator = _initiator(template, template=True)
    elif raw_initiator := p.get("initiator"):
        initiator = _initiator(raw_initiator, template=False)
    exit_ = p.get("exit") or {}
    return ReactionGroup(
        name,
        p.get("operator", "and"),
        channels=_members(p["channels"], p.get("subgroups") or {}, p.get("operator", "and")),
        timeout_ms=_optional_ms(p.get("timeout_ms")),
        timeout_channel=bool(p.get("timeout_channel", False)),
        initiator=initiator,
        instances=tuple(
            Instance(i["key"], i.get("created_t", 0), dict(i.get("vars") or {}))
            for i in p.get("instances") or ()
        ),
        exit=Exit(exit_.get("count"), exit_.get("size")),
        where=p.get("group_where"),
        constants=dict(p.get("constants") or {}),
        counts=DEFAULT_COUNTER if exit_counts(case) else None,
    )


def counter_name(value: str | bool | None) -> str | None:
    """A case's ``counts``: ``true`` is ``Count``, a string names the counter (prova.md 6)."""
    if value is True:
        return DEFAULT_COUNTER
    return value or None


def claimed_counters(case: Case) -> set[str]:
    """The counters some channel continuation (at any depth) increments."""
    p = case["pattern"]
    specs = [*(p.get("channels") or ())]
    for sub in (p.get("subgroups") or {}).values():
        specs += sub.get("channels") or ()
    return {name for ch in specs if (name := counter_name(ch.get("counts"))) is not None}


def exit_counts(case: Case) -> bool:
    """Whether the top exit's continuation counts ``Count``: ``exit.counts``, or by default when no
    channel claims ``Count`` (the exit continuation of a retry loop re-sends a query instead)."""
    p = case["pattern"]
    given = (p.get("exit") or {}).get("counts")
    if given is None:
        return DEFAULT_COUNTER not in claimed_counters(case)
    return bool(given)
