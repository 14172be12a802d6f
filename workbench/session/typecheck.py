"""Near misses between patterns and their input: event types (``lgin`` events for a ``login``
pattern) and fields (``e.pric`` when the input has ``price``).

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

from workbench.engine.expr import ir, parse_expr
from workbench.errors import ExpressionError

__all__ = ["field_mismatches", "pattern_fields", "pattern_types", "type_mismatches"]


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


def _condition_fields(condition: Any) -> set[str]:
    """The ``e.FIELD`` names a condition (an expression, or an ``AllOf``/``AnyOf`` of them) reads."""
    if isinstance(condition, str):
        try:
            condition = parse_expr(condition)
        except ExpressionError:
            return set()
    if isinstance(condition, ir.Node):
        return {n.name for n in ir.walk(condition) if isinstance(n, ir.Attr) and n.obj == ir.Name("e")}
    out: set[str] = set()
    for part in getattr(condition, "parts", ()):
        out |= _condition_fields(part)
    return out


def pattern_fields(pattern: Any) -> dict[str, set[str]]:
    """Stage or channel name -> the event fields its conditions (and channel matches) read."""
    out: dict[str, set[str]] = {}
    if hasattr(pattern, "stages"):
        for s in pattern.stages:
            if hasattr(s, "stages"):
                out.update(pattern_fields(s))
                out.setdefault(s.name, set()).update(_condition_fields(s.until))
            else:
                out[s.name] = _condition_fields(s.where) | _condition_fields(s.until)
        return out
    members = list(getattr(pattern, "channels", ()))
    initiator = getattr(pattern, "initiator", None)
    if initiator is not None:
        out["initiator"] = _condition_fields(initiator.where) | {f for f, _ in initiator.match}
        out["initiator"] |= {f for _, f in initiator.bind}
    if not hasattr(pattern, "channels"):  # a receive
        out[pattern.name] = _condition_fields(pattern.where) | {f for f, _ in pattern.match}
    for m in members:
        if hasattr(m, "channels"):
            out.update(pattern_fields(m))
        else:
            fields = _condition_fields(m.where) | {f for f, _ in m.match} | {f for _, f in m.binds}
            out[m.id] = fields | {f for _, f in m.vars}
    return out


_BUILT_IN_FIELDS = frozenset({"type", "time", "key", "seq", "fields", "t"})


def field_mismatches(patterns: Sequence[Any], columns: Iterable[str]) -> list[str]:
    """One sentence per field a pattern reads that no input column holds (with the nearest column).

    >>> from workbench.engine.nfa import SequencePattern, Stage
    >>> p = SequencePattern("s", (Stage("a", where="e.pric > 1"),))
    >>> field_mismatches([p], ["type", "time", "price"])
    ["'a' of pattern 's' reads field 'pric', which no input event has (did you mean 'price'?)"]
    """
    have = {str(c) for c in columns}
    out: list[str] = []
    if not have:  # no input, or events without fields: nothing to compare with
        return out
    for p in patterns:
        for element, fields in pattern_fields(p).items():
            for f in sorted(fields - have - _BUILT_IN_FIELDS):
                close = difflib.get_close_matches(f, sorted(have), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else f"; columns: {', '.join(sorted(have))}"
                out.append(
                    f"{element!r} of pattern {p.name!r} reads field {f!r}, which no input event has{hint}"
                )
    return out
