"""Aggregates over the order of values: min and max (by value), first and last (by arrival)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Self

from workbench.engine.aggregates.base import AggregateBase, Ordered, RevertMode, check_mode, no_revert
from workbench.errors import CepError

__all__ = ["First", "Last", "Max", "Min"]


class _Extreme(AggregateBase):
    """Min or max, with the three revert modes described in the module docstring."""

    __slots__ = ("_best", "_counts", "_n", "_popped", "_pushed", "_window", "mode")
    _name = "extreme"

    def __init__(self, revert: RevertMode = "none") -> None:
        check_mode(revert, self._name)
        self.mode: str = revert
        self._best: Ordered | None = None  # None exactly when no value is held
        self._n = 0  # non-null values held (mode "none": ever added)
        self._window: deque[tuple[int, Ordered]] | None = deque() if revert == "fifo" else None
        self._pushed = 0
        self._popped = 0
        self._counts: dict[Ordered, int] | None = {} if revert == "any" else None

    @property
    def revertible(self) -> bool:
        return self.mode != "none"

    def _better(self, a: Ordered, b: Ordered) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def update(self, x: Ordered | None) -> None:
        if x is None:
            return
        self._n += 1
        window = self._window
        if window is not None:
            better = self._better
            while window and better(x, window[-1][1]):
                window.pop()
            window.append((self._pushed, x))
            self._pushed += 1
            self._best = window[0][1]
            return
        if self._counts is not None:
            self._counts[x] = self._counts.get(x, 0) + 1
        best = self._best
        if best is None or self._better(x, best):  # the first value, or a better one
            self._best = x

    def revert(self, x: Ordered | None) -> None:
        if x is None:
            return
        if self.mode == "none":
            raise no_revert(self._name)
        if self._n == 0:
            msg = f"{self._name}: revert without a matching update"
            raise CepError(msg)
        window = self._window
        if window is not None:
            index = self._popped
            if window and window[0][0] == index:
                if window[0][1] != x:
                    oldest = window[0][1]
                    msg = f"{self._name}(revert='fifo'): reverted {x!r} but the oldest value is {oldest!r}"
                    raise CepError(msg)
                window.popleft()
            elif not window or not self._better(window[0][1], x):
                msg = f"{self._name}(revert='fifo'): revert of {x!r} is not in update order"
                raise CepError(msg)
            self._popped += 1
            self._n -= 1
            self._best = window[0][1] if window else None
            return
        counts = self._counts
        assert counts is not None
        have = counts.get(x, 0)
        if have == 0:
            msg = f"{self._name}(revert='any'): {x!r} was never added (or already reverted)"
            raise CepError(msg)
        self._n -= 1
        if have > 1:
            counts[x] = have - 1
            return
        del counts[x]
        if x == self._best:
            self._best = self._pick(counts) if counts else None

    def _pick(self, values: Iterable[Ordered]) -> Ordered:  # pragma: no cover - overridden
        raise NotImplementedError

    def get(self) -> Ordered | None:
        return self._best if self._n else None

    def get_with(self, x: Ordered | None) -> Ordered | None:
        if x is None:
            return self.get()
        best = self._best
        if best is None or self._better(x, best):
            return x
        return best

    def copy(self) -> Self:
        c = type(self).__new__(type(self))
        c.mode, c._best, c._n, c._pushed, c._popped = (
            self.mode,
            self._best,
            self._n,
            self._pushed,
            self._popped,
        )
        c._window = None if self._window is None else deque(self._window)
        c._counts = None if self._counts is None else dict(self._counts)
        return c


class Min(_Extreme):
    """Smallest non-null value; ``None`` when there is none.

    >>> m = Min(revert="fifo"); m.update(3); m.update(1); m.update(2); m.revert(3); m.revert(1); m.get()
    2
    """

    __slots__ = ()
    _name = "min"

    def _better(self, a: Ordered, b: Ordered) -> bool:
        return bool(a < b)

    def _pick(self, values: Iterable[Ordered]) -> Ordered:
        return min(values)


class Max(_Extreme):
    """Largest non-null value; ``None`` when there is none.

    >>> m = Max(revert="any"); m.update(3); m.update(5); m.revert(5); m.get()
    3
    """

    __slots__ = ()
    _name = "max"

    def _better(self, a: Ordered, b: Ordered) -> bool:
        return bool(a > b)

    def _pick(self, values: Iterable[Ordered]) -> Ordered:
        return max(values)


class _Navigation(AggregateBase):
    """First or last value (``None`` values included); ``revert`` in ``"fifo"`` mode only.

    >>> f, g = First(), Last(); f.update("a"); f.update("b"); g.update("a"); g.update("b")
    >>> f.get(), g.get(), f.get_with("c"), g.get_with("c"), First().get_with("c")
    ('a', 'b', 'a', 'c', 'c')
    """

    __slots__ = ("_first", "_last", "_n", "_window", "mode")
    _name = "navigation"
    #: ``First`` (else ``Last``)
    _keeps_first = True

    def __init__(self, revert: RevertMode = "none") -> None:
        check_mode(revert, self._name, ("none", "fifo"))
        self.mode: str = revert
        self._first: object = None
        self._last: object = None
        self._n = 0
        self._window: deque[object] | None = deque() if revert == "fifo" else None

    @property
    def revertible(self) -> bool:
        return self.mode != "none"

    def update(self, x: object) -> None:
        if self._n == 0:
            self._first = x
        self._last = x
        self._n += 1
        if self._window is not None:
            self._window.append(x)

    def revert(self, x: object) -> None:
        window = self._window
        if window is None:
            raise no_revert(self._name)
        if not window:
            msg = f"{self._name}: revert without a matching update"
            raise CepError(msg)
        if window[0] != x:
            msg = f"{self._name}(revert='fifo'): reverted {x!r} but the oldest value is {window[0]!r}"
            raise CepError(msg)
        window.popleft()
        self._n -= 1
        self._first = window[0] if window else None
        if not window:
            self._last = None

    def get(self) -> object:
        return self._first if self._keeps_first else self._last

    def get_with(self, x: object) -> object:
        """The value as if ``x`` were added."""
        return self._first if self._keeps_first and self._n else x

    def copy(self) -> Self:
        c = type(self).__new__(type(self))
        c.mode, c._first, c._last, c._n = self.mode, self._first, self._last, self._n
        c._window = None if self._window is None else deque(self._window)
        return c


class First(_Navigation):
    """The first value added (SQL ``FIRST``, MatchRegex ``First``)."""

    __slots__ = ()
    _name = "first"
    _keeps_first = True


class Last(_Navigation):
    """The last value added (SQL ``LAST``, MatchRegex ``Last``)."""

    __slots__ = ()
    _name = "last"
    _keeps_first = False
