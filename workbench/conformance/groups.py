"""Conformance adapter for Prova cases: pattern kinds ``group``, ``filter`` and ``not_applicable``.

The case's pattern (``conformance/FORMAT.md`` plus the Prova keys of ``prova.md`` section 6) is
rebuilt with the engine's own objects (:mod:`workbench.engine.reactions`), passed through
:func:`~workbench.conformance.runner.through_language`, run over the case's events, and compared
with ``expected`` (documented semantics, never ``observed_head``), ``expected_timeouts``,
``expected_subgroup`` and the checkable JUnit counters in ``assertions``.

Conventions:

* ``"$Name"`` in a ``match`` is the bound variable ``Name``; other values are literals.
* A ``verb`` (initiator or channel) is checked against the event's ``verb`` field when the event
  records one (Prova's message verb; some cases leave it out of the events).
* ``horizon_t``: the engine is flushed with ``finish(until=horizon_t)`` and detections emitted after
  the horizon are not part of the comparison (the JUnit test stopped observing).
* ``on_match: "Var.append(expr)"`` becomes ``Channel.collect``; ``on_violation: "restart_from:X"``
  makes channel ``X`` also follow this channel (``after``).
* Counters checked from ``assertions``: ``Count`` (reactions of channels marked ``counts: "Count"``,
  plus matches of nested groups marked ``counts``, plus the top exit's matches -- and timeouts when
  the group has a timeout channel and no separate timeout counter is asserted -- unless
  ``exit.counts`` is false or, by default, a channel claims ``Count``),
  ``TimeoutCount``/``CountTimeout``, ``Count_sum_of_totals`` (sum of the
  window accumulators' totals), ``Latch`` (accepted events of a filter) and counters named by a
  channel's ``counts`` (that channel's reactions). Others (``numSolutions``, counters of auxiliary
  reactions over external state) are not checkable here and are skipped.
* A case with ``expected_idealised`` (not exact in time) is checked on its timeouts and counters.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.backends.cases import run_case_inputs
from workbench.conformance.runner import RunOptions, compare_detections, through_language
from workbench.engine.detection import Detection, Reaction
from workbench.engine.events import Event
from workbench.engine.expr import compile_expr
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
from workbench.engine.reactions.matcher import TreeNode
from workbench.engine.runtime import Engine, RunResult
from workbench.errors import CepError

__all__ = ["build_pattern", "case_events", "run_case"]

_APPEND = re.compile(r"^\s*([A-Za-z_]\w*)\.append\((.*)\)\s*$")
_TIMEOUT_COUNTERS = ("TimeoutCount", "CountTimeout")


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


def _generated(source: str) -> list[Any]:
    value = compile_expr(source, data=True)({})
    return list(value)


def case_events(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The case's events (explicit, or from ``events_generator`` via the restricted evaluator)."""
    events = list(case.get("events") or [])
    if case.get("events_generator"):
        events += _generated(case["events_generator"])
    return events


