"""Explain, from the engine trace, why pattern instances did or did not fire (``%cep explain``).

Without an instance: one line per instance with its outcome (fired, failed and why, timed out, or
still open at the end of the input and what it was waiting for). With ``instance=`` (and ``key=``):
the instance's full timeline, one trace record per line, with the events it concerned.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING

from workbench.engine.detection import Detection, TraceKind, TraceRecord
from workbench.engine.events import Event
from workbench.engine.shape import taking_elements
from workbench.errors import CepError
from workbench.session.nearmiss import near_misses, spans
from workbench.session.reasons import outcome_of
from workbench.session.shown import PLAIN, Shown

if TYPE_CHECKING:
    from workbench.session.session import CepSession

__all__ = ["event_story", "explain", "explain_event"]

#: at most this many near misses in one instance's story (the most recent ones).
NEAR_MISSES_SHOWN = 10

_ENDINGS = {
    TraceKind.DETECTED: "fired",
    TraceKind.FAILED: "failed",
    TraceKind.STOPPED: "stopped",
    TraceKind.VIOLATED: "violated",
    TraceKind.TIMED_OUT: "timed out",
    TraceKind.PRUNED: "pruned",
}


def _event(events: Mapping[int, Event], seq: int | None, show: Shown = PLAIN) -> str:
    if seq is None:
        return "timer"
    e = events.get(seq)
    if e is None:
        return f"event #{seq}"
    fields = ", ".join(f"{k}={show.field(k, v)}" for k, v in list(e.fields.items())[:4])
    return f"event #{seq} {e.type}@{show.time(e.time)}" + (f" ({fields})" if fields else "")


def _summary(pattern: object, records: list[TraceRecord], detections: int, show: Shown = PLAIN) -> str:
    ended = [r for r in records if r.kind in _ENDINGS]
    taking = (TraceKind.ACCEPTED, TraceKind.COUNTED, TraceKind.STARTED, TraceKind.EXTENDED)
    seen = [r.element for r in records if r.kind in taking and r.element]
    held = next((r for r in records if r.kind == TraceKind.HELD), None)
    if any(r.kind == TraceKind.DETECTED for r in ended) or detections:
        last = next((r for r in reversed(ended) if r.kind == TraceKind.DETECTED), None)
        at = f" at t={show.time(last.time)}" if last else ""
        return f"fired{at} ({detections} detection(s)){_held(held, last, show)}"
    if ended:
        last = ended[-1]
        outcome = outcome_of(pattern, records, 0)
        cause = next((r.element for r in ended if r.element), None)
        word = " on" if outcome.label == "timed out" else " by"
        why = f"{word} {cause}" if cause else ""
        quiet = outcome.label in ("timed out", "stopped") or last.kind == TraceKind.FAILED
        detail = f" {dict(last.detail)}" if last.detail and not quiet else ""
        got = f" (had: {', '.join(dict.fromkeys(seen))})" if seen else ""
        return f"{outcome.label}{why} at t={show.time(last.time)}{detail}{got}{_held(held, last, show)}"
    if held is not None:
        behind = held.detail.get("behind")
        return (
            f"completed at t={show.time(held.time)} but {held.detail.get('reason')}; never released: "
            f"instance {behind} was still open at the end of the input, so no watermark ended it"
        )
    waiting = [e for e in taking_elements(pattern) if e not in seen]
    wait = f"; waiting for {', '.join(waiting)}" if waiting else ""
    return (
        f"still open at the end of the input (accepted: {', '.join(dict.fromkeys(seen)) or 'nothing'}){wait}"
    )


def _held(held: TraceRecord | None, end: TraceRecord | None, show: Shown) -> str:
    """``; held back ... from t=A until t=B`` for a match the skip strategy held back."""
    if held is None:
        return ""
    until = f" until t={show.time(end.time)}" if end is not None else ""
    return f"; {held.detail.get('reason')} from t={show.time(held.time)}{until}"


def _order(r: TraceRecord) -> tuple[float, int]:
    """Trace order: by time, then by event (a timer after the events of its time)."""
    return (r.time, r.event_seq if r.event_seq is not None else 1 << 62)


def _line(r: TraceRecord, events: Mapping[int, Event], show: Shown) -> str:
    """One trace record: ``t=..: kind element <- event #n ... reason``."""
    element = f" {r.element}" if r.element else ""
    if r.kind == TraceKind.REJECTED:
        detail = ": " + ", ".join(str(p["text"]) for p in r.detail.get("parts", ()))
    else:
        detail = f" {dict(r.detail)}" if r.detail else ""
    return f"  t={show.time(r.time)}: {r.kind.value}{element} <- {_event(events, r.event_seq, show)}{detail}"


