"""The aggregate protocol, what an aggregate reads from an event, and the helpers every built-in shares."""

from __future__ import annotations

from typing import Any, Literal, Protocol, Self, runtime_checkable

from workbench.engine.events import Event
from workbench.engine.expr import clean
from workbench.errors import CepError, PatternError

__all__ = [
    "Aggregate",
    "AggregateBase",
    "Ordered",
    "RevertMode",
    "check_mode",
    "input_of",
    "no_revert",
    "positive",
    "value_with",
]

RevertMode = Literal["none", "fifo", "any"]
_MODES = ("none", "fifo", "any")


@runtime_checkable
class Aggregate(Protocol):
    """The protocol every aggregate implements (built-in or user-defined).

    The values are whatever the events carry, so the protocol takes ``Any`` value: each aggregate
    declares what it can add (numbers for ``sum``, orderable values for ``max``, ...).
    """

    def update(self, x: Any) -> None:
        """Add one value."""
        ...

    def revert(self, x: Any) -> None:
        """Remove a value that an earlier :meth:`update` added."""
        ...

    def get(self) -> object:
        """The current result."""
        ...

    def copy(self) -> Self:
        """An independent copy of the state."""
        ...


class Ordered(Protocol):
    """A value ``min``, ``max`` and ``top_n`` can order: numbers, strings, dates, ..."""

    def __lt__(self, other: Self, /) -> bool: ...

    def __gt__(self, other: Self, /) -> bool: ...


def input_of(event: Event, field: str | None) -> object:
    """What an aggregate over ``field`` (``None``: the events themselves) takes from ``event``.

    >>> from workbench.engine.events import Event
    >>> input_of(Event("a", 1, None, {"p": float("nan")}), "p") is None, input_of(Event("a", 1), "q")
    (True, None)
    """
    return event if field is None else clean(event.fields.get(field))


def value_with(agg: Aggregate, x: object) -> object:
    """The aggregate's result as if ``x`` were added, leaving ``agg`` unchanged.

    Uses ``agg.get_with(x)`` when the aggregate has it (all built-ins: O(1)), else copies.

    >>> from workbench.engine.aggregates import Sum
    >>> s = Sum(); s.update(2)
    >>> value_with(s, 3), s.get()
    (5, 2)
    """
    get_with = getattr(agg, "get_with", None)
    if get_with is not None:
        return get_with(x)
    probe = agg.copy()
    probe.update(x)
    return probe.get()


def check_mode(revert: str, name: str, allowed: tuple[str, ...] = _MODES) -> None:
    if revert not in allowed:
        msg = f"{name}: revert must be one of {list(allowed)}, got {revert!r}"
        raise PatternError(msg, element=name)


def positive(value: object, what: str, element: str, *, integer: bool) -> None:
    kinds = (int,) if integer else (int, float)
    ok = isinstance(value, kinds) and not isinstance(value, bool) and value > 0
    if not ok:
        kind = "a positive integer" if integer else "a positive number"
        msg = f"{element}: {what} must be {kind}, got {value!r}"
        raise PatternError(msg, element=element)


def no_revert(name: str) -> CepError:
    msg = (
        f"{name}(revert='none') cannot revert a value; create it with revert='fifo' (sliding windows) "
        f"or revert='any' (any order), e.g. make_aggregate({name!r}, revert='fifo')"
    )
    return CepError(msg)


class AggregateBase:
    """Shared helpers: a readable repr and state equality over the slots."""

    __slots__ = ()

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, s) for c in type(self).__mro__ for s in getattr(c, "__slots__", ()))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, AggregateBase)
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable state

    def __repr__(self) -> str:
        return f"{type(self).__name__}(get={self.get()!r})"

    def get(self) -> object:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def revertible(self) -> bool:
        """Whether :meth:`revert` is supported in this configuration."""
        return True
