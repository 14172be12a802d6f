"""Conformance cases as backend runs: the patterns, the input script and the options of each case.

The adapters (``workbench.conformance.groups`` / ``sequences``) drive the engine directly; here the
same driving is written as a :class:`~workbench.backends.base.Backend` script so that any backend
can replay it:

* Prova cases (``group``/``filter``): events in order, ``finish(until=horizon_t)``, as the groups
  adapter does. Cases with a simulated ``environment`` (a registry answering queries with new
  events) need a feedback loop from detections to input and are left out.
* Flink ``CepOperator`` cases (``operator``): the case's comparator order, its watermarks as
  :class:`AdvanceTime` marks, ``out_of_orderness=inf`` and no final flush, as the sequences adapter
  does.
* Flink NFA-level cases: the sequences adapter checks them on its NFA harness (no runtime at all);
  here their events are replayed through the runtime, in order, with a final flush. That checks
  backend identity on the same patterns, not the case's expectations.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.backends.base import AdvanceTime, Input
from workbench.conformance import groups, sequences
from workbench.engine.clock import stamp
from workbench.engine.families import compile_matcher
from workbench.engine.matcher import Matcher
from workbench.errors import CepError

CASES = Path(__file__).resolve().parents[1] / "data" / "conformance"
LONG_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class CaseRun:
    """One case as a backend run."""

    case_id: str
    path: Path
    matchers: list[Matcher]
    inputs: list[Input]
    options: dict[str, Any] = field(default_factory=dict)


def _group_run(case: Mapping[str, Any], path: Path) -> CaseRun | None:
    if case["pattern"].get("kind") == "not_applicable" or case["pattern"].get("environment"):
        return None
    matcher = compile_matcher(groups.build_pattern(case))
    inputs: list[Input] = [
        {"type": raw["type"], "time": raw["t"], "key": raw.get("key"), "fields": raw.get("fields") or {}}
        for raw in groups.case_events(case)
    ]
    return CaseRun(str(case["id"]), path, [matcher], inputs, {"until": case.get("horizon_t")})


def _sequence_run(case: Mapping[str, Any], path: Path) -> CaseRun | None:
    prova = str(case.get("id", "")).startswith("prova/")
    try:
        matcher = compile_matcher(
            sequences.build_pattern(case["pattern"], "sequence", emit_timeouts=not prova)
        )
    except CepError:
        return None  # the case expects the pattern to be rejected
    events = [stamp(raw, i) for i, raw in enumerate(case.get("events", []))]
    op = case.get("operator")
    if op is None:
        return CaseRun(str(case["id"]), path, [matcher], list(events))
    if op.get("mode", "event_time") != "event_time":
        return None
    marks: dict[int, list[Any]] = {}
    for w in op.get("watermarks", []):
        marks.setdefault(int(w["after_event"]), []).append(w["wm"])
    order = sequences._comparator_order(events, marks, op.get("comparator"))
    inputs: list[Input] = [AdvanceTime(w) for w in marks.get(-1, [])]
    for slot, index in enumerate(order):
        inputs.append(events[index])
        inputs.extend(AdvanceTime(w) for w in marks.get(slot, []))
    if op.get("final_watermark") == "max":
        inputs.append(AdvanceTime(LONG_MAX))
    return CaseRun(str(case["id"]), path, [matcher], inputs, {"out_of_orderness": math.inf, "finish": False})


def case_runs(root: Path = CASES, *, max_inputs: int | None = None) -> Iterator[CaseRun]:
    """Every conformance case that can be replayed as a backend run, sorted by path.

    ``max_inputs`` leaves out the generated load cases (``cep005`` has 750,000 events).
    """
    for path in sorted(root.rglob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        kind = case["pattern"].get("kind")
        run = _sequence_run(case, path) if kind == "sequence" else _group_run(case, path)
        if run is not None and (max_inputs is None or len(run.inputs) <= max_inputs):
            yield run