def event_story(
    pattern: object,
    trace: Sequence[TraceRecord],
    events: Mapping[int, Event],
    seq: int,
    show: Shown = PLAIN,
) -> str:
    """What event ``seq`` did in every instance it met: taken, started, ended one, or rejected (why)."""
    name = getattr(pattern, "name", "?")
    if seq not in events:
        msg = f"there is no event #{seq} in the last run of {name!r} (events are numbered from 0)"
        raise CepError(msg)
    lines = [f"{name}: {_event(events, seq, show)}"]
    for (k, i), records in spans(trace).items():
        did = [r for r in records if r.event_seq == seq]
        did += near_misses(pattern, records, events, only=seq)
        for r in did:
            lines.append(f"  key={show.key(k)} instance {i}:{_line(r, events, show)[1:]}")
    if len(lines) == 1:
        lines.append("  it met no instance: no stage or channel of an open instance was waiting for its type")
    return "\n".join(lines)


def explain_event(session: CepSession, name: str, seq: int) -> str:
    """:func:`event_story` of event ``seq`` in the last run of ``name`` (``%cep explain NAME --event``)."""
    session.detections(name)  # why: a pattern that has not run says so
    run = session.runs[name]
    return event_story(session.get(name).pattern, run.trace, run.events, seq, session.shown(name))


def explain(
    pattern: object,
    trace: Sequence[TraceRecord],
    detections: Sequence[Detection],
    events: Mapping[int, Event],
    *,
    key: Hashable | None = None,
    instance: int | None = None,
    limit: int = 50,
    few: int = 10,
    details: bool = False,
    show: Shown = PLAIN,
) -> str:
    """The explanation text (see the module docstring); ``show`` writes times, fields and keys.

    Without ``instance``: the summary, then one line per instance (at most ``limit``) when there are
    at most ``few`` instances or ``details`` asks for them.
    """
    by_instance: dict[tuple[Hashable, int], list[TraceRecord]] = {}
    for r in trace:
        if key is not None and r.key != key:
            continue
        by_instance.setdefault((r.key, r.instance), []).append(r)
    fired: dict[tuple[Hashable, int], int] = {}
    for d in detections:
        if d.kind == "match":
            fired[(d.key, d.instance)] = fired.get((d.key, d.instance), 0) + 1
    name = getattr(pattern, "name", "?")
    if instance is not None:
        return _stories(pattern, by_instance, fired, events, key, instance, show)
    if not by_instance:
        text = (
            f"{name}: no instance was started"
            + (f" for key {show.key(key)}" if key is not None else "")
            + " (no event matched an initiator or a first stage)"
        )
        others = sorted({show.key(r.key) for r in trace}) if key is not None else []  # why repr: '1' is not 1
        if others:
            shown = ", ".join(others[:10]) + (f", ... ({len(others)} in all)" if len(others) > 10 else "")
            text += f"; keys with instances: {shown}"
        return text
    chosen_detections = [d for d in detections if key is None or d.key == key]
    lines = overview(pattern, by_instance, fired, chosen_detections, key, events, show)
    if not details and len(by_instance) > few:
        lines.append(
            f"details: --all lists the {len(by_instance)} instances; "
            "--key K --instance N tells one instance's story"
        )
        return "\n".join(lines)
    for n, ((k, i), records) in enumerate(by_instance.items()):
        if n == limit:
            lines.append(f"... {len(by_instance) - limit} more (use --key / --instance)")
            break
        text = _summary(pattern, records, fired.get((k, i), 0), show)
        lines.append(f"  key={show.key(k)} instance {i}: {text}")
    return "\n".join(lines)


