"""The timeline's filter dropdowns: their options and value for a chosen set of keys or patterns."""

from __future__ import annotations

from collections.abc import Collection, Hashable

__all__ = ["ALL", "filter_choice", "frozen"]

#: the option that filters nothing
ALL = "(all)"


def filter_choice(chosen: Collection[Hashable] | None, names: list[str], noun: str) -> tuple[list[str], str]:
    """A filter dropdown's options and value: ``(all)``, each name, and the filter set when it is
    not one of the names (``keys=["a", "b"]`` given to the constructor shows as ``(2 keys: a, b)``).

    >>> filter_choice({"b"}, ["a", "b"], "keys")
    (['(all)', 'a', 'b'], 'b')
    >>> filter_choice({"a", "b"}, ["a", "b"], "keys")
    (['(all)', 'a', 'b', '(2 keys: a, b)'], '(2 keys: a, b)')
    """
    if chosen is None:
        return [ALL, *names], ALL
    shown = sorted(str(c) for c in chosen)
    if len(shown) == 1 and shown[0] in names:
        return [ALL, *names], shown[0]
    label = f"({len(shown)} {noun}: {', '.join(shown[:3])}{', ...' if len(shown) > 3 else ''})"
    return [ALL, *names, label], label


def frozen(chosen: Collection[Hashable] | None) -> frozenset[Hashable] | None:
    return None if chosen is None else frozenset(chosen)