def _expected(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = list(case.get("expected") or [])
    if case.get("expected_generator"):
        out += _generated(case["expected_generator"])
    return out


def _canon(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, Mapping):
        return {str(k): _canon(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    return value


def _tree(items: Sequence[Event | TreeNode]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, TreeNode):
            out.append(
                {
                    "group": item.group,
                    "exit": item.exit,
                    "events": [e.seq for e in item.events],
                    "negated": [{"absent_channel": n} for n in item.negated],
                }
            )
        else:
            out.append(item.seq)
    return out


def _as_case(d: Detection, instance_key: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "events": [e.seq for e in d.events],
        "negated": [{"absent_channel": n} for n in d.negated],
        "t_emit": d.time,
        "kind": d.kind,
        "exit": d.extra.get("exit"),
        "group": d.extra.get("group"),
        "initiator": d.initiator.seq if d.initiator is not None else None,
        "tree": _tree(d.extra.get("tree", ())),
    }
    if instance_key:
        out["instance"] = d.key
    if "aggregate" in d.extra:
        out["aggregate"] = d.extra["aggregate"]
    return out


#: Keys of an expected detection that describe what the exit continuation computed from it
#: (``exit_result``, prova.md 6): continuation code is not part of the pattern, so not compared.
_NOT_COMPARED = frozenset({"exit_result"})


def _agrees(exp: Any, act: Any) -> bool:
    """``exp`` agrees with ``act`` on every key ``exp`` gives (recursively for dicts in lists)."""
    if isinstance(exp, Mapping):
        if not isinstance(act, Mapping):
            return False
        act = {str(k): v for k, v in act.items()}
        return all(
            str(k) in _NOT_COMPARED or (str(k) in act and _agrees(v, act[str(k)])) for k, v in exp.items()
        )
    if isinstance(exp, list):
        return (
            isinstance(act, list)
            and len(exp) == len(act)
            and all(_agrees(e, a) for e, a in zip(exp, act, strict=True))
        )
    return bool(json.dumps(_canon(exp), sort_keys=True) == json.dumps(_canon(act), sort_keys=True))


def _compare_all(
    expected: Sequence[Mapping[str, Any]],
    actual: Sequence[Mapping[str, Any]],
    label: str,
    order_matters: bool = False,
) -> list[str]:
    diffs = compare_detections(expected, actual, label=label, order_matters=order_matters)
    if diffs:
        return diffs
    if order_matters:
        bad = [i for i, (e, a) in enumerate(zip(expected, actual, strict=True)) if not _agrees(e, a)]
        return [
            f"{label} #{i}: extras differ: expected {json.dumps(expected[i], sort_keys=True)}" for i in bad
        ]
    unused = list(actual)
    missing = []
    for exp in expected:
        for i, act in enumerate(unused):
            if _agrees(exp, act):
                del unused[i]
                break
        else:
            missing.append(json.dumps(exp, sort_keys=True))
    if missing:
        shown = [json.dumps(_canon({k: a.get(k) for k in expected[0]}), sort_keys=True) for a in unused]
        return [f"{label}: extras differ: missing {', '.join(missing)}; candidates {', '.join(shown)}"]
    return []


def _counters(
    case: Mapping[str, Any], top: list[Detection], nested: list[Detection], reactions: list[Reaction]
) -> dict[str, int]:
    p = case["pattern"]
    asserted = case.get("assertions") or {}
    matches = [d for d in top if d.kind == "match"]
    timeouts = [d for d in top if d.kind == "timeout"]
    out: dict[str, int] = {}
    claimed: set[str] = set()
    for ch in p.get("channels") or ():
        name = ch.get("counts")
        if isinstance(name, str):
            claimed.add(name)
            out[name] = out.get(name, 0) + sum(
                1 for r in reactions if r.channel == ch["id"] and r.status not in ("paused",)
            )
    if p.get("kind") == "filter":
        for name in asserted:
            out[name] = len(matches)
        return out
    # Count = the counting channel continuations + the counted nested exits + the top exit. The top
    # exit counts unless ``exit.counts`` says otherwise; by default it does not when a channel
    # claims Count (the exit continuation of a retry loop re-sends a query instead).
    exit_counts = (p.get("exit") or {}).get("counts")
    if exit_counts is None:
        exit_counts = "Count" not in claimed
    counted = {n for n, sg in (p.get("subgroups") or {}).items() if sg.get("counts")}
    count = out.get("Count", 0)
    count += sum(1 for d in nested if d.kind == "match" and d.extra.get("group") in counted)
    if exit_counts:
        count += len(matches)
        if p.get("timeout_channel") and not any(k in asserted for k in _TIMEOUT_COUNTERS):
            count += len(timeouts)
    out["Count"] = count
    for name in _TIMEOUT_COUNTERS:
        out[name] = len(timeouts)
    totals = 0
    for d in matches:
        if "aggregate" in d.extra:
            agg = d.extra["aggregate"]
            totals += sum(v if isinstance(v, int) else len(v) for v in agg.values())
    out["Count_sum_of_totals"] = totals
    return out


def run_case(case: Mapping[str, Any], options: RunOptions) -> list[str]:
    """Run one Prova case; return the differences (empty = pass)."""
    kind = case["pattern"].get("kind")
    if kind == "not_applicable":
        return _not_applicable(case)
    pattern = through_language(build_pattern(case), options)
    engine = Engine([pattern])
    records: Engine | RunResult = engine
    horizon = case.get("horizon_t")
    environment = str(case["pattern"].get("environment") or "")
    if environment and options.backend != "local":
        why = "answers queries with new events, a feedback loop that an input script cannot express"
        return [f"not reproducible on backend {options.backend!r}: environment {environment!r} {why}"]
    if environment:
        if not environment.startswith("registry:") or horizon is None:
            return [f"unsupported environment {environment!r}"]
        _run_with_registry(case, engine, horizon)
    elif options.backend != "local":
        events = [_event(raw) for raw in case_events(case)]
        records = run_case_inputs(options.backend, [pattern], events, until=horizon)
        if records.late:
            return [f"event {records.late[0].seq} was late: events must be in time order"]
    else:
        for i, raw in enumerate(case_events(case)):
            engine.process(_event(raw))
            if engine.late_count:
                return [f"event {i} was late: events must be in time order"]
        engine.finish(until=horizon)
    detections = [d for d in records.detections if horizon is None or d.time <= horizon]
    top = [d for d in detections if not d.extra.get("nested")]
    nested = [d for d in detections if d.extra.get("nested")]
    with_key = bool(case["pattern"].get("instances"))
    diffs: list[str] = []
    if not case.get("expected_idealised"):
        diffs += _compare_all(
            _expected(case),
            [_as_case(d, with_key) for d in top if d.kind == "match"],
            "detections",
            order_matters=bool(case.get("order_matters")),
        )
    diffs += _compare_all(
        case.get("expected_timeouts") or [],
        [_as_case(d, with_key) for d in top if d.kind == "timeout"],
        "timeouts",
    )
    if "expected_subgroup" in case:
        diffs += _compare_all(
            case["expected_subgroup"], [_as_case(d, with_key) for d in nested], "subgroup detections"
        )
    reactions = [r for r in records.reactions if horizon is None or r.time <= horizon]
    counters = _counters(case, top, nested, reactions)
    for name, value in (case.get("assertions") or {}).items():
        if name in counters and counters[name] != value:
            diffs.append(f"counter {name}: expected {value}, got {counters[name]}")
    return diffs


def _event(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": raw["type"], "time": raw["t"], "key": raw.get("key"), "fields": raw.get("fields") or {}}


def _run_with_registry(case: Mapping[str, Any], engine: Engine, horizon: int | float) -> None:
    """Simulate a service registry around the engine (``pattern.environment`` starting ``registry:``).

    The registry remembers every ``update`` event's ``service``; a query for a known service is
    answered with a ``result`` event (field ``service``) on the asking instance's key, 1 ms later.
    Each start-up instance queries its service ``S`` once when it is created, and again each time
    it emits (the exit continuation re-sends the query). Time advances 1 ms at a time: events at
    ``t`` first, then the engine's timers at ``t``.
    """
    p = case["pattern"]
    asking = {
        inst["key"]: (inst.get("created_t", 0), (inst.get("vars") or {}).get("S")) for inst in p["instances"]
    }
    external = [_event(raw) for raw in case_events(case)]
    known: set[Any] = set()
    pending: dict[int | float, list[dict[str, Any]]] = {}

    def query(key: Any, service: Any, t: int | float) -> None:
        if service in known:
            pending.setdefault(t + 1, []).append(
                {"type": "result", "time": t + 1, "key": key, "fields": {"service": service}}
            )

    t: int | float = 0
    position = 0
    while t <= horizon:
        while position < len(external) and external[position]["time"] <= t:
            event = external[position]
            position += 1
            if event["type"] == "update":
                known.add(event["fields"].get("service"))
            engine.process(event)
        for event in pending.pop(t, []):
            engine.process(event)
        for key, (created, service) in asking.items():
            if created == t:
                query(key, service, t)
        seen = len(engine.detections)
        engine.advance_time(t)
        for d in engine.detections[seen:]:
            if d.kind == "match" and d.key in asking:
                query(d.key, asking[d.key][1], t)
        t += 1


def _not_applicable(case: Mapping[str, Any]) -> list[str]:
    diffs = []
    if case.get("events") or case.get("events_generator"):
        diffs.append("a not_applicable case must not carry events")
    if case.get("expected") or case.get("expected_timeouts"):
        diffs.append("a not_applicable case must not expect detections")
    return diffs
