"""Conformance adapter for ``pattern.kind == "sequence"`` (Flink CEP cases, Prova sequences).

The case's pattern is built with :mod:`workbench.engine.nfa` objects (and passed through
:func:`~workbench.conformance.runner.through_language`), then run:

* cases with an ``operator`` section (Flink's event-time ``CepOperator``: watermarks, late events,
  comparator) drive the :class:`~workbench.engine.runtime.Engine`: events are buffered by event
  time and released only by the case's watermarks (``advance_time``), equal-time events sorted by
  the comparator (the engine's ``order_by``);
* the others (Flink's NFA-level tests) use :class:`~workbench.testing.NFATestHarness`: events
  in input order, time advanced to each event's ``t`` right before it, no timers.

Everything the case states is compared: matches (multiset or ordered), ``t_emit``, ``by_stage``,
``expected_timeouts``, ``expected_late``, ``expect_error``, ``final_advance_ms``.

With ``--backend`` other than ``local`` the case runs as an input script on that backend
(:func:`backend_script`, :func:`~workbench.backends.cases.run_case_inputs`) and is compared the
same way. A backend runs the event-time runtime, so an NFA-harness case is replayed only when the
runtime gives the harness's results by construction: events in time order and no time constraint
in the pattern (no timers at all). Other harness cases FAIL with the reason.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from workbench.backends.base import AdvanceTime, Input
from workbench.backends.cases import BackendJobError, run_case_inputs
from workbench.conformance.case import Case, OperatorSpec, PatternSpec, RawEvent, StageSpec
from workbench.conformance.runner import RunOptions, compare_detections, through_language
from workbench.engine.clock import stamp, tie_order
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.expr import compile_expr
from workbench.engine.expr.values import COMPARE
from workbench.engine.families import compile_matcher
from workbench.engine.matcher import Matcher
from workbench.engine.nfa import (
    AnyOf,
    Condition,
    Contiguity,
    Quantifier,
    SequencePattern,
    SkipStrategy,
    Stage,
)
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.runtime import Engine
from workbench.errors import CepError
from workbench.testing import NFATestHarness

__all__ = ["BackendScript", "backend_script", "build_pattern", "run_case"]

LONG_MAX = 9223372036854775807


def _condition(raw: str | list[str] | None) -> Condition | None:
    if raw is None:
        return None
    if isinstance(raw, list):
        return AnyOf(tuple(str(x) for x in raw))
    return str(raw)


def _stage(raw: StageSpec) -> Stage:
    q = raw.get("quantifier") or {}
    quant = Quantifier(
        min=int(q.get("min", 1)),
        max=None if (top := q.get("max", 1)) is None else int(top),
        optional=bool(q.get("optional", False)),
        greedy=bool(q.get("greedy", False)),
        inner=Contiguity(q.get("inner_contiguity") or "relaxed"),
        window_ms=q.get("window_ms"),
    )
    return Stage(
        name=str(raw["name"]),
        where=_condition(raw.get("where")),
        contiguity=Contiguity(raw.get("contiguity") or "relaxed"),
        negated=bool(raw.get("negated", False)),
        quantifier=quant,
        until=_condition(raw.get("until")),
        within_prev_ms=raw.get("within_prev_ms"),
    )


def build_pattern(
    spec: PatternSpec, name: str = "sequence", *, emit_timeouts: bool = True, flink_order: bool = True
) -> SequencePattern:
    """The :class:`SequencePattern` a case's ``pattern`` object describes.

    ``flink_order`` is on by default: the cases record Flink's exact emission order and
    skip-strategy survivors among matches that share their first event.
    """
    stages = []
    for i, raw in enumerate(spec["stages"]):
        try:
            stages.append(_stage(raw))
        except (KeyError, TypeError, ValueError, AttributeError) as err:  # why: a malformed case file
            what = f"no {err}" if isinstance(err, KeyError) else str(err)
            msg = f"pattern.stages[{i}]: {what}"
            raise CepError(msg) from None
    skip = SkipStrategy.parse(
        str(spec.get("skip") or "no_skip"), throw_on_miss=bool(spec.get("skip_throw_on_miss"))
    )
    return SequencePattern(
        name=name,
        stages=tuple(stages),
        within_ms=spec.get("within_ms"),
        skip=skip,
        flink_order=flink_order,
        emit_timeouts=emit_timeouts,
    )


def run_case(case: Case, options: RunOptions) -> list[str]:
    """Run one sequence case; return the differences from its expectations (empty = pass)."""
    expect_error = case.get("expect_error")
    try:
        # Prova's single-shot follow-up (rcvMsg with @timeout) ends silently when it times out; Flink
        # reports timed-out partial matches (the cases that check them enable the timeout handler).
        prova = str(case.get("id", "")).startswith("prova/")
        pattern = through_language(
            build_pattern(
                case["pattern"], _name(case), emit_timeouts=not prova, flink_order=options.flink_order
            ),
            options,
        )
        matcher = compile_matcher(pattern)
    except CepError as err:
        if expect_error:
            return []
        return [f"pattern rejected: {type(err).__name__}: {err}"]
    raw_events = case.get("events", [])
    try:
        if options.backend != "local":
            script = backend_script(case, pattern)
            if isinstance(script, str):
                return [f"not reproducible on backend {options.backend!r}: {script}"]
            result = run_case_inputs(
                options.backend,
                [matcher],
                script.inputs,
                out_of_orderness=script.out_of_orderness,
                finish=script.finish,
            )
            detections, late = result.detections, result.late
        elif "operator" in case:
            detections, late = _run_operator(matcher, raw_events, case["operator"])
        else:
            detections, late = _run_harness(matcher, raw_events, case.get("final_advance_ms")), []
    except CepError as err:
        if expect_error and not (isinstance(err, BackendJobError) and err.engine_error is None):
            return []
        return [f"run failed: {type(err).__name__}: {err}"]
    if expect_error:
        return [f"expected an error ({expect_error}), but the pattern compiled and ran"]
    return _compare(case, list(detections), late)


def _name(case: Case) -> str:
    text = str(case.get("id", "sequence")).rsplit("/", 1)[-1]
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in text) or "sequence"


def _events(raw_events: Sequence[RawEvent]) -> list[Event]:
    out = []
    for i, raw in enumerate(raw_events):
        out.append(stamp(raw, i))
    return out


def _run_harness(
    matcher: Matcher, raw_events: Sequence[RawEvent], final: int | float | None
) -> list[Detection]:
    if not isinstance(matcher, NFAMatcher):
        msg = f"a sequence pattern compiled to a {type(matcher).__name__}, not an NFAMatcher"
        raise CepError(msg)
    harness = NFATestHarness(matcher)
    for event in _events(raw_events):
        harness.feed(event)
    if final is not None:
        harness.advance(final)
    return harness.detections


def _run_operator(
    matcher: Matcher, raw_events: Sequence[RawEvent], op: OperatorSpec
) -> tuple[list[Detection], list[Event]]:
    if op.get("mode", "event_time") != "event_time":
        msg = f"operator mode {op.get('mode')!r} is not supported by this adapter"
        raise CepError(msg)
    events = _events(raw_events)
    marks: dict[int, list[float]] = {}
    for w in op.get("watermarks", []):
        marks.setdefault(int(w["after_event"]), []).append(w["wm"])
    engine = Engine([matcher], out_of_orderness=math.inf, order_by=_comparator(op.get("comparator")))
    for wm in marks.get(-1, []):
        engine.advance_time(wm)
    for slot, event in enumerate(events):
        engine.process(event)
        for wm in marks.get(slot, []):
            engine.advance_time(wm)
    if op.get("final_watermark") == "max":
        engine.advance_time(LONG_MAX)
    return engine.detections, engine.late


@dataclass(frozen=True, slots=True)
class BackendScript:
    """A case as a backend run: the input script and the run's options."""

    inputs: list[Input]
    out_of_orderness: int | float
    finish: bool


