"""Why one pattern instance ended as it did, in plain words with numbers (``%cep explain``'s summary).

:func:`outcome_of` reads one instance's trace records and gives its outcome (``fired``, ``timed
out``, ``stopped``, ``failed``, ``violated``, ``pruned``, ``held`` or ``still open``) and, for an
instance that did not fire, a reason that does not depend on the instance (no times, no event
numbers), so equal reasons can be counted: "4 of 5 'hot' events before the 6h timeout".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.engine.detection import TraceKind, TraceRecord
from workbench.engine.shape import taking_elements
from workbench.language.printer import format_duration

__all__ = ["Outcome", "outcome_of"]

_TAKING = (TraceKind.ACCEPTED, TraceKind.COUNTED, TraceKind.STARTED, TraceKind.EXTENDED)
_ENDS = (TraceKind.FAILED, TraceKind.STOPPED, TraceKind.VIOLATED, TraceKind.TIMED_OUT, TraceKind.PRUNED)


@dataclass(frozen=True)
class Outcome:
    """How an instance ended (``label``) and why, in words shared by instances alike (``reason``)."""

    label: str
    reason: str = ""


def outcome_of(pattern: object, records: Sequence[TraceRecord], detections: int) -> Outcome:
    """The outcome of the instance whose trace is ``records`` (``detections``: its matches)."""
    kinds = {r.kind for r in records}
    if detections or TraceKind.DETECTED in kinds:
        return Outcome("fired")
    stopped = next((r for r in records if r.kind == TraceKind.STOPPED), None)
    if stopped is not None:  # why: a group's @stop channel ends it (it is also traced as failed)
        return Outcome("stopped", f"stopped by '{stopped.element}'" if stopped.element else "stopped")
    end = next((r for r in records if r.kind in _ENDS), None)  # why: a group traces the cause first
    if end is None:
        if TraceKind.HELD in kinds:
            return Outcome("held", "completed, but held back by the skip strategy until the input ended")
        return Outcome("still open", _short(pattern, records, "at the end of the input"))
    if end.kind == TraceKind.TIMED_OUT or end.detail.get("timed_out") or TraceKind.TIMED_OUT in kinds:
        timed_out = next((r for r in records if r.kind == TraceKind.TIMED_OUT), end)
        return Outcome(
            "timed out", _short(pattern, records, f"before the {_window(pattern, timed_out.element)}")
        )
    if end.kind == TraceKind.PRUNED:
        return Outcome("pruned", _pruned(pattern, end))
    if end.kind == TraceKind.VIOLATED:
        return Outcome("violated", _violated(pattern, end))
    return Outcome("failed", f"ended by '{end.element}'" if end.element else "failed")


def _got(records: Sequence[TraceRecord]) -> Counter[str]:
    """How many events each element took (counting records carry the running count)."""
    got: Counter[str] = Counter()
    for r in records:
        if r.kind in _TAKING and r.element:
            count = r.detail.get("count")
            got[r.element] = count if isinstance(count, int) else got[r.element] + 1
    return got


def _needed(pattern: object, records: Sequence[TraceRecord]) -> dict[str, int]:
    """How many events each taking element needs: a stage's minimum count, a channel's ``of``."""
    needed = {s.name: s.quantifier.min for s in getattr(pattern, "stages", ()) if hasattr(s, "quantifier")}
    for r in records:
        of = r.detail.get("of")
        if r.element and isinstance(of, int):
            needed[r.element] = of
    return needed


def _short(pattern: object, records: Sequence[TraceRecord], when: str) -> str:
    """What the instance still lacked ``when`` it ended: ``k of n 'E' events`` or ``no 'E' event``."""
    got, needed = _got(records), _needed(pattern, records)
    names = taking_elements(pattern) if pattern is not None else list(got)
    missing = [e for e in names if got[e] < needed.get(e, 1)]
    if not missing:
        return f"complete up to '{names[-1]}' {when}" if names else f"ended {when}"
    if getattr(pattern, "operator", None) == "or":  # why: any one channel would have done
        return "no " + " or ".join(f"'{e}'" for e in missing) + f" event {when}"
    first = missing[0]  # why: a sequence waits for its stages in order; a group's first lacking channel
    n, k = needed.get(first, 1), got[first]
    if n > 1:
        return f"{k} of {n} '{first}' events {when}"
    if getattr(pattern, "operator", None) == "and":  # why: a group needed every channel
        return "no " + " and no ".join(f"'{e}'" for e in missing if needed.get(e, 1) == 1) + f" event {when}"
    return f"no '{first}' event {when}"


def _window(pattern: object, element: str | None = None) -> str:
    """``6h timeout`` from the timeout that expired: a member channel's own ``@timeout`` (the
    ``element`` that timed out), else the pattern's window (``within``) or group ``@timeout``."""
    member = _member_timeout(pattern, element) if element else None
    if member is not None:
        return f"{format_duration(member)} timeout on '{element}'"
    ms = getattr(pattern, "within_ms", None) or getattr(pattern, "timeout_ms", None)
    return f"{format_duration(ms)} timeout" if ms else "timeout"


def _member_timeout(group: object, element: str) -> float | None:
    """The own ``@timeout`` of the channel or nested group called ``element`` (searched in depth)."""
    for member in getattr(group, "channels", ()):
        if getattr(member, "id", getattr(member, "name", None)) == element:
            ms = getattr(member, "timeout_ms", None)
            return float(ms) if isinstance(ms, int | float) else None
        found = _member_timeout(member, element)
        if found is not None:
            return found
    return None


def _pruned(pattern: object, end: TraceRecord) -> str:
    """Why a partial match was discarded, without the event number that caused it."""
    d = end.detail
    if "waiting" in d:
        return f"strict contiguity broken while waiting for '{d['waiting']}'"
    if "strategy" in d:
        return f"discarded by the skip strategy {d['strategy']}"
    if "max_partial_matches" in d:
        return f"dropped: more than {d['max_partial_matches']} partial matches"
    negated = [s.name for s in getattr(pattern, "stages", ()) if getattr(s, "negated", False)]
    if negated:
        return "a " + " or ".join(f"'{n}'" for n in negated) + " event (negated stage) occurred"
    return str(d.get("reason", "pruned"))


def _violated(pattern: object, end: TraceRecord) -> str:
    """A violation: too many events on a counting channel, or a forbidden (negated) event."""
    if end.element and "max" in end.detail:
        return f"more than {end.detail['max']} '{end.element}' events"
    if end.element:
        return f"a '{end.element}' event broke the rule"
    return _pruned(pattern, TraceRecord(end.time, end.pattern, end.key, end.instance, TraceKind.PRUNED))
