"""Aggregates by name: the built-ins and user-registered ones, and :class:`GroupBy` (one per key)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, cast

from workbench.engine.aggregates.base import Aggregate, AggregateBase
from workbench.engine.aggregates.holistic import Collect, CountBy, TopN
from workbench.engine.aggregates.ordered import First, Last, Max, Min
from workbench.engine.aggregates.rolling import Rolling, TimeRolling
from workbench.engine.aggregates.scalar import Avg, Count, Std, Sum, Var
from workbench.errors import CepError, PatternError

__all__ = ["GroupBy", "aggregate_names", "make_aggregate", "register_aggregate"]


class GroupBy(AggregateBase):
    """One aggregate per key: ``update((key, value))``; ``get()`` is ``{key: result}``.

    The per-key aggregates are built with :func:`make_aggregate` from a registered name and
    parameters, so the state stays picklable. Prova's ``SortedAccumulator`` is
    ``GroupBy("collect")``.

    >>> g = GroupBy("sum")
    >>> for kv in [("a", 1), ("b", 2), ("a", 3)]: g.update(kv)
    >>> g.get()
    {'a': 4, 'b': 2}
    """

    __slots__ = ("groups", "name", "params")

    def __init__(self, name: str, **params: Any) -> None:  # make_aggregate checks the parameters
        make_aggregate(name, **params)  # validate now, not at the first event
        self.name = name
        self.params = params
        self.groups: dict[Hashable, Aggregate] = {}

    def update(self, x: tuple[Hashable, object]) -> None:
        key, value = x
        agg = self.groups.get(key)
        if agg is None:
            agg = self.groups[key] = make_aggregate(self.name, **self.params)
        agg.update(value)

    def revert(self, x: tuple[Hashable, object]) -> None:
        key, value = x
        agg = self.groups.get(key)
        if agg is None:
            msg = f"group_by: key {key!r} has no values to revert"
            raise CepError(msg)
        agg.revert(value)

    def get(self) -> dict[Hashable, object]:
        return {k: a.get() for k, a in self.groups.items()}

    def copy(self) -> GroupBy:
        c = GroupBy.__new__(GroupBy)
        c.name, c.params = self.name, self.params  # the parameters are never changed
        c.groups = {k: a.copy() for k, a in self.groups.items()} if self.groups else {}
        return c


AggregateFactory = Callable[..., Aggregate]

_REGISTRY: dict[str, AggregateFactory] = {
    "count": Count,
    "sum": Sum,
    "avg": Avg,
    "mean": Avg,
    "min": Min,
    "max": Max,
    "first": First,
    "last": Last,
    "var": Var,
    "variance": Var,
    "std": Std,
    "stddev": Std,
    "collect": Collect,
    "count_by": CountBy,
    "top_n": TopN,
    "group_by": GroupBy,
}
_BUILTIN = frozenset(_REGISTRY)
_FIFO_CAPABLE = frozenset({"min", "max", "first", "last"})


def register_aggregate(name: str, factory: object, /, *, replace: bool = False) -> None:
    """Make ``factory(**params)`` available as ``make_aggregate(name, **params)``.

    Built-in names cannot be replaced; a user name can be re-registered with ``replace=True``
    (notebook cells are re-run).

    >>> register_aggregate("sum_doc", Sum)
    >>> make_aggregate("sum_doc").get()
    0
    """
    if not str(name).isidentifier():
        msg = f"aggregate name must be an identifier, got {name!r}"
        raise PatternError(msg)
    if not callable(factory):
        msg = f"aggregate {name!r}: factory must be callable, got {factory!r}"
        raise PatternError(msg, element=name)
    if name in _BUILTIN:
        msg = f"aggregate {name!r} is built in and cannot be replaced"
        raise PatternError(msg, element=name)
    if name in _REGISTRY and not replace and _REGISTRY[name] is not factory:
        msg = f"aggregate {name!r} is already registered; pass replace=True to redefine it"
        raise PatternError(msg, element=name)
    _REGISTRY[name] = cast("AggregateFactory", factory)


def aggregate_names() -> list[str]:
    """The registered aggregate names, sorted.

    >>> "avg" in aggregate_names()
    True
    """
    return sorted(_REGISTRY)


def make_aggregate(
    name: str, /, *, window: int | None = None, period: int | float | None = None, **params: object
) -> Aggregate:
    """A fresh aggregate by registered name.

    ``window=n`` wraps it in :class:`Rolling`, ``period=ms`` in :class:`TimeRolling`; for ``min``,
    ``max``, ``first`` and ``last`` the revert mode then defaults to ``"fifo"``.

    >>> make_aggregate("max", window=2).get() is None
    True
    """
    factory = _REGISTRY.get(name)
    if factory is None:
        msg = f"unknown aggregate {name!r}; known: {', '.join(aggregate_names())}"
        raise PatternError(msg, element=name)
    if window is not None and period is not None:
        msg = f"aggregate {name!r}: give window= (count) or period= (time), not both"
        raise PatternError(msg, element=name)
    if (window is not None or period is not None) and name in _FIFO_CAPABLE:
        params.setdefault("revert", "fifo")
    try:
        agg = factory(**params)
    except TypeError as err:
        msg = f"aggregate {name!r}: bad parameters {params!r}: {err}"
        raise PatternError(msg, element=name) from None
    if window is not None:
        return Rolling(agg, window)
    if period is not None:
        return TimeRolling(agg, period)
    return agg
