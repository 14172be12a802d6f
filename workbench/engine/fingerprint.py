"""Pattern fingerprints: a short hash of a definition's canonical form, so that a snapshot names the
patterns it was taken with and a restore can refuse one taken with others."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Sequence

__all__ = ["fingerprint", "fingerprints"]


def fingerprint(definition: object) -> str:
    """A short hash of a pattern definition's canonical form (same definition, same fingerprint).

    Frozen dataclasses are walked field by field; callables count by their qualified name.

    >>> from workbench.engine.nfa import SequencePattern, Stage
    >>> a = fingerprint(SequencePattern("p", (Stage("a"),)))
    >>> a == fingerprint(SequencePattern("p", (Stage("a"),)))
    True
    >>> a == fingerprint(SequencePattern("p", (Stage("b"),)))
    False
    """
    return hashlib.sha256(_canonical(definition, 0).encode("utf-8")).hexdigest()[:16]


def fingerprints(matchers: Sequence[object]) -> list[tuple[str, str]]:
    """``(name, fingerprint)`` of compiled matchers, in order (a matcher's ``pattern`` is its definition)."""
    return [(str(getattr(m, "name", "")), fingerprint(getattr(m, "pattern", type(m)))) for m in matchers]


def _canonical(value: object, depth: int) -> str:
    if depth > 200:
        return "..."
    if value is None or isinstance(value, bool | int | float | str | bytes | enum.Enum):
        return repr(value)
    c = _canonical
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = (f"{f.name}={c(getattr(value, f.name), depth + 1)}" for f in dataclasses.fields(value))
        return f"{type(value).__qualname__}({', '.join(parts)})"
    if isinstance(value, dict):
        items = sorted(f"{c(k, depth + 1)}:{c(v, depth + 1)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(c(v, depth + 1) for v in value)) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(c(v, depth + 1) for v in value) + "]"
    if callable(value):
        name = getattr(value, "__qualname__", type(value).__qualname__)
        return f"<callable {getattr(value, '__module__', '?')}.{name}>"
    return f"<{type(value).__qualname__}>"
