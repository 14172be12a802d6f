"""Near misses: the events that reached a stage or channel of an instance but failed its condition.

The engine's matchers do not record rejected events (tracing costs nothing it need not). This module
rebuilds them from a traced run on demand: it walks an instance's trace records to know, at each
event of its key, which stages (or channels) were waiting and what the instance had taken, then
re-evaluates the waiting element's condition tree (the closed expression IR) part by part
(:func:`workbench.engine.nfa.trace.near_miss_detail`). The result is ``rejected`` trace records:
``'hot' rejected it: `e.celsius > 80`: 78 > 80 is false``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence

from workbench.engine.detection import TraceKind, TraceRecord
from workbench.engine.events import Event
from workbench.engine.expr import ir
from workbench.engine.nfa.pattern import SequencePattern, Stage
from workbench.engine.nfa.runaggs import RunAggregates
from workbench.engine.nfa.trace import MappingFrame, near_miss_detail
from workbench.engine.reactions.patterns import Channel, ReactionGroup, Var, pairs
from workbench.errors import CepError

__all__ = ["SCAN_LIMIT", "near_misses", "spans"]

TAKING = (TraceKind.ACCEPTED, TraceKind.COUNTED, TraceKind.STARTED, TraceKind.EXTENDED)
ENDS = (
    TraceKind.DETECTED,
    TraceKind.FAILED,
    TraceKind.STOPPED,
    TraceKind.VIOLATED,
    TraceKind.TIMED_OUT,
    TraceKind.PRUNED,
)
#: at most this many events of an instance's lifetime are re-checked (explain stays fast on big runs).
SCAN_LIMIT = 20_000

Instance = tuple[Hashable, int]


def spans(trace: Sequence[TraceRecord]) -> dict[Instance, list[TraceRecord]]:
    """The trace records of each instance (``(key, id)``), in trace order."""
    out: dict[Instance, list[TraceRecord]] = {}
    for r in trace:
        out.setdefault((r.key, r.instance), []).append(r)
    return out


def near_misses(
    pattern: object,
    records: Sequence[TraceRecord],
    events: Mapping[int, Event],
    *,
    only: int | None = None,
) -> list[TraceRecord]:
    """The ``rejected`` records of the instance whose trace is ``records`` (``only``: one event's)."""
    taken = [(r.element or "", r.event_seq) for r in records if r.kind in TAKING and r.event_seq is not None]
    if not taken or not records:
        return []
    first, last = _bounds(records, taken)
    r0 = records[0]
    out: list[TraceRecord] = []
    for e in _between(events, first, last, only, r0.key):
        if any(seq == e.seq for _, seq in taken):
            continue  # why: the instance took it; not a miss
        before = [(name, seq) for name, seq in taken if seq < e.seq]
        if not before:
            continue
        for element, detail in _rejections(pattern, before, events, e):
            out.append(
                TraceRecord(
                    e.time, r0.pattern, r0.key, r0.instance, TraceKind.REJECTED, element, e.seq, detail
                )
            )
    return out


def _bounds(records: Sequence[TraceRecord], taken: Sequence[tuple[str, int | None]]) -> tuple[int, float]:
    """The first event seq the instance took, and the seq of the event (or timer) that ended it."""
    first = min(seq for _, seq in taken if seq is not None)
    end = next((r for r in records if r.kind in ENDS), None)
    if end is None:
        return first, float("inf")
    if end.event_seq is not None:
        return first, end.event_seq
    return first, -float(end.time)  # why: a timer ended it; a negative bound means "up to this time"


def _between(
    events: Mapping[int, Event], first: int, last: float, only: int | None, key: Hashable
) -> Iterator[Event]:
    """The events of ``key`` after ``first`` up to ``last`` (a seq, or minus a time: see _bounds)."""
    if only is not None:
        e = events.get(only)
        seqs: Iterator[int] | range = iter([only] if e is not None else [])
    else:
        stop = min(len(events), first + 1 + SCAN_LIMIT)
        seqs = range(first + 1, stop if last < 0 or last == float("inf") else min(stop, int(last) + 1))
    for seq in seqs:
        e = events.get(seq)
        if e is None or e.key != key or seq <= first:
            continue
        if last >= 0 and seq > last:
            break
        if last < 0 and e.time > -last:
            break
        yield e


def _rejections(
    pattern: object, before: Sequence[tuple[str, int | None]], events: Mapping[int, Event], e: Event
) -> list[tuple[str, dict[str, object]]]:
    if isinstance(pattern, SequencePattern):
        return _sequence(pattern, before, events, e)
    if isinstance(pattern, ReactionGroup):
        return _group(pattern, before, events, e)
    return []


def _waiting(pattern: SequencePattern, before: Sequence[tuple[str, int | None]]) -> list[Stage]:
    """The stages that could take the next event after ``before``: the current one and the next."""
    stages = list(pattern.stages)
    names = [s.name for s in stages]
    counts = {n: sum(1 for name, _ in before if name == n) for n in names}
    last = before[-1][0]
    if last not in names:
        return []
    i = names.index(last)
    current = stages[i]
    out: list[Stage] = []
    if isinstance(current, Stage):
        q = current.quantifier
        if q.max is None or counts[last] < q.max:
            out.append(current)  # why: a looping stage can take more
        if counts[last] < q.min:
            return out  # why: it must take more before the next stage is reachable
    for nxt in stages[i + 1 :]:
        if not isinstance(nxt, Stage):
            break  # why: nested groups are not re-checked
        if not nxt.negated:
            out.append(nxt)
        if not (nxt.negated or nxt.quantifier.min == 0):
            break  # why: a mandatory stage blocks the ones after it
    return out


def _sequence(
    pattern: SequencePattern, before: Sequence[tuple[str, int | None]], events: Mapping[int, Event], e: Event
) -> list[tuple[str, dict[str, object]]]:
    matched: dict[str, list[Event]] = {}
    for name, seq in before:
        ev = events.get(seq) if seq is not None else None
        if ev is not None:
            matched.setdefault(name, []).append(ev)
    aggregates = _aggregates(pattern, before, events)
    out = []
    for stage in _waiting(pattern, before):
        if stage.types and e.type not in stage.types:
            continue  # why: the event never reached this stage
        if isinstance(stage.where, ir.Node):
            frame = MappingFrame({"matched": matched, **aggregates(stage.name, e)})
            detail = near_miss_detail(stage.where, e, frame, stage.name)
            if not all(p["holds"] for p in detail["parts"]):  # type: ignore[attr-defined]
                out.append((stage.name, detail))
    return out


def _aggregates(
    pattern: SequencePattern, before: Sequence[tuple[str, int | None]], events: Mapping[int, Event]
) -> Callable[[str, Event], dict[str, object]]:
    """The pattern's declared aggregates over what the instance took, as a condition of a stage
    testing an event reads them (``including current`` adds the event for its own stage)."""
    if not pattern.aggregates:
        return lambda stage, e: {}
    run = RunAggregates(pattern)
    aggs = run.fresh()
    try:
        for name, seq in before:
            ev = events.get(seq) if seq is not None else None
            if ev is not None:
                aggs = run.take(aggs, name, ev)
    except CepError:  # why: a value the aggregate could not take; its conditions then show errors
        return lambda stage, e: {}

    def values(stage: str, e: Event) -> dict[str, object]:
        out: dict[str, object] = {}
        for spec in run.specs:
            try:
                out[spec.name] = run.read(aggs, spec.name, stage, e)
            except (CepError, TypeError, ValueError, ArithmeticError):
                continue  # why: left out, the part that reads it shows the error
        return out

    return values


def _group(
    group: ReactionGroup, before: Sequence[tuple[str, int | None]], events: Mapping[int, Event], e: Event
) -> list[tuple[str, dict[str, object]]]:
    env: dict[str, object] = dict(pairs(group.constants))
    accepted = [name for name, _ in before]
    initiator = events.get(before[0][1]) if before[0][1] is not None else None
    if group.initiator is not None and initiator is not None:
        env.update(dict(pairs(group.initiator.state)))
        env.update({var: initiator.fields.get(f) for var, f in pairs(group.initiator.bind)})
    channels = [c for c in group.channels if isinstance(c, Channel)]
    by_id = {c.id: c for c in channels}
    for name, seq in before[1:]:
        ev, ch = events.get(seq) if seq is not None else None, by_id.get(name)
        if ev is not None and ch is not None:
            env.update({var: ev.fields.get(f) for var, f in pairs(ch.binds)})
    out = []
    for ch in channels:
        if (
            ch.negated
            or (ch.type is not None and ch.type != e.type)
            or (ch.count is None and ch.id in accepted)
        ):
            continue  # why: a forbidden event, another type, or a channel already satisfied
        if ch.after and not any(a in accepted for a in ch.after):
            continue  # why: the channel did not exist yet
        tree = _channel_tree(ch)
        if tree is None:
            continue
        detail = near_miss_detail(tree, e, MappingFrame(env), ch.id)
        if not all(p["holds"] for p in detail["parts"]):  # type: ignore[attr-defined]
            out.append((ch.id, detail))
    return out


def _channel_tree(ch: Channel) -> ir.Node | None:
    """The channel's ``match`` equalities and its ``where``, as one ``and`` tree."""
    items: list[ir.Node] = []
    for field, want in pairs(ch.match):
        right: ir.Node = ir.Name(want.name) if isinstance(want, Var) else ir.Literal(want)
        items.append(ir.Compare("==", ir.Attr(ir.Name("e"), str(field)), right))
    if isinstance(ch.where, ir.Node):
        items.append(ch.where)
    if not items:
        return None
    return items[0] if len(items) == 1 else ir.BoolOp("and", tuple(items))
