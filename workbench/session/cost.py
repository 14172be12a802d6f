"""The cost view: how many partial matches and instances a pattern keeps alive, and why it grows.

:func:`measure_cost` replays events through an engine and samples its per-key state: for a
sequence, the live partial matches by the stage each one waits for; for a reaction group, the
live instances and their live channels. :class:`CostReport` gives them as a DataFrame (one row per
sample time, pattern, key and stage or channel) and names, in :attr:`CostReport.warnings`, the
construct that makes a growing pattern grow: ``followed by any``, ``allow combinations``, a
missing ``within`` (sequences) or a group without ``@timeout`` whose instances never end.

The figure is :func:`workbench.widgets.cost.cost_figure`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.matcher import Pattern
from workbench.engine.nfa.pattern import Contiguity, SequencePattern
from workbench.engine.runtime import Engine

__all__ = ["COLUMNS", "CostReport", "growth_warnings", "live_by_element", "measure_cost"]

COLUMNS = ["time", "pattern", "key", "element", "live"]

#: the live count (of one pattern, all keys) at which a still-rising curve earns a warning
GROWTH_FLOOR = 20


@dataclass
class CostReport:
    """The samples of one replay and the warnings they earned.

    Attributes:
        samples: ``(time, pattern, key, element, live)`` rows; ``element`` is the stage a partial
            match waits for, or the group's channel (``(instance)`` counts whole instances).
        warnings: one line per pattern whose live count kept growing, naming the likely cause.
        detections: the detections of the replay.
    """

    samples: list[tuple[float, str, Hashable, str, int]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    detections: list[Detection] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        """The samples as a DataFrame (columns :data:`COLUMNS`)."""
        return pd.DataFrame(self.samples, columns=COLUMNS)

    def totals(self) -> pd.DataFrame:
        """Live partial matches / instances per pattern over time (all keys, all elements)."""
        df = self.frame()
        df = df[df["element"] != "(instance)"] if not df.empty else df
        return df.groupby(["time", "pattern"])["live"].sum().reset_index()

    def peaks(self) -> pd.DataFrame:
        """The peak live count per pattern, key and element, highest first."""
        df = self.frame()
        peak = df.groupby(["pattern", "key", "element"])["live"].max().reset_index()
        return peak.sort_values("live", ascending=False, ignore_index=True)


def live_by_element(engine: Engine, name: str, key: Hashable) -> dict[str, int]:
    """Live partial matches by the stage they wait for (sequences), or live instances and their
    channels (groups), of pattern ``name`` for ``key``; ``{}`` for a state of another shape."""
    matcher = next(m for m in engine.matchers if m.name == name)
    state = engine.state_of(name, key)
    if state is None:
        return {}
    out: dict[str, int] = {}
    if hasattr(state, "instances"):  # a reaction group: instances, each with its live channels
        members = getattr(getattr(matcher, "group", None), "members", None)
        for inst in state.instances.values():
            if inst.ended:
                continue
            out["(instance)"] = out.get("(instance)", 0) + 1
            for ch in inst.channels.values():
                label = _member_name(members, ch.member)
                out[label] = out.get(label, 0) + 1
        return out
    plan = getattr(matcher, "plan", None)
    for run, waits in _runs(state, plan):
        out[waits] = out.get(waits, 0) + 1
        del run
    return out


def _member_name(members: object, index: int) -> str:
    if not isinstance(members, Sequence) or not 0 <= index < len(members):
        return f"channel {index}"
    member = members[index]
    spec = getattr(member, "spec", None)
    return str(getattr(member, "id", None) or getattr(spec, "name", None) or f"channel {index}")


def _runs(state: Any, plan: Any) -> Iterable[tuple[Any, str]]:
    """Each live partial match of a sequence state with the stage it waits for."""
    if hasattr(state, "hot"):  # the loop plan: in the loop (hot, cold) or waiting for the last stage
        stages = getattr(plan, "stages", ("?", "?", "?"))
        for run in (*state.hot, *state.cold):
            yield run, str(stages[1])
        for run in state.last:
            yield run, str(stages[2])
        return
    if hasattr(state, "groups"):  # the event-only plan: (code, ...) tuples, code -> NFA state name
        names = getattr(plan, "names", ())
        for group in state.groups:
            for run in group.runs:
                yield run, str(names[run[0]]).split(":")[0] if 0 <= run[0] < len(names) else "?"
        return
    runs = state.runs.values() if isinstance(state.runs, dict) else state.runs
    names = getattr(plan, "stage", None)
    for run in runs:
        if hasattr(run, "state"):  # the general plan: the NFA state's name is the stage's
            yield run, str(run.state).split(":")[0]
        elif isinstance(names, list) and 0 <= run.stage < len(names):
            yield run, str(names[run.stage])
        else:
            yield run, "?"


def measure_cost(
    patterns: Sequence[Pattern],
    events: Iterable[Event | Mapping[str, object]],
    *,
    every: int = 1,
    out_of_orderness: int | float = 0,
) -> CostReport:
    """Replay ``events`` through ``patterns`` and sample the live state every ``every`` events.

    A sample lists, per pattern and key, the live count of every stage or channel (zero counts
    are left out once a key has none: the key's curve drops to zero and stops).
    """
    engine = Engine(list(patterns), out_of_orderness=out_of_orderness)
    names = [m.name for m in engine.matchers]
    report = CostReport()
    shown: set[tuple[str, Hashable, str]] = set()
    n = 0
    for n, raw in enumerate(events, 1):
        report.detections.extend(engine.process(raw))
        if n % max(1, every) == 0:
            _sample(engine, names, engine.event_clock.max_seen, report, shown)
    if n % max(1, every):  # why: the last events since the last sample
        _sample(engine, names, engine.event_clock.max_seen, report, shown)
    if n:
        report.detections.extend(engine.finish())
    by_name = {m.name: getattr(m, "pattern", None) for m in engine.matchers}
    report.warnings = growth_warnings(report, by_name)
    return report


def _sample(
    engine: Engine,
    names: Sequence[str],
    t: float,
    report: CostReport,
    shown: set[tuple[str, Hashable, str]],
) -> None:
    now: set[tuple[str, Hashable, str]] = set()
    for key in list(engine.keys):
        for name in names:
            for element, live in live_by_element(engine, name, key).items():
                report.samples.append((t, name, key, element, live))
                now.add((name, key, element))
    for name, key, element in shown - now:  # why: a curve that ended drops to zero, once
        report.samples.append((t, name, key, element, 0))
    shown.clear()
    shown.update(now)


def growth_warnings(report: CostReport, patterns: Mapping[str, object]) -> list[str]:
    """A warning per pattern whose live count rose through the second half of the input and
    reached :data:`GROWTH_FLOOR`, naming the constructs that let partial matches multiply."""
    totals = report.totals()
    out: list[str] = []
    for name, rows in totals.groupby("pattern"):
        live = rows["live"].tolist()
        if len(live) < 4 or max(live) < GROWTH_FLOOR:
            continue
        half = len(live) // 2
        if max(live[half:]) <= 1.5 * max(1, max(live[:half])):
            continue  # why: bounded (it levelled off), however large
        causes = causes_of(patterns.get(str(name)))
        because = "; ".join(causes) if causes else "no construct found that explains it"
        out.append(f"{name}: live partial matches grew to {max(live)} and were still growing: {because}")
    return out


def causes_of(pattern: object) -> list[str]:
    """The constructs of ``pattern`` that let its live state grow without bound."""
    causes: list[str] = []
    if isinstance(pattern, SequencePattern):
        for st in pattern.stages:
            name = getattr(st, "name", "?")
            if getattr(st, "contiguity", None) is Contiguity.NONDETERMINISTIC_RELAXED:
                causes.append(f"`followed by any {name}` keeps every earlier partial match alive")
            q = getattr(st, "quantifier", None)
            if q is not None and q.inner is Contiguity.NONDETERMINISTIC_RELAXED:
                causes.append(f"`allow combinations` on {name} forks a partial match per combination")
        if pattern.within_ms is None and not any(getattr(st, "within_ms", None) for st in pattern.stages):
            causes.append("no `within`: a partial match never expires")
    elif hasattr(pattern, "channels") and getattr(pattern, "timeout_ms", None) is None:
        causes.append("no `@timeout`: an instance that never completes lives forever")
    return causes