def _stories(
    pattern: object,
    by_instance: Mapping[tuple[Hashable, int], list[TraceRecord]],
    fired: Mapping[tuple[Hashable, int], int],
    events: Mapping[int, Event],
    key: Hashable | None,
    instance: int,
    show: Shown,
) -> str:
    """Instance ``instance`` (of every key, or of ``key``): its summary, then its trace and near misses."""
    name = getattr(pattern, "name", "?")
    chosen = {k: v for k, v in by_instance.items() if k[1] == instance}
    if not chosen:
        have = ", ".join(f"{show.key(k)}/{i}" for k, i in list(by_instance)[:10]) or "none"
        msg = (
            f"pattern {name!r} has no traced instance {instance}"
            + (f" for key {show.key(key)}" if key is not None else "")
            + f"; instances (key/id): {have}"
        )
        raise CepError(msg)
    lines = []
    for (k, i), records in chosen.items():
        summary = _summary(pattern, records, fired.get((k, i), 0), show)
        lines.append(f"{name} key={show.key(k)} instance {i}: {summary}")
        missed = near_misses(pattern, records, events)
        if len(missed) > NEAR_MISSES_SHOWN:
            lines.append(f"  ({len(missed)} near misses; the last {NEAR_MISSES_SHOWN} are shown)")
        story = sorted([*records, *missed[-NEAR_MISSES_SHOWN:]], key=_order)
        for r in story:
            lines.append(_line(r, events, show))
    return "\n".join(lines)


def overview(
    pattern: object,
    by_instance: Mapping[tuple[Hashable, int], Sequence[TraceRecord]],
    fired: Mapping[tuple[Hashable, int], int],
    detections: Sequence[Detection],
    key: Hashable | None = None,
    events: Mapping[int, Event] | None = None,
    show: Shown = PLAIN,
) -> list[str]:
    """The header (instances per outcome, detections per kind) and the most common reasons.

    Each reason names an example instance and, with ``events``, that instance's last near miss.
    """
    name = getattr(pattern, "name", "?")
    outcomes = {ik: outcome_of(pattern, rs, fired.get(ik, 0)) for ik, rs in by_instance.items()}
    labels = Counter(o.label for o in outcomes.values())
    kinds = Counter(d.kind for d in detections)
    scope = f" key={show.key(key)}" if key is not None else ""
    per_kind = ", ".join(_plural(n, k) for k, n in sorted(kinds.items(), key=lambda kv: kv[0] != "match"))
    lines = [
        f"{name}{scope}: {_plural(len(by_instance), 'instance')} "
        f"({', '.join(f'{n} {label}' for label, n in labels.most_common())}); "
        f"{_plural(len(detections), 'detection')}" + (f" ({per_kind})" if per_kind else "")
    ]
    missed = [(ik, o) for ik, o in outcomes.items() if o.label != "fired"]
    reasons = Counter(o.reason for _, o in missed)
    for rank, (reason, n) in enumerate(reasons.most_common(3)):
        k, i = next(ik for ik, o in missed if o.reason == reason)
        head = "most common reason" if rank == 0 else "then"
        example = ("" if k is None else f"--key {show.key(k)} ") + f"--instance {i}"
        lines.append(f"  {head}: {reason} ({n} of {len(missed)} that did not fire; e.g. {example})")
        near = near_misses(pattern, by_instance[(k, i)], events) if events is not None else []
        if near:
            r = max(near, key=_closeness)
            lines.append(
                f"    its nearest miss: {_event(events or {}, r.event_seq, show)}: {r.detail['reason']}"
            )
    if len(reasons) > 3:
        lines.append(f"  and {len(reasons) - 3} other reason(s)")
    return lines


def _closeness(miss: TraceRecord) -> tuple[int, float, float]:
    """How near a miss came: more parts held, then a smaller relative gap in the failing comparisons."""
    parts = miss.detail["parts"]
    gap = 0.0
    for p in parts:
        left, right = p.get("left"), p.get("right")
        if not p["holds"] and isinstance(left, int | float) and isinstance(right, int | float):
            gap += abs(left - right) / max(abs(right), 1.0)
    return sum(bool(p["holds"]) for p in parts), -gap, miss.time


def _plural(n: int, word: str) -> str:
    """``1 match``, ``2 matches``, ``3 timeouts``."""
    if n == 1:
        return f"1 {word}"
    return f"{n} {word}es" if word.endswith(("ch", "s")) else f"{n} {word}s"
