"""Window accumulators for ``@size(n, r, acc)`` and ``@timer(delay, period, acc)`` channels.

An accumulator *spec* is a frozen dataclass (part of the pattern); its running value is plain data
kept in the instance state (a ``dict``), updated by :func:`update` for each event of the window and
read by :func:`snapshot` when the window closes.

>>> spec = MapCounter("e.i % 2")
>>> from workbench.engine.events import Event
>>> acc = new_value(spec)
>>> for i in range(3):
...     update(spec, acc, Event("a", i, None, {"i": i}), {})
>>> snapshot(spec, acc), total(spec, acc)
({0: 2, 1: 1}, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from workbench.engine.events import Event

__all__ = ["Accumulator", "MapCounter", "SortedAccumulator", "new_value", "snapshot", "total", "update"]

Expression: TypeAlias = str | Callable[[Event, Mapping[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class MapCounter:
    """Counts events by key (Prova's ``MapCounter``); snapshot ``{key: count}``.

    ``key`` is an expression over ``e`` and the bound variables (string or ``f(e, env)``).
    """

    key: Expression


@dataclass(frozen=True, slots=True)
class SortedAccumulator:
    """Keeps values by key (Prova's ``SortedAccumulator``); snapshot ``{key: [values in arrival order]}``.

    With ``top`` set the snapshot keeps only each key's ``top`` highest values, highest first
    (``highest(n)``).
    """

    key: Expression
    value: Expression
    top: int | None = None


Accumulator: TypeAlias = MapCounter | SortedAccumulator


def _evaluate(expr: Expression, event: Event, env: Mapping[str, Any]) -> Any:
    from workbench.engine.reactions.conditions import compile_condition

    return compile_condition(expr)(event, env)


def new_value(spec: Accumulator) -> dict[Any, Any]:
    """A fresh, empty running value."""
    return {}


def update(spec: Accumulator, value: dict[Any, Any], event: Event, env: Mapping[str, Any]) -> None:
    """Add one event to the running value."""
    key = _evaluate(spec.key, event, env)
    if isinstance(spec, MapCounter):
        value[key] = value.get(key, 0) + 1
    else:
        value.setdefault(key, []).append(_evaluate(spec.value, event, env))


def snapshot(spec: Accumulator, value: Mapping[Any, Any]) -> dict[Any, Any]:
    """An independent copy of the running value, as the window's result."""
    if isinstance(spec, MapCounter):
        return dict(value)
    if spec.top is None:
        return {k: list(v) for k, v in value.items()}
    return {k: sorted(v, reverse=True)[: spec.top] for k, v in value.items()}


def total(spec: Accumulator, value: Mapping[Any, Any]) -> int:
    """How many events the running value holds (Prova's ``totalCount()``)."""
    if isinstance(spec, MapCounter):
        return int(sum(value.values()))
    return sum(len(v) for v in value.values())
