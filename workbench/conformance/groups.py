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
* Counters checked from ``assertions`` are the engine's (``Channel.counts``/``ReactionGroup.counts``,
  from the case's ``counts`` on channels at any depth, ``true`` = ``Count``, and on subgroups; the top
  exit counts ``Count`` unless ``exit.counts`` is false or, by default, a channel claims ``Count``),
  plus the top timeouts in ``Count`` when the group has a timeout channel and no separate timeout
  counter is asserted, ``TimeoutCount``/``CountTimeout``, ``Count_sum_of_totals`` (sum of the
  window accumulators' totals) and ``Latch`` (accepted events of a filter). Others
  (``numSolutions``, counters of auxiliary reactions over external state) are not checkable here
  and are skipped.
* A case with ``expected_idealised`` (not exact in time) is checked on its timeouts and counters.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Mapping, Sequence

from workbench.backends.cases import run_case_inputs
from workbench.conformance.case import Case
from workbench.conformance.prova_patterns import build_pattern, claimed_counters, exit_counts
from workbench.conformance.runner import RunOptions, compare_detections, pair_up, through_language
from workbench.engine.detection import Detection, Reaction
from workbench.engine.events import Event, make_event
from workbench.engine.expr import compile_expr
from workbench.engine.outputs import tally_counters
from workbench.engine.reactions import DEFAULT_COUNTER
from workbench.engine.reactions.matcher import TreeNode
from workbench.engine.runtime import Engine, RunResult

__all__ = ["build_pattern", "case_events", "run_case"]

_TIMEOUT_COUNTERS = ("TimeoutCount", "CountTimeout")


def _generated(source: str) -> list[object]:
    value = compile_expr(source, data=True)({})
    if not isinstance(value, Iterable):
        msg = f"{type(value).__name__!r} object is not iterable"
        raise TypeError(msg)
    return list(value)


def case_events(case: Case) -> list[Mapping[str, object]]:
    """The case's events (explicit, or from ``events_generator`` via the restricted evaluator)."""
    events: list[Mapping[str, object]] = list(case.get("events") or [])
    if case.get("events_generator"):
        events += _mappings(_generated(case["events_generator"]))
    return events


def _expected(case: Case) -> list[Mapping[str, object]]:
    out: list[Mapping[str, object]] = list(case.get("expected") or [])
    if case.get("expected_generator"):
        out += _mappings(_generated(case["expected_generator"]))
    return out


def _mappings(items: list[object]) -> list[Mapping[str, object]]:
    """Generated events or detections: each a mapping (``{'t': ..., 'type': ...}``)."""
    for item in items:
        if not isinstance(item, Mapping):
            msg = f"a generated item is a dict, not a {type(item).__name__}"
            raise TypeError(msg)
    return [item for item in items if isinstance(item, Mapping)]


def _canon(value: object) -> object:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, Mapping):
        return {str(k): _canon(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    return value


def _tree(items: Sequence[Event | TreeNode]) -> list[object]:
    out: list[object] = []
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


def _as_case(d: Detection, instance_key: bool) -> dict[str, object]:
    out: dict[str, object] = {
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


def _agrees(exp: object, act: object) -> bool:
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
    expected: Sequence[Mapping[str, object]],
    actual: Sequence[Mapping[str, object]],
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
    missing, unused = pair_up(expected, actual, _agrees)
    if missing:
        lost = [json.dumps(e, sort_keys=True) for e in missing]
        shown = [json.dumps(_canon({k: a.get(k) for k in expected[0]}), sort_keys=True) for a in unused]
        return [f"{label}: extras differ: missing {', '.join(lost)}; candidates {', '.join(shown)}"]
    return []


def _counters(
    case: Case, top: list[Detection], nested: list[Detection], reactions: list[Reaction]
) -> dict[str, int]:
    """The checkable counters: the engine's (``counts`` on channels, nested groups and the top exit,
    set by :func:`build_pattern`) plus the timeout counters and the accumulator totals."""
    p = case["pattern"]
    asserted = case.get("assertions") or {}
    matches = [d for d in top if d.kind == "match"]
    timeouts = [d for d in top if d.kind == "timeout"]
    if p.get("kind") == "filter":
        return {name: len(matches) for name in asserted}
    out = dict.fromkeys(claimed_counters(case), 0)
    out[DEFAULT_COUNTER] = 0
    out.update(tally_counters(reactions, [*top, *nested]))
    # the timeout channel's continuation counts Count too when no separate timeout counter is asserted
    if exit_counts(case) and p.get("timeout_channel") and not any(k in asserted for k in _TIMEOUT_COUNTERS):
        out[DEFAULT_COUNTER] += len(timeouts)
    for name in _TIMEOUT_COUNTERS:
        out[name] = len(timeouts)
    totals = 0
    for d in matches:
        if "aggregate" in d.extra:
            agg = d.extra["aggregate"]
            totals += sum(v if isinstance(v, int) else len(v) for v in agg.values())
    out["Count_sum_of_totals"] = totals
    return out


def run_case(case: Case, options: RunOptions) -> list[str]:
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


def _event(raw: Mapping[str, object]) -> dict[str, object]:
    return {"type": raw["type"], "time": raw["t"], "key": raw.get("key"), "fields": raw.get("fields") or {}}


def _run_with_registry(case: Case, engine: Engine, horizon: int | float) -> None:
    """Simulate a service registry around the engine (``pattern.environment`` starting ``registry:``).

    The registry remembers every ``update`` event's ``service``; a query for a known service is
    answered with a ``result`` event (field ``service``) on the asking instance's key, 1 ms later.
    Each start-up instance queries its service ``S`` once when it is created, and again each time
    it emits (the exit continuation re-sends the query). Time advances 1 ms at a time: events at
    ``t`` first, then the engine's timers at ``t``.
    """
    p = case["pattern"]
    asking = {
        inst["key"]: (inst.get("created_t", 0), (inst.get("vars") or {}).get("S"))
        for inst in p.get("instances") or ()
    }
    external = [_event(raw) for raw in case_events(case)]
    read = [make_event(raw) for raw in external]  # typed reads of the same events
    known: set[object] = set()
    pending: dict[int | float, list[dict[str, object]]] = {}

    def query(key: Hashable, service: object, t: int | float) -> None:
        if service in known:
            pending.setdefault(t + 1, []).append(
                {"type": "result", "time": t + 1, "key": key, "fields": {"service": service}}
            )

    t: int | float = 0
    position = 0
    while t <= horizon:
        while position < len(external) and read[position].time <= t:
            if read[position].type == "update":
                known.add(read[position].fields.get("service"))
            engine.process(external[position])
            position += 1
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


def _not_applicable(case: Case) -> list[str]:
    diffs = []
    if case.get("events") or case.get("events_generator"):
        diffs.append("a not_applicable case must not carry events")
    if case.get("expected") or case.get("expected_timeouts"):
        diffs.append("a not_applicable case must not expect detections")
    return diffs
