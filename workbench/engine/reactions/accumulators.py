"""Window accumulators for ``@size(n, r, acc)`` and ``@timer(delay, period, acc)`` channels.

An accumulator *spec* is a frozen dataclass (part of the pattern); its running value is plain data
kept in the instance state (a ``dict``), updated for each event of the window by the function
:func:`updater` compiles once, and read by :func:`snapshot` when the window closes.

>>> spec = MapCounter("e.i % 2")
>>> from workbench.engine.events import Event
>>> acc, add = new_value(spec), updater(spec)
>>> for i in range(3):
...     add(acc, Event("a", i, None, {"i": i}), {})
>>> snapshot(spec, acc), total(spec, acc)
({0: 2, 1: 1}, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from workbench.engine.events import Event
from workbench.engine.expr import as_tree, ir
from workbench.engine.faults import FaultSink

__all__ = [
    "Accumulator",
    "MapCounter",
    "SortedAccumulator",
    "Updater",
    "new_value",
    "snapshot",
    "total",
    "updater",
]

Expression: TypeAlias = str | ir.Node | Callable[[Event, Mapping[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class MapCounter:
    """Counts events by key (Prova's ``MapCounter``); snapshot ``{key: count}``.

    ``key`` is an expression over ``e`` and the bound variables (string or ``f(e, env)``).
    """

    key: Expression

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", as_tree(self.key, "MapCounter key"))


@dataclass(frozen=True, slots=True)
class SortedAccumulator:
    """Keeps values by key (Prova's ``SortedAccumulator``); snapshot ``{key: [values in arrival order]}``.

    With ``top`` set the snapshot keeps only each key's ``top`` highest values, highest first
    (``highest(n)``).
    """

    key: Expression
    value: Expression
    top: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", as_tree(self.key, "SortedAccumulator key"))
        object.__setattr__(self, "value", as_tree(self.value, "SortedAccumulator value"))


Accumulator: TypeAlias = MapCounter | SortedAccumulator


Updater: TypeAlias = Callable[[dict[Any, Any], Event, Mapping[str, Any]], None]
"""``updater(value, event, env)``: adds one event to an accumulator's running value."""


def updater(spec: Accumulator, faults: FaultSink | None = None) -> Updater:
    """Compile the accumulator's expressions once; an expression that fails on an event reports to
    ``faults`` and counts as NULL (without ``faults`` it raises). Unknown functions fail here, at
    definition time."""
    from workbench.engine.reactions.conditions import compile_condition

    key = compile_condition(spec.key, f"{type(spec).__name__} key", faults)
    if isinstance(spec, MapCounter):

        def count(value: dict[Any, Any], event: Event, env: Mapping[str, Any]) -> None:
            k = key(event, env)
            value[k] = value.get(k, 0) + 1

        return count
    item = compile_condition(spec.value, f"{type(spec).__name__} value", faults)

    def collect(value: dict[Any, Any], event: Event, env: Mapping[str, Any]) -> None:
        value.setdefault(key(event, env), []).append(item(event, env))

    return collect


def new_value(spec: Accumulator) -> dict[Any, Any]:
    """A fresh, empty running value."""
    return {}


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
