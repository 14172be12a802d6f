"""Window accumulators for ``@size(n, r, acc)`` and ``@timer(delay, period, acc)`` channels.

An accumulator *spec* is a frozen dataclass (part of the pattern). :func:`compile_window` turns it
into a :class:`Window`: its expressions compiled once, and the engine aggregate
(:mod:`workbench.engine.aggregates`) that holds its running value in the channel state. Prova's
``MapCounter`` is a :class:`~workbench.engine.aggregates.CountBy` over the key, its
``SortedAccumulator`` a :class:`~workbench.engine.aggregates.GroupBy` of ``collect`` (or of
``top_n`` for ``highest(n)``). A window's result is the aggregate's ``get()``.

>>> from workbench.engine.events import Event
>>> window = compile_window(MapCounter("e.i % 2"))
>>> acc = window.new()
>>> for i in range(3):
...     acc.update(window.item(Event("a", i, None, {"i": i}), {}))
>>> acc.get()
{0: 2, 1: 1}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from workbench.engine.aggregates import Aggregate, CountBy, GroupBy
from workbench.engine.events import Event
from workbench.engine.expr import as_tree, ir
from workbench.engine.faults import FaultSink
from workbench.engine.reactions.conditions import compile_condition
from workbench.errors import EventError

__all__ = ["Accumulator", "MapCounter", "SortedAccumulator", "Window", "accumulate", "compile_window"]

#: An accumulator expression: text, an IR tree or ``f(e, env)``.
Expression: TypeAlias = str | ir.Node | Callable[[Event, Mapping[str, object]], object]


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


@dataclass(frozen=True, slots=True)
class Window:
    """A compiled accumulator: a window's running value is ``new()``, and each event of the window
    adds ``item(event, env)`` to it (``acc.update(...)``); ``acc.get()`` is the window's result."""

    spec: Accumulator
    item: Callable[[Event, Mapping[str, object]], object]
    #: a fresh, empty running value (copies an aggregate that is never updated)
    new: Callable[[], Aggregate]


def compile_window(spec: Accumulator, faults: FaultSink | None = None) -> Window:
    """Compile the accumulator's expressions once; an expression that fails on an event reports to
    ``faults`` and counts as NULL (without ``faults`` it raises). Unknown functions fail here, at
    definition time."""
    key = compile_condition(spec.key, f"{type(spec).__name__} key", faults)
    if isinstance(spec, MapCounter):
        return Window(spec, key, CountBy)
    value = compile_condition(spec.value, f"{type(spec).__name__} value", faults)

    def item(event: Event, env: Mapping[str, object]) -> tuple[object, object]:
        return key(event, env), value(event, env)

    # Prova's SortedAccumulator keeps every value, NULLs included; highest(n) keeps the n largest.
    empty = GroupBy("collect", keep_nulls=True) if spec.top is None else GroupBy("top_n", n=spec.top)
    return Window(spec, item, empty.copy)


def accumulate(acc: Aggregate, window: Window, event: Event, env: Mapping[str, object], channel: str) -> None:
    """Add ``event`` to the window ``acc`` of ``channel``; an :class:`EventError` names the event
    whose value the accumulator cannot take (a list as a ``MapCounter`` key, ...)."""
    item = window.item(event, env)
    try:
        acc.update(item)
    except (TypeError, ValueError, ArithmeticError) as err:  # why: unhashable or incomparable values
        what = type(window.spec).__name__
        msg = f"channel {channel!r}: {what} cannot take {item!r} of this {event.type!r} event: {err}"
        raise EventError(msg, position=event.seq) from None