def backend_script(case: Case, pattern: SequencePattern) -> BackendScript | str:
    """The case as a backend input script, or why a backend cannot reproduce it.

    Operator cases: the comparator order, the watermarks as :class:`AdvanceTime` marks, unbounded
    out-of-orderness and no final flush (as :func:`_run_operator`). Harness cases: the events in
    input order, then a final flush; this equals the harness only when the events are in time order
    (the runtime processes event-time order) and the pattern has no time constraint (the harness
    fires no timers and passes time only with events, the runtime fires timers at deadlines).
    """
    events = _events(case.get("events", []))
    op = case.get("operator")
    if op is not None:
        if op.get("mode", "event_time") != "event_time":
            return f"operator mode {op.get('mode')!r} is not supported by this adapter"
        marks: dict[int, list[float]] = {}
        for w in op.get("watermarks", []):
            marks.setdefault(int(w["after_event"]), []).append(w["wm"])
        inputs: list[Input] = [AdvanceTime(w) for w in marks.get(-1, [])]
        for slot, index in enumerate(_comparator_order(events, marks, op.get("comparator"))):
            inputs.append(events[index])
            inputs.extend(AdvanceTime(w) for w in marks.get(slot, []))
        if op.get("final_watermark") == "max":
            inputs.append(AdvanceTime(LONG_MAX))
        return BackendScript(inputs, math.inf, finish=False)
    nested = [s.name for s in pattern.stages if not isinstance(s, Stage)]
    if nested:
        return f"NFA-harness case with a group stage ({nested[0]!r}): its time constraints are not checked"
    timed = [
        s.name
        for s in pattern.stages
        if isinstance(s, Stage) and (s.within_prev_ms is not None or s.quantifier.window_ms is not None)
    ]
    if pattern.within_ms is not None or timed:
        where = "the pattern's within" if pattern.within_ms is not None else f"stage {timed[0]!r}"
        return (
            f"NFA-harness case with a time window ({where}): the harness fires no timers and passes "
            "time only with events, a backend's runtime fires window timers at their deadlines"
        )
    for a, b in itertools.pairwise(events):
        if b.time < a.time:
            return (
                f"NFA-harness case with events out of time order (event #{b.seq} at t={b.time} after "
                f"t={a.time}): the harness processes input order, a backend's runtime event-time order"
            )
    return BackendScript(list(events), math.inf, finish=True)


