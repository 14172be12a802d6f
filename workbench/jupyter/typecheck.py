"""Near-miss event types between patterns and their input (``lgin`` events for a ``login`` pattern).

A replay where a pattern listens to an event type that the input spells slightly differently does
not fail: it just never matches. :func:`type_mismatches` finds those near misses so that ``%cep run``
and ``workbench run`` can say so. Types that are simply unrelated are not reported (most inputs
carry events no pattern cares about).

>>> from workbench.engine.nfa import SequencePattern, Stage
>>> p = SequencePattern("s", (Stage("a", types=("login",)),))
>>> type_mismatches([p], ["lgin", "logout"])
["the patterns listen to event type 'login', which the input does not have (did you mean 'lgin'?)"]
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["pattern_types", "type_mismatches"]


def pattern_types(pattern: Any) -> set[str] | None:
    """The event types ``pattern`` listens to; ``None`` when some part of it takes any type."""
    out: set[str] = set()
    if hasattr(pattern, "stages"):  # a sequence (stages, or groups of stages)
        for s in pattern.stages:
            inner = pattern_types(s) if hasattr(s, "stages") else (set(s.types) if s.types else None)
            if inner is None:
                return None
            out |= inner
        return out
    if hasattr(pattern, "channels"):  # a reaction group (channels, or nested groups)
        initiator = getattr(pattern, "initiator", None)
        if initiator is not None and initiator.type is not None:
            out.add(initiator.type)
        for m in pattern.channels:
            inner = pattern_types(m) if hasattr(m, "channels") else ({m.type} if m.type else None)
            if inner is None:
                return None
            out |= inner
        return out
    kind = getattr(pattern, "type", None)
    return {kind} if isinstance(kind, str) else None


def type_mismatches(patterns: Sequence[Any], input_types: Iterable[str]) -> list[str]:
    """One sentence per pattern event type missing from the input that the input nearly spells."""
    seen = {str(t) for t in input_types}
    wanted: set[str] = set()
    for p in patterns:
        wanted |= pattern_types(p) or set()
    out = []
    for t in sorted(wanted - seen):
        close = difflib.get_close_matches(t, sorted(seen - wanted), n=1, cutoff=0.75)
        if close:
            out.append(
                f"the patterns listen to event type {t!r}, which the input does not have "
                f"(did you mean {close[0]!r}?)"
            )
    return out