def _comparator(comparator: str | None) -> Callable[[Event], object] | None:
    """The case's comparator (an expression over ``e``) as the engine's ``order_by`` key."""
    if not comparator:
        return None
    key = compile_expr(comparator)
    return lambda e: _Ascending(key({"e": e}))


def _comparator_order(
    events: list[Event], marks: Mapping[int, list[float]], comparator: str | None
) -> list[int]:
    """Arrival order with equal-time, non-late events permuted into comparator order (backends).

    A backend takes no ``order_by``; the engine's tie order (:func:`~workbench.engine.clock.tie_order`,
    what the local run uses) is applied here instead. All non-late events of one timestamp are
    released together by a watermark, so filling their arrival slots in that order (stable) gives
    the backend's runtime the engine's processing order.
    """
    order = list(range(len(events)))
    rank = tie_order(_comparator(comparator))
    if rank is None:
        return order
    wm = -math.inf
    for w in marks.get(-1, []):
        wm = max(wm, w)
    slots: dict[int | float, list[int]] = {}
    for i, e in enumerate(events):
        if e.time > wm:
            slots.setdefault(e.time, []).append(i)
        for w in marks.get(i, []):
            wm = max(wm, w)
    for idx in slots.values():
        ranked = sorted(idx, key=lambda i: rank(events[i]))
        for slot, i in zip(idx, ranked, strict=True):
            order[slot] = i
    return order


class _Ascending:
    """A comparator's value, ordered by Python's ``<`` (a TypeError for values it cannot order)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __lt__(self, other: _Ascending) -> bool:
        return bool(COMPARE["<"](self.value, other.value))


def _as_case(d: Detection, with_stages: bool) -> dict[str, object]:
    item: dict[str, object] = {
        "events": [e.seq for e in d.events],
        "negated": [],
        "t_emit": d.time,
        "kind": d.kind,
    }
    if with_stages:
        by: dict[str, list[int]] = {}
        for stage, e in zip(d.channels, d.events, strict=True):
            by.setdefault(stage, []).append(e.seq)
        item["by_stage"] = by
    return item


def _compare(case: Case, detections: list[Detection], late: list[Event]) -> list[str]:
    expected = list(case.get("expected", []))
    with_stages = any("by_stage" in x for x in expected)
    matches = [_as_case(d, with_stages) for d in detections if d.kind == "match"]
    exp = [{"kind": "match", **x} for x in expected]
    diffs = compare_detections(exp, matches, order_matters=bool(case.get("order_matters")), label="matches")
    if "expected_timeouts" in case:
        staged = any("by_stage" in x for x in case["expected_timeouts"])  # FORMAT.md: compared when given
        timeouts = [_as_case(d, staged) for d in detections if d.kind == "timeout"]
        exp_to = [{"kind": "timeout", **x} for x in case["expected_timeouts"]]
        diffs += compare_detections(exp_to, timeouts, label="timeouts")
    if "expected_late" in case:
        got = [e.seq for e in late]
        if got != list(case["expected_late"]):
            diffs.append(f"late events differ: expected {case['expected_late']}, got {got}")
    return diffs
